/**
 * The ask session, one per page: the conversation on screen, its answer stream, and the passage open
 * in the viewer. The shell owns it (the sidebar, the sources and the commands outlive the Ask page,
 * and an answer keeps streaming while the Index Lab is shown); pages read it with useAskSession.
 */
import { createContext, useCallback, useContext, useMemo, useRef, useState } from "react";
import type { Passage } from "@/api/types";
import { type WorkspaceState, workspaceState } from "@/api/workspace";
import { useToast } from "@/components/ui/toast";
import { applyEvent, buildRequest, startTurn, stopLast, toMarkdown } from "./conversation";
import type { PassageFocus } from "./evidence";
import { citedLabels } from "./parseMarkdown";
import { useAgentStream } from "./useAgentStream";
import { useConversations } from "./useConversations";

export interface OpenPassage {
  passage: Passage;
  focus?: PassageFocus;
}

/** `workspace.refresh` runs after every answer, finished or not: each question counts against the workspace. */
export function useAsk(workspace: WorkspaceState & { refresh: () => void }) {
  const toast = useToast();
  const conv = useConversations(
    useCallback((n: number) => toast("info", `Removed the ${n} oldest conversation${n > 1 ? "s" : ""} to make room`), [toast]),
    useCallback((m: string) => toast("error", "Could not save the conversation", m), [toast]),
  );
  const { current } = conv;
  const stream = useAgentStream();
  const inputRef = useRef<HTMLTextAreaElement>(null);
  const [open, setOpen] = useState<OpenPassage | null>(null);
  const openPassage = useCallback((passage: Passage, focus?: PassageFocus) => setOpen({ passage, focus }), []);
  const closePassage = useCallback(() => setOpen(null), []);
  const { refresh: refreshWorkspace } = workspace;

  const ask = useCallback(
    async (question: string) => {
      if (stream.streaming) return;
      const id = conv.current.id;
      const request = buildRequest(conv.current, question);
      conv.update((c) => startTurn(c, question), true);
      const outcome = await stream.ask(request, (event) => {
        conv.update((c) => {
          if (c.id !== id) return c;
          const next = applyEvent(c, event);
          return event.event === "sources" ? { ...next, workspace: workspaceState().held?.id } : next;
        }, event.event === "done");
        if (event.event === "error") toast("error", "The answer failed", event.message);
      });
      if (outcome === "stopped") conv.update((c) => (c.id === id ? stopLast(c) : c), true);
      refreshWorkspace();
      inputRef.current?.focus();
    },
    [stream, conv, toast, refreshWorkspace],
  );

  const retry = useCallback(() => {
    const last = conv.current.turns[conv.current.turns.length - 1];
    if (!last) return;
    conv.update((c) => ({ ...c, turns: c.turns.slice(0, -1) }));
    void ask(last.question);
  }, [conv, ask]);

  const exportMarkdown = useCallback(() => {
    if (current.turns.length === 0) {
      toast("info", "Nothing to export yet", "Ask a question first.");
      return;
    }
    const blob = new Blob([toMarkdown(current)], { type: "text/markdown" });
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = `sextant-${
      current.title
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, "-")
        .replace(/^-|-$/g, "") || "conversation"
    }.md`;
    a.click();
    URL.revokeObjectURL(a.href);
  }, [current, toast]);

  /** The conversation cites passages from a workspace this browser no longer holds. */
  const sourcesGone = workspace.on === true && current.workspace !== undefined && current.workspace !== workspace.held?.id;
  const cited = useMemo(() => new Set(current.turns.flatMap((t) => citedLabels(t.text))), [current.turns]);

  return { conv, current, stream, inputRef, ask, retry, exportMarkdown, open, openPassage, closePassage, sourcesGone, cited };
}

export type AskSession = ReturnType<typeof useAsk>;

export const AskContext = createContext<AskSession | null>(null);

export function useAskSession(): AskSession {
  const session = useContext(AskContext);
  if (!session) throw new Error("useAskSession needs an AskContext above it (the shell provides one)");
  return session;
}
