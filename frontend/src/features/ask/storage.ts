/**
 * Conversations in localStorage: one key per conversation plus an index, at most 30; when the
 * browser's quota complains the oldest conversation is evicted and the write retried.
 */
import type { Conversation } from "./conversation";

export const MAX_CONVERSATIONS = 30;
const INDEX_KEY = "sextant.conversations.v1";
const PREFIX = "sextant.conversation.v1.";

export interface ConversationMeta {
  id: string;
  title: string;
  updatedAt: number;
  turns: number;
}

export type KeyValue = Pick<Storage, "getItem" | "setItem" | "removeItem">;

export class StorageFull extends Error {
  constructor() {
    super("browser storage is full even with older conversations removed");
    this.name = "StorageFull";
  }
}

export function isQuotaError(error: unknown): boolean {
  if (!(error instanceof Error) && !(typeof error === "object" && error !== null)) return false;
  const e = error as { name?: string; code?: number };
  return e.name === "QuotaExceededError" || e.name === "NS_ERROR_DOM_QUOTA_REACHED" || e.code === 22 || e.code === 1014;
}

export class ConversationStore {
  constructor(private readonly kv: KeyValue) {}

  list(): ConversationMeta[] {
    try {
      const raw = this.kv.getItem(INDEX_KEY);
      const index = raw ? (JSON.parse(raw) as ConversationMeta[]) : [];
      return Array.isArray(index) ? [...index].sort((a, b) => b.updatedAt - a.updatedAt) : [];
    } catch {
      return [];
    }
  }

  load(id: string): Conversation | null {
    try {
      const raw = this.kv.getItem(PREFIX + id);
      return raw ? (JSON.parse(raw) as Conversation) : null;
    } catch {
      return null;
    }
  }

  /** Save (insert or replace); returns the ids evicted to make room, oldest first. */
  save(conversation: Conversation): string[] {
    const evicted: string[] = [];
    const meta: ConversationMeta = {
      id: conversation.id,
      title: conversation.title,
      updatedAt: conversation.updatedAt,
      turns: conversation.turns.length,
    };
    let index = [meta, ...this.list().filter((m) => m.id !== conversation.id)];
    while (index.length > MAX_CONVERSATIONS) {
      const oldest = this.oldestOther(index, conversation.id);
      if (!oldest) break;
      index = this.evict(index, oldest, evicted);
    }
    const body = JSON.stringify(conversation);
    for (;;) {
      try {
        this.kv.setItem(PREFIX + conversation.id, body);
        this.kv.setItem(INDEX_KEY, JSON.stringify(index));
        return evicted;
      } catch (error) {
        if (!isQuotaError(error)) throw error;
        const oldest = this.oldestOther(index, conversation.id);
        if (!oldest) throw new StorageFull();
        index = this.evict(index, oldest, evicted);
      }
    }
  }

  rename(id: string, title: string): void {
    const conversation = this.load(id);
    if (!conversation) return;
    this.save({ ...conversation, title: title.trim() || conversation.title });
  }

  remove(id: string): void {
    this.kv.removeItem(PREFIX + id);
    this.kv.setItem(INDEX_KEY, JSON.stringify(this.list().filter((m) => m.id !== id)));
  }

  private oldestOther(index: ConversationMeta[], keep: string): string | null {
    const others = index.filter((m) => m.id !== keep).sort((a, b) => a.updatedAt - b.updatedAt);
    return others[0]?.id ?? null;
  }

  private evict(index: ConversationMeta[], id: string, evicted: string[]): ConversationMeta[] {
    this.kv.removeItem(PREFIX + id);
    evicted.push(id);
    return index.filter((m) => m.id !== id);
  }
}

export const FIRST_RUN_KEY = "sextant.onboarded.v1";
