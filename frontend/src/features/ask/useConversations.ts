/** The conversation on screen and the saved list, kept in localStorage through ConversationStore. */
import { useCallback, useMemo, useRef, useState } from "react";
import { type Conversation, newConversation, settle } from "@/features/ask/conversation";
import { type ConversationMeta, ConversationStore } from "@/features/ask/storage";

export function useConversations(onEvicted: (count: number) => void, onError: (message: string) => void) {
  const store = useMemo(() => new ConversationStore(window.localStorage), []);
  const [list, setList] = useState<ConversationMeta[]>(() => store.list());
  const [current, setCurrent] = useState<Conversation>(() => {
    const latest = store.list()[0];
    const loaded = latest && store.load(latest.id);
    return loaded ? settle(loaded) : newConversation();
  });
  const currentRef = useRef(current);
  currentRef.current = current;

  const persist = useCallback(
    (conversation: Conversation) => {
      if (conversation.turns.length === 0) return;
      try {
        const evicted = store.save(conversation);
        if (evicted.length) onEvicted(evicted.length);
      } catch (error) {
        onError((error as Error).message);
      }
      setList(store.list());
    },
    [store, onEvicted, onError],
  );

  /** Replace the conversation on screen; `save` writes it to storage too. */
  const update = useCallback(
    (next: Conversation | ((c: Conversation) => Conversation), save = false) => {
      const value = typeof next === "function" ? next(currentRef.current) : next;
      currentRef.current = value;
      setCurrent(value);
      if (save) persist(value);
    },
    [persist],
  );

  const open = useCallback(
    (id: string) => {
      const loaded = store.load(id);
      if (loaded) update(settle(loaded));
      else onError("that conversation is no longer stored");
    },
    [store, update, onError],
  );

  const startNew = useCallback(() => update(newConversation()), [update]);

  const rename = useCallback(
    (id: string, title: string) => {
      store.rename(id, title);
      setList(store.list());
      if (currentRef.current.id === id) update({ ...currentRef.current, title: title.trim() || currentRef.current.title });
    },
    [store, update],
  );

  const remove = useCallback(
    (id: string) => {
      store.remove(id);
      setList(store.list());
      if (currentRef.current.id === id) update(newConversation());
    },
    [store, update],
  );

  return { list, current, update, open, startNew, rename, remove, persist };
}
