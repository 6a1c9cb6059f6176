/**
 * The passage behind a citation: the whole chunk, its document, page label, section; the page on request,
 * unless `gone`: its document was deleted with the workspace it was in, and only the quoted passage is left.
 */
import { ExternalLink, FileText } from "lucide-react";
import { useEffect, useState } from "react";
import { getPage } from "@/api/client";
import type { Passage } from "@/api/types";
import { Badge } from "./ui/badge";
import { Button } from "./ui/button";
import { Dialog } from "./ui/dialog";
import { Skeleton } from "./ui/skeleton";

export function PassageViewer({ passage, gone = false, onClose }: { passage: Passage | null; gone?: boolean; onClose: () => void }) {
  const [page, setPage] = useState<{ state: "idle" | "loading" | "ready" | "failed"; text?: string; error?: string }>({
    state: "idle",
  });
  useEffect(() => setPage({ state: "idle" }), [passage?.label, passage?.chunk_id]);

  const showPage = async () => {
    if (!passage?.document_id || !passage.page) return;
    setPage({ state: "loading" });
    try {
      const result = await getPage(passage.document_id, passage.page);
      setPage({ state: "ready", text: result.text });
    } catch (error) {
      setPage({ state: "failed", error: (error as Error).message });
    }
  };

  return (
    <Dialog
      open={passage !== null}
      onClose={onClose}
      side="right"
      title={passage ? `[${passage.label}] ${passage.title}` : ""}
    >
      {passage && (
        <div data-testid="passage-viewer" className="space-y-4">
          <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-1 text-sm">
            <dt className="text-muted-foreground">Document</dt>
            <dd className="font-medium break-words" data-testid="passage-document">
              {passage.title}
              {passage.document_id && <span className="ml-1 font-mono text-xs text-muted-foreground">({passage.document_id})</span>}
            </dd>
            {(passage.page_label || passage.page) && (
              <>
                <dt className="text-muted-foreground">Page</dt>
                <dd data-testid="passage-page">
                  {passage.page_label ?? passage.page}
                  {passage.page && passage.page_label && passage.page_label !== String(passage.page) && (
                    <span className="text-muted-foreground"> (page {passage.page} in the file)</span>
                  )}
                </dd>
              </>
            )}
            {passage.section && (
              <>
                <dt className="text-muted-foreground">Section</dt>
                <dd data-testid="passage-section">{passage.section}</dd>
              </>
            )}
            <dt className="text-muted-foreground">From</dt>
            <dd>
              {passage.tier === "web" ? (
                <Badge variant="outline">web</Badge>
              ) : (
                <Badge variant="secondary">your documents</Badge>
              )}
            </dd>
          </dl>
          <section aria-label="Passage text">
            <h3 className="mb-1 text-xs font-semibold tracking-wide text-muted-foreground uppercase">The passage the model read</h3>
            <blockquote
              data-testid="passage-text"
              className="rounded-md border-l-4 border-primary/40 bg-muted/50 p-3 text-sm leading-relaxed whitespace-pre-wrap"
            >
              {passage.text || "(no text: a web source; open it to read it)"}
            </blockquote>
          </section>
          <div className="flex flex-wrap gap-2">
            {passage.tier === "web" && passage.uri && (
              <Button variant="outline" size="sm" onClick={() => window.open(passage.uri ?? "", "_blank", "noopener")}>
                <ExternalLink /> Open the web page
              </Button>
            )}
            {passage.document_id && passage.page && !gone && page.state !== "ready" && (
              <Button variant="outline" size="sm" onClick={showPage} disabled={page.state === "loading"}>
                <FileText /> Show the whole page {passage.page_label ?? passage.page}
              </Button>
            )}
          </div>
          {gone && passage.tier !== "web" && (
            <p className="text-sm text-muted-foreground" data-testid="passage-gone">
              Its document was deleted with the workspace it was in: the passage above is all that is left of it.
            </p>
          )}
          {page.state === "loading" && (
            <div className="space-y-2" aria-label="Loading the page">
              <Skeleton className="h-4 w-full" />
              <Skeleton className="h-4 w-11/12" />
              <Skeleton className="h-4 w-4/5" />
            </div>
          )}
          {page.state === "failed" && <p className="text-sm text-destructive">Could not load the page: {page.error}</p>}
          {page.state === "ready" && (
            <section aria-label={`Page ${passage.page_label ?? passage.page}`}>
              <h3 className="mb-1 text-xs font-semibold tracking-wide text-muted-foreground uppercase">
                Page {passage.page_label ?? passage.page}
              </h3>
              <pre className="max-h-96 overflow-y-auto rounded-md border p-3 font-sans text-sm whitespace-pre-wrap">{page.text}</pre>
            </section>
          )}
        </div>
      )}
    </Dialog>
  );
}
