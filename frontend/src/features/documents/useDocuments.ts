/**
 * The documents session, one per page: what the knowledge base holds, uploads into it and the sample
 * corpus. The shell owns it (the header's Upload button and the drop overlay are on every page);
 * pages read it with useDocumentsSession.
 */
import { createContext, useCallback, useContext, useEffect, useRef, useState } from "react";
import { getDocuments } from "@/api/client";
import type { DocumentEntry } from "@/api/types";
import { ensureWorkspace, type Workspace } from "@/api/workspace";
import { useToast } from "@/components/ui/toast";
import { type FileResult, useUpload } from "./Upload";

export function useDocuments(held: Workspace | null) {
  const toast = useToast();
  const [documents, setDocuments] = useState<DocumentEntry[] | null>(null);
  const [loadingSample, setLoadingSample] = useState(false);
  const fileRef = useRef<HTMLInputElement>(null);
  const pickFiles = useCallback(() => fileRef.current?.click(), []);

  const refresh = useCallback(() => {
    getDocuments()
      .then(setDocuments)
      .catch(() => setDocuments((d) => d ?? []));
  }, []);
  // A workspace created, lost or deleted changes which documents there are.
  const heldId = held?.id;
  // biome-ignore lint/correctness/useExhaustiveDependencies: heldId is the trigger, not an input
  useEffect(refresh, [refresh, heldId]);

  const onUploaded = useCallback(
    (results: FileResult[]) => {
      const ok = results.filter((r) => r.status !== "refused").length;
      const refused = results.length - ok;
      toast(refused ? "error" : "success", `${ok} file${ok === 1 ? "" : "s"} added${refused ? `, ${refused} refused` : ""}`);
      refresh();
    },
    [toast, refresh],
  );
  const uploads = useUpload(onUploaded);

  /** How many more documents may be added: a workspace's limit less what it holds; no limit without workspaces. */
  const roomForDocuments = useCallback(async () => {
    const workspace = await ensureWorkspace();
    return workspace ? Math.max(0, workspace.limits.documents - (documents?.length ?? 0)) : Number.POSITIVE_INFINITY;
  }, [documents]);

  const loadSample = useCallback(async () => {
    setLoadingSample(true);
    try {
      let names = (await (await fetch("/sample/index.json")).json()) as string[];
      const room = await roomForDocuments();
      if (room === 0) {
        toast("error", "This workspace is full", "Delete it (command palette) to start an empty one.");
        return;
      }
      if (room < names.length) {
        names = names.slice(0, room);
        toast("info", `Loading ${room} of the sample documents`, "That is all this workspace has room for.");
      }
      const files = await Promise.all(
        names.map(async (name) => new File([await (await fetch(`/sample/${encodeURIComponent(name)}`)).blob()], name)),
      );
      await uploads.upload(files);
    } catch (error) {
      toast("error", "Could not load the sample corpus", (error as Error).message);
    } finally {
      setLoadingSample(false);
    }
  }, [uploads, toast, roomForDocuments]);

  return { documents, uploads, loadSample, loadingSample, fileRef, pickFiles };
}

export type DocumentsSession = ReturnType<typeof useDocuments>;

export const DocumentsContext = createContext<DocumentsSession | null>(null);

export function useDocumentsSession(): DocumentsSession {
  const session = useContext(DocumentsContext);
  if (!session) throw new Error("useDocumentsSession needs a DocumentsContext above it (the shell provides one)");
  return session;
}
