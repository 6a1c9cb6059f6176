/** The workspace as the page shows it: whether the agent uses them, the one held, and its questions asked so far. */
import { useCallback, useEffect, useState, useSyncExternalStore } from "react";
import { deleteWorkspace, getWorkspace } from "@/api/client";
import { forget, subscribe, type Workspace, workspaceState } from "@/api/workspace";
import { useToast } from "@/components/ui/toast";

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
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new workspace (id) is what asks for its count again
  useEffect(() => {
    setAsked(null);
    refresh();
  }, [refresh, id]);
  return { ...state, asked, refresh };
}

/** Delete the held workspace once the reader confirms, saying how many documents go with it; then `onDeleted`. */
export function useDeleteWorkspace(held: Workspace | null, documents: number, onDeleted: () => void) {
  const toast = useToast();
  return useCallback(async () => {
    if (!held) {
      toast("info", "No workspace to delete", "One is created with your first question or upload.");
      return;
    }
    if (!window.confirm(`Delete this workspace and its ${documents} document${documents === 1 ? "" : "s"}? This cannot be undone.`)) return;
    try {
      const { status } = await deleteWorkspace();
      forget();
      onDeleted();
      toast(
        "success",
        "Workspace deleted",
        status === "deleting" ? "Its documents go as soon as the answer running in it ends." : undefined,
      );
    } catch (error) {
      toast("error", "Could not delete the workspace", (error as Error).message);
    }
  }, [held, documents, toast, onDeleted]);
}
