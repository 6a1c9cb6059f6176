/**
 * The passage behind a citation: the whole chunk, reflowed for reading, with the words of the statement it
 * was cited for marked and scrolled into view; its document, page label, section; and the page itself, as
 * it looks for a PDF (the quote highlighted on it) or as text, unless `gone`: its document was deleted with
 * the workspace it was in, and only the quoted passage is left.
 */
import { AlertTriangle, ExternalLink, FileText, Image as ImageIcon } from "lucide-react";
import { useEffect, useMemo, useRef, useState } from "react";
import { getPage, getPageImage } from "@/api/client";
import type { Passage } from "@/api/types";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";
import { Skeleton } from "@/components/ui/skeleton";
import { markedPassage, type PassageFocus } from "@/features/ask/evidence";
import { cn } from "@/lib/utils";

interface PassageViewerProps {
  passage: Passage | null;
  focus?: PassageFocus;
  gone?: boolean;
  onClose: () => void;
}

export function PassageViewer({ passage, focus, gone = false, onClose }: PassageViewerProps) {
  return (
    <Dialog open={passage !== null} onClose={onClose} side="right" title={passage ? `[${passage.label}] ${passage.title}` : ""}>
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
                <dt className="text-muted-foreground">{passage.page_unit === "slide" ? "Slide" : "Page"}</dt>
                <dd data-testid="passage-page">
                  {passage.page_label ?? passage.page}
                  {passage.page && passage.page_label && passage.page_label !== String(passage.page) && (
                    <span className="text-muted-foreground"> (page {passage.page} in the file)</span>
                  )}
                </dd>
              </>
            )}
            {passage.link && (
              <>
                <dt className="text-muted-foreground">Address</dt>
                <dd className="break-all" data-testid="passage-link">
                  <a href={passage.link} target="_blank" rel="noreferrer noopener" className="underline underline-offset-2">
                    {passage.link}
                  </a>
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
            <dd>{passage.tier === "web" ? <Badge variant="outline">web</Badge> : <Badge variant="secondary">your documents</Badge>}</dd>
          </dl>
          {focus?.statement && <CitedFor focus={focus} />}
          <section aria-label="Passage text">
            <h3 className="mb-1 text-xs font-semibold tracking-wide text-muted-foreground uppercase">The passage the model read</h3>
            <PassageText key={`${passage.label}:${passage.chunk_id}`} passage={passage} focus={focus} />
          </section>
          {passage.tier === "web" && passage.uri && (
            <Button variant="outline" size="sm" onClick={() => window.open(passage.uri ?? "", "_blank", "noopener")}>
              <ExternalLink /> Open the web page
            </Button>
          )}
          {gone && passage.tier !== "web" && (
            <p className="text-sm text-muted-foreground" data-testid="passage-gone">
              Its document was deleted with the workspace it was in: the passage above is all that is left of it.
            </p>
          )}
          {passage.document_id && passage.page && !gone && (
            <WholePage
              key={`${passage.label}:${passage.chunk_id}:${focus?.evidence[0]?.quote ?? ""}`}
              passage={passage}
              quote={focus?.evidence[0]?.quote}
            />
          )}
        </div>
      )}
    </Dialog>
  );
}

function CitedFor({ focus }: { focus: PassageFocus }) {
  const statement = focus.statement;
  if (!statement) return null;
  return (
    <section aria-label="Cited for" data-testid="cited-for" data-supported={statement.supported}>
      <h3 className="mb-1 text-xs font-semibold tracking-wide text-muted-foreground uppercase">Cited for</h3>
      <p className={cn("text-sm", !statement.supported && "underline decoration-destructive decoration-wavy underline-offset-4")}>
        {statement.text}
      </p>
      {!statement.supported && (
        <p className="mt-1 flex items-center gap-1 text-sm text-destructive" data-testid="unsupported">
          <AlertTriangle aria-hidden="true" className="size-4" /> Not supported: no quote for this statement was found in its passages.
        </p>
      )}
    </section>
  );
}

/** The passage reflowed, its evidence in <mark>; the first mark is scrolled into view when it opens. */
function PassageText({ passage, focus }: { passage: Passage; focus?: PassageFocus }) {
  const evidence = focus?.evidence;
  const { segments, missing } = useMemo(() => markedPassage(passage.text, evidence ?? []), [passage.text, evidence]);
  const ref = useRef<HTMLQuoteElement>(null);
  useEffect(() => {
    if (segments.some((s) => s.marked)) ref.current?.querySelector("mark")?.scrollIntoView?.({ block: "center" });
  }, [segments]);
  return (
    <>
      <blockquote
        ref={ref}
        data-testid="passage-text"
        className="rounded-md border-l-4 border-primary/40 bg-muted/50 p-3 text-sm leading-relaxed whitespace-pre-line"
      >
        {passage.text
          ? segments.map((s, i) =>
              s.marked ? (
                // biome-ignore lint/suspicious/noArrayIndexKey: segments are consecutive stretches of one fixed text; position is identity
                <mark key={i} data-evidence="true" className="rounded-sm bg-highlight px-0.5 text-highlight-foreground">
                  {s.text}
                </mark>
              ) : (
                // biome-ignore lint/suspicious/noArrayIndexKey: as above
                <span key={i}>{s.text}</span>
              ),
            )
          : "(no text: a web source; open it to read it)"}
      </blockquote>
      {missing > 0 && (
        <p className="mt-1 text-xs text-muted-foreground" data-testid="evidence-missing">
          {missing === 1 ? "The quoted words were" : `${missing} of the quotes were`} not found in this passage's text.
        </p>
      )}
    </>
  );
}

type View = "page" | "text";
type Load<T> = { state: "idle" | "loading" | "ready" | "failed"; value?: T; error?: string };

const isPdf = (passage: Passage) => /\.pdf$/i.test(passage.source ?? "");

/**
 * The whole page: for a PDF, "Page" (the image, the quote highlighted; fetched once the viewer opens) or
 * "Text"; a page with no image (a PDF ingested before originals were kept) falls back to its text.
 */
function WholePage({ passage, quote }: { passage: Passage; quote?: string }) {
  const pdf = isPdf(passage);
  const [view, setView] = useState<View | null>(pdf ? "page" : null);
  const [image, setImage] = useState<Load<{ url: string; highlights: number | null }>>({ state: "idle" });
  const [text, setText] = useState<Load<string>>({ state: "idle" });
  const [noImage, setNoImage] = useState<string | null>(null);
  const documentId = passage.document_id ?? "";
  const number = passage.page ?? 1;
  const label = passage.page_label ?? String(number);
  // A deck's page is a slide: "Show the whole page 3" would send a reader looking for a third page.
  const unit = passage.page_unit === "slide" ? "Slide" : "Page";

  // Runs when the view changes: the passage and quote are fixed (the component is keyed by them), and the load state is
  // read, not watched, since watching it would abort the load it starts.
  // biome-ignore lint/correctness/useExhaustiveDependencies: see above
  useEffect(() => {
    if (view !== "page" || image.state !== "idle") return;
    const abort = new AbortController();
    setImage({ state: "loading" });
    getPageImage(documentId, number, quote, abort.signal).then(
      (got) => setImage({ state: "ready", value: { url: URL.createObjectURL(got.blob), highlights: got.highlights } }),
      (error: Error & { status?: number }) => {
        if (error.name === "AbortError") return;
        if (error.status === 404) {
          setNoImage(error.message.replace(/^no page image:\s*/, ""));
          setView("text");
        }
        setImage({ state: "failed", error: error.message });
      },
    );
    return () => {
      abort.abort(); // switched away (or closed) mid-load: a later switch back loads it again
      setImage((s) => (s.state === "loading" ? { state: "idle" } : s));
    };
  }, [view]);
  useEffect(() => {
    const url = image.value?.url;
    return () => {
      if (url) URL.revokeObjectURL(url);
    };
  }, [image.value?.url]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: as for the image, runs when the view changes
  useEffect(() => {
    if (view !== "text" || text.state !== "idle") return;
    const abort = new AbortController();
    setText({ state: "loading" });
    getPage(documentId, number, abort.signal).then(
      (page) => setText({ state: "ready", value: page.text }),
      (error: Error) => error.name !== "AbortError" && setText({ state: "failed", error: error.message }),
    );
    return () => {
      abort.abort();
      setText((s) => (s.state === "loading" ? { state: "idle" } : s));
    };
  }, [view]);

  const loading = (view === "page" ? image : text).state === "loading";
  return (
    <div className="space-y-2">
      {pdf && noImage === null ? (
        <fieldset aria-label="Show the page as" className="inline-flex rounded-md border p-0.5">
          {(["page", "text"] as const).map((v) => (
            <Button key={v} size="sm" variant={view === v ? "secondary" : "ghost"} aria-pressed={view === v} onClick={() => setView(v)}>
              {v === "page" ? <ImageIcon /> : <FileText />} {v === "page" ? "Page" : "Text"}
            </Button>
          ))}
        </fieldset>
      ) : (
        view === null && (
          <Button variant="outline" size="sm" onClick={() => setView("text")}>
            <FileText /> Show the whole {unit.toLowerCase()} {label}
          </Button>
        )
      )}
      {noImage !== null && (
        <p className="text-xs text-muted-foreground" data-testid="no-page-image">
          No image of this page: {noImage}
        </p>
      )}
      {loading && (
        <div className="space-y-2" role="status" aria-label="Loading the page">
          <Skeleton className="h-4 w-full" />
          <Skeleton className="h-4 w-11/12" />
          <Skeleton className="h-4 w-4/5" />
        </div>
      )}
      {view === "page" && image.state === "failed" && (
        <p className="text-sm text-destructive">Could not load the page image: {image.error}</p>
      )}
      {view === "page" && image.state === "ready" && image.value && (
        <section aria-label={`Page ${label}`} data-testid="page-image">
          {image.value.highlights === 0 && quote && (
            <p className="mb-1 text-xs text-muted-foreground">The quoted words were not found on this page's image.</p>
          )}
          <img
            src={image.value.url}
            alt={`Page ${label} of ${passage.title}${quote ? ", the quoted words highlighted" : ""}`}
            loading="lazy"
            className="w-full rounded-md border bg-white"
          />
        </section>
      )}
      {view === "text" && text.state === "failed" && <p className="text-sm text-destructive">Could not load the page: {text.error}</p>}
      {view === "text" && text.state === "ready" && (
        <section aria-label={`${unit} ${label}`}>
          <h3 className="mb-1 text-xs font-semibold tracking-wide text-muted-foreground uppercase">
            {unit} {label}
          </h3>
          <pre className="max-h-96 overflow-y-auto rounded-md border p-3 font-sans text-sm whitespace-pre-wrap">{text.value}</pre>
        </section>
      )}
    </div>
  );
}
