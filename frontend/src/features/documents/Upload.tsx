/** Files into the knowledge base: drag anywhere on the page or pick them; progress, then one line per file. */
import { CheckCircle2, CircleMinus, FileUp, RefreshCw, XCircle } from "lucide-react";
import { type RefObject, useCallback, useEffect, useState } from "react";
import { uploadFiles } from "@/api/client";
import type { IngestResult } from "@/api/types";
import { Badge } from "@/components/ui/badge";
import { Dialog } from "@/components/ui/dialog";
import { isReadable, READABLE_SUFFIXES } from "@/features/documents/fileTypes";

const ACCEPT = READABLE_SUFFIXES.join(",");
export const UNSUPPORTED = `unsupported type: the knowledge base reads ${READABLE_SUFFIXES.join(" ")}`;
const MAX_BYTES = 10 * 1024 * 1024;
const PER_REQUEST = 20;

/** What the page shows per file: the server's result, or a refusal made here before sending. */
export type FileResult = Pick<IngestResult, "id" | "name" | "status" | "reason" | "chunks">;

export interface UploadRun {
  names: string[];
  progress: number;
  results: FileResult[];
  state: "uploading" | "done" | "failed";
  error?: string;
}

/** Refuse locally what the server would refuse anyway (type, size), and upload the rest in batches. */
export function useUpload(onFinished: (results: FileResult[]) => void) {
  const [run, setRun] = useState<UploadRun | null>(null);
  const upload = useCallback(
    async (files: File[]) => {
      const local: FileResult[] = [];
      const sendable: File[] = [];
      for (const file of files) {
        if (!isReadable(file.name)) local.push({ id: file.name, name: file.name, status: "refused", reason: UNSUPPORTED });
        else if (file.size > MAX_BYTES)
          local.push({ id: file.name, name: file.name, status: "refused", reason: "larger than the 10 MB limit" });
        else sendable.push(file);
      }
      const results = [...local];
      setRun({ names: files.map((f) => f.name), progress: 0, results, state: "uploading" });
      try {
        for (let i = 0; i < sendable.length; i += PER_REQUEST) {
          const batch = sendable.slice(i, i + PER_REQUEST);
          const done = i / Math.max(sendable.length, 1);
          const share = batch.length / sendable.length;
          const response = await uploadFiles(batch, (f) =>
            setRun((r) => (r ? { ...r, progress: Math.min(0.99, done + share * f * 0.9) } : r)),
          );
          results.push(...response.results);
          setRun((r) => (r ? { ...r, results: [...results] } : r));
        }
        setRun((r) => (r ? { ...r, progress: 1, state: "done" } : r));
        onFinished(results);
      } catch (error) {
        setRun((r) => (r ? { ...r, state: "failed", error: (error as Error).message } : r));
      }
    },
    [onFinished],
  );
  return { run, upload, clear: () => setRun(null) };
}

const STATUS = {
  added: { icon: CheckCircle2, variant: "success", text: "added" },
  replaced: { icon: RefreshCw, variant: "success", text: "replaced" },
  unchanged: { icon: CircleMinus, variant: "secondary", text: "unchanged" },
  refused: { icon: XCircle, variant: "destructive", text: "refused" },
} as const;

export function UploadDialog({ run, onClose }: { run: UploadRun | null; onClose: () => void }) {
  const pct = Math.round((run?.progress ?? 0) * 100);
  return (
    <Dialog
      open={run !== null}
      onClose={onClose}
      title={run?.state === "uploading" ? "Adding files…" : "Files added to the knowledge base"}
      description="Parsed on the server, page numbers kept."
    >
      {run && (
        <div className="space-y-3" data-testid="upload-dialog">
          <div>
            <div
              role="progressbar"
              aria-label="Upload progress"
              aria-valuemin={0}
              aria-valuemax={100}
              aria-valuenow={pct}
              className="h-2 overflow-hidden rounded-full bg-muted"
            >
              <div className="h-full bg-primary transition-[width]" style={{ width: `${pct}%` }} />
            </div>
            <p className="mt-1 text-xs text-muted-foreground">
              {run.state === "uploading"
                ? `${pct}% · ${run.names.length} file${run.names.length > 1 ? "s" : ""} (parsing and indexing can take a while)`
                : run.state === "done"
                  ? "Done."
                  : "Failed."}
            </p>
          </div>
          {run.error && (
            <p role="alert" className="text-sm text-destructive">
              The upload failed: {run.error}
            </p>
          )}
          <ul className="space-y-1.5" aria-label="Results per file" data-testid="upload-results">
            {run.results.map((r, i) => {
              const s = STATUS[r.status];
              const Icon = s.icon;
              return (
                // biome-ignore lint/suspicious/noArrayIndexKey: one run may hold the same file name twice; results only append
                <li key={`${r.name ?? r.id}-${i}`} className="flex flex-wrap items-center gap-2 text-sm" data-status={r.status}>
                  <Badge variant={s.variant}>
                    <Icon aria-hidden="true" /> {s.text}
                  </Badge>
                  <span className="font-medium break-all">{r.name ?? r.id}</span>
                  {r.chunks != null && r.status !== "refused" && <span className="text-muted-foreground">{r.chunks} passages</span>}
                  {r.reason && <span className="w-full pl-1 text-muted-foreground">{r.reason}</span>}
                </li>
              );
            })}
          </ul>
        </div>
      )}
    </Dialog>
  );
}

/** The hidden file input that every "Upload" button and the U shortcut click. */
export function FilePicker({ inputRef, onFiles }: { inputRef: RefObject<HTMLInputElement | null>; onFiles: (files: File[]) => void }) {
  return (
    <input
      ref={inputRef}
      type="file"
      multiple
      accept={ACCEPT}
      className="hidden"
      aria-label="Choose files to upload"
      data-testid="file-input"
      onChange={(e) => {
        const files = Array.from(e.target.files ?? []);
        e.target.value = "";
        if (files.length) onFiles(files);
      }}
    />
  );
}

/** A full-page overlay while files are dragged over the window. */
export function DropOverlay({ onFiles }: { onFiles: (files: File[]) => void }) {
  const [over, setOver] = useState(false);
  useEffect(() => {
    let depth = 0;
    const hasFiles = (e: DragEvent) => Array.from(e.dataTransfer?.types ?? []).includes("Files");
    const enter = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      depth++;
      setOver(true);
    };
    const leave = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      depth = Math.max(0, depth - 1);
      if (depth === 0) setOver(false);
    };
    const overFn = (e: DragEvent) => {
      if (hasFiles(e)) e.preventDefault();
    };
    const drop = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      depth = 0;
      setOver(false);
      const files = Array.from(e.dataTransfer?.files ?? []);
      if (files.length) onFiles(files);
    };
    window.addEventListener("dragenter", enter);
    window.addEventListener("dragleave", leave);
    window.addEventListener("dragover", overFn);
    window.addEventListener("drop", drop);
    return () => {
      window.removeEventListener("dragenter", enter);
      window.removeEventListener("dragleave", leave);
      window.removeEventListener("dragover", overFn);
      window.removeEventListener("drop", drop);
    };
  }, [onFiles]);
  if (!over) return null;
  return (
    <div className="pointer-events-none fixed inset-0 z-40 flex items-center justify-center bg-primary/10 p-6 backdrop-blur-sm">
      <div className="flex flex-col items-center gap-2 rounded-xl border-2 border-dashed border-primary bg-card p-10 text-center shadow-xl">
        <FileUp aria-hidden="true" className="size-10 text-primary" />
        <p className="text-lg font-semibold">Drop files to add them to the knowledge base</p>
        <p className="text-sm text-muted-foreground">Documents, slides, spreadsheets, web pages, e-mail and scans, up to 10 MB each</p>
      </div>
    </div>
  );
}
