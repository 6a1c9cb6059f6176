/** The empty conversation: first-run welcome, then "load the sample corpus" or "try a question". */
import { BookOpen, FileUp, Lightbulb, X } from "lucide-react";
import { useState } from "react";
import type { DocumentEntry } from "@/api/types";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardHeader, CardTitle } from "@/components/ui/card";
import { Skeleton } from "@/components/ui/skeleton";
import { FIRST_RUN_KEY } from "./storage";

export const SAMPLE_QUESTIONS = [
  "How often should the espresso machine be descaled?",
  "What must you do before climbing at the gym for the first time?",
  "Which expenses need a receipt under the travel policy?",
];

interface OnboardingProps {
  documents: DocumentEntry[] | null;
  loadingSample: boolean;
  onLoadSample: () => void;
  onUpload: () => void;
  onAsk: (question: string) => void;
}

export function Onboarding({ documents, loadingSample, onLoadSample, onUpload, onAsk }: OnboardingProps) {
  const [firstRun, setFirstRun] = useState(() => !window.localStorage.getItem(FIRST_RUN_KEY));
  const onDismiss = () => {
    window.localStorage.setItem(FIRST_RUN_KEY, "1");
    setFirstRun(false);
  };
  const empty = documents !== null && documents.length === 0;
  return (
    <div className="mx-auto max-w-2xl space-y-4 py-6" data-testid="onboarding">
      {firstRun && (
        <Card className="border-primary/40">
          <CardHeader className="flex-row items-start justify-between">
            <div>
              <CardTitle>Welcome to Sextant</CardTitle>
              <p className="mt-1 text-sm text-muted-foreground">
                Answers from your own documents, every claim cited to a page you can open.
              </p>
            </div>
            <Button variant="ghost" size="icon" aria-label="Dismiss the welcome" onClick={onDismiss}>
              <X />
            </Button>
          </CardHeader>
          <CardContent>
            <ol className="list-decimal space-y-1 pl-5 text-sm">
              <li>
                Add documents: drop documents, slides, spreadsheets, web pages, e-mail or scans anywhere on this page, or load the sample
                corpus.
              </li>
              <li>Ask a question. Watch the agent search; sources appear as they are found.</li>
              <li>
                Click any <span className="rounded border px-1 font-mono text-xs">1</span> in an answer to read the exact passage behind it.
              </li>
            </ol>
          </CardContent>
        </Card>
      )}
      <Card>
        <CardHeader>
          <CardTitle className="flex items-center gap-2">
            <BookOpen aria-hidden="true" className="size-4" /> Your knowledge base
          </CardTitle>
        </CardHeader>
        <CardContent className="space-y-3 text-sm">
          {documents === null ? (
            <div className="space-y-2" role="status" aria-label="Loading documents">
              <Skeleton className="h-4 w-1/2" />
              <Skeleton className="h-4 w-1/3" />
            </div>
          ) : empty ? (
            <p>It is empty. Load the 25 sample documents (manuals, policies, guides) or add your own.</p>
          ) : (
            <p data-testid="document-count">
              {documents.length} document{documents.length === 1 ? "" : "s"}:{" "}
              <span className="text-muted-foreground">
                {documents
                  .slice(0, 6)
                  .map((d) => d.title || d.id)
                  .join(", ")}
                {documents.length > 6 && ", …"}
              </span>
            </p>
          )}
          <div className="flex flex-wrap gap-2">
            <Button variant={empty ? "default" : "outline"} size="sm" onClick={onLoadSample} disabled={loadingSample}>
              <BookOpen /> {loadingSample ? "Loading the sample corpus…" : "Load the sample corpus"}
            </Button>
            <Button variant="outline" size="sm" onClick={onUpload}>
              <FileUp /> Upload files
            </Button>
          </div>
        </CardContent>
      </Card>
      <Card>
        <CardHeader>
          <CardTitle className="flex items-center gap-2">
            <Lightbulb aria-hidden="true" className="size-4" /> Try a question
          </CardTitle>
        </CardHeader>
        <CardContent className="flex flex-col items-start gap-2">
          {SAMPLE_QUESTIONS.map((q) => (
            <Button
              key={q}
              variant="secondary"
              size="sm"
              className="h-auto max-w-full py-1.5 text-left whitespace-normal"
              onClick={() => onAsk(q)}
            >
              {q}
            </Button>
          ))}
        </CardContent>
      </Card>
    </div>
  );
}
