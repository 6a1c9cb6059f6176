/** Ask (#/): the conversation, or onboarding while it is empty, and the question box under it. */
import { useEffect, useRef } from "react";
import { useDocumentsSession } from "@/features/documents/useDocuments";
import { SourcesGoneNote } from "@/features/workspace/Workspace";
import { Composer } from "./Composer";
import { Onboarding } from "./Onboarding";
import { Thread } from "./Thread";
import { useAskSession } from "./useAsk";

export function AskPage() {
  const { current, stream, inputRef, ask, retry, openPassage, sourcesGone } = useAskSession();
  const documents = useDocumentsSession();
  const scrollRef = useRef<HTMLDivElement>(null);

  // Follow the answer as it streams, unless the reader has scrolled up.
  const lastText = current.turns[current.turns.length - 1]?.text.length ?? 0;
  // biome-ignore lint/correctness/useExhaustiveDependencies: the answer growing is what triggers the scroll
  useEffect(() => {
    const el = scrollRef.current;
    if (el && el.scrollHeight - el.scrollTop - el.clientHeight < 160) el.scrollTop = el.scrollHeight;
  }, [lastText, current.turns.length]);

  return (
    <main className="flex min-w-0 flex-1 flex-col">
      <div ref={scrollRef} className="min-h-0 flex-1 overflow-y-auto px-3 py-4 sm:px-6" aria-live="off">
        <div className="mx-auto max-w-3xl">
          <h1 className="sr-only">{current.turns.length ? current.title : "Ask your documents"}</h1>
          {current.turns.length === 0 ? (
            <Onboarding
              documents={documents.documents}
              loadingSample={documents.loadingSample}
              onLoadSample={() => void documents.loadSample()}
              onUpload={documents.pickFiles}
              onAsk={(q) => void ask(q)}
            />
          ) : (
            <>
              {sourcesGone && <SourcesGoneNote />}
              <Thread turns={current.turns} passages={current.passages} onOpen={openPassage} onRetry={retry} />
            </>
          )}
        </div>
      </div>
      <div className="border-t bg-background px-3 py-3 sm:px-6">
        <div className="mx-auto max-w-3xl">
          <Composer
            onAsk={(q) => void ask(q)}
            onStop={stream.stop}
            streaming={stream.streaming}
            inputRef={inputRef}
            followUp={current.turns.length > 0}
          />
        </div>
      </div>
    </main>
  );
}
