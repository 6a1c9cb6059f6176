/** The workspace as the page shows it: whether the agent uses them, the one held, and its questions asked so far. */
import { useCallback, useEffect, useState, useSyncExternalStore } from "react";
import { getWorkspace } from "@/api/client";
import { subscribe, workspaceState } from "@/api/workspace";

export function useWorkspace() {
  const state = useSyncExternalStore(subscribe, workspaceState);
  const [asked, setAsked] = useState<number | null>(null);
  const refresh = useCallback(() => {
    if (!workspaceState().held) return;
    getWorkspace()
      .then((info) => setAsked(info.questions_asked))
      .catch(() => setAsked(null));
  }, []);
  const id = state.held?.id;
  useEffect(() => {
    setAsked(null);
    refresh();
  }, [refresh, id]);
  return { ...state, asked, refresh };
}
