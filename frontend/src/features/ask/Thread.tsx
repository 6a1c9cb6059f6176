/**
 * The turns of a conversation: question, streamed answer with live citations, trace, verification. Each
 * citation opens its passage with the quote of the statement it was cited for; statements no quote
 * supports are marked in the answer.
 */
import { AlertTriangle, ChevronRight, Quote, RotateCcw } from "lucide-react";
import { useCallback, useMemo } from "react";
import type { Passage } from "@/api/types";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Skeleton } from "@/components/ui/skeleton";
import { Checks } from "@/features/ask/Checks";
import { type ChatTurn, labelIsValid, passagePlace } from "@/features/ask/conversation";
import { evidenceFor, type PassageFocus, statementsOfCitations } from "@/features/ask/evidence";
import { citationSequence, citedLabels } from "@/features/ask/parseMarkdown";
import { Citation } from "./Citation";
import { Markdown } from "./Markdown";
import { Trace } from "./Trace";

type OnOpen = (passage: Passage, focus?: PassageFocus) => void;

interface TurnProps {
  turn: ChatTurn;
  passages: Passage[];
  onOpen: OnOpen;
  onRetry?: () => void;
}

const NO_STATEMENTS: NonNullable<ChatTurn["statements"]> = [];

function TurnView({ turn, passages, onOpen, onRetry }: TurnProps) {
  const streaming = turn.status === "streaming";
  const byLabel = useMemo(() => new Map(passages.map((p) => [p.label, p])), [passages]);
  const statements = turn.statements ?? turn.answer?.statements ?? NO_STATEMENTS;
  // The statement behind each rendered citation, by its place in the answer (the Markdown numbers them the same way).
  const owners = useMemo(
    () => statementsOfCitations(citationSequence(turn.text, { streaming }), statements),
    [turn.text, streaming, statements],
  );
  const renderCitation = useCallback(
    (label: number, key: string, ordinal: number) => {
      const owner = owners[ordinal];
      const statement = owner === null || owner === undefined ? undefined : statements[owner];
      const focus = statement ? { statement, evidence: evidenceFor(statement, label) } : undefined;
      return (
        <Citation
          key={key}
          label={label}
          passage={byLabel.get(label)}
          valid={labelIsValid(turn, passages, label)}
          onOpen={onOpen}
          focus={focus}
        />
      );
    },
    [byLabel, turn, passages, onOpen, owners, statements],
  );
  const flagged = useMemo(() => statements.filter((s) => !s.supported && s.text.trim()).map((s) => s.text), [statements]);
  const cited = useMemo(() => citedLabels(turn.text).filter((l) => byLabel.has(l)), [turn.text, byLabel]);
  const dangling = turn.answer?.citations.dangling ?? [];
  const summary = turn.answer?.citations;
  const unsupported = turn.answer?.verification.unsupported ?? [];
  const notAnswering = turn.answer?.verification.not_answering ?? [];

  return (
    <article className="space-y-3" data-testid="turn" data-status={turn.status} aria-busy={streaming}>
      <div className="flex justify-end">
        <p className="max-w-[85%] rounded-lg bg-primary px-3 py-2 whitespace-pre-wrap text-primary-foreground" data-testid="question">
          <span className="sr-only">You asked: </span>
          {turn.question}
        </p>
      </div>
      <div className="rounded-lg border bg-card p-4" data-testid="answer">
        <div className="mb-2 flex flex-wrap items-center gap-2 text-xs text-muted-foreground">
          <span className="font-semibold text-foreground">Sextant</span>
          {turn.answer?.mode === "excerpts" && (
            <Badge variant="warning" title={turn.answer.reason}>
              <Quote aria-hidden="true" /> Excerpts, not a written answer
            </Badge>
          )}
          {turn.answer?.mode === "model" && turn.answer.model && <Badge variant="secondary">{turn.answer.model}</Badge>}
          {streaming && <span role="status">Answering…</span>}
          {turn.status === "stopped" && <Badge variant="outline">stopped</Badge>}
        </div>

        {turn.text ? (
          <Markdown text={turn.text} streaming={streaming} renderCitation={renderCitation} flagged={flagged} />
        ) : streaming ? (
          <div className="space-y-2" role="status" aria-label="Waiting for the answer">
            <Skeleton className="h-4 w-11/12" />
            <Skeleton className="h-4 w-4/5" />
            <Skeleton className="h-4 w-2/3" />
          </div>
        ) : null}

        {turn.status === "error" && (
          <div
            role="alert"
            className="mt-3 flex flex-wrap items-center gap-2 rounded-md border border-destructive/50 p-2 text-sm text-destructive"
          >
            <AlertTriangle aria-hidden="true" className="size-4" />
            <span className="flex-1">The answer failed: {turn.error}</span>
            {onRetry && (
              <Button size="sm" variant="outline" onClick={onRetry}>
                <RotateCcw /> Try again
              </Button>
            )}
          </div>
        )}

        {dangling.length > 0 && (
          <p className="mt-3 text-sm text-muted-foreground" data-testid="dangling">
            Removed from the answer, with no passage behind them:{" "}
            {dangling.map((label) => (
              <Citation key={label} label={label} passage={undefined} valid={false} onOpen={onOpen} />
            ))}
          </p>
        )}

        {unsupported.length > 0 && (
          <div className="mt-3 rounded-md border border-warning-foreground/40 bg-warning/40 p-2 text-sm">
            <p className="font-medium">
              <AlertTriangle aria-hidden="true" className="mr-1 inline size-4" />
              The check found {unsupported.length} statement{unsupported.length > 1 ? "s" : ""} not supported by the cited passage:
            </p>
            <ul className="mt-1 list-disc pl-5">
              {unsupported.map((s, i) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: a fixed list of sentences, which may repeat
                <li key={i}>{s}</li>
              ))}
            </ul>
          </div>
        )}

        {flagged.length > 0 && !streaming && (
          <div className="mt-3 rounded-md border border-destructive/40 p-2 text-sm" data-testid="unsupported-statements">
            <p className="font-medium">
              <AlertTriangle aria-hidden="true" className="mr-1 inline size-4 text-destructive" />
              No quote in the passages supports {flagged.length === 1 ? "this statement" : `these ${flagged.length} statements`}:
            </p>
            <ul className="mt-1 list-disc pl-5">
              {flagged.map((s, i) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: a fixed list of sentences, which may repeat
                <li key={i}>{s}</li>
              ))}
            </ul>
          </div>
        )}

        {notAnswering.length > 0 && !streaming && (
          <details className="mt-3 rounded-md border p-2 text-sm text-muted-foreground" data-testid="not-answering">
            <summary>
              Left out: {notAnswering.length === 1 ? "a statement" : `${notAnswering.length} statements`} whose passages do not answer the
              question
            </summary>
            <ul className="mt-1 list-disc pl-5">
              {notAnswering.map((s, i) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: a fixed list of sentences, which may repeat
                <li key={i}>{s}</li>
              ))}
            </ul>
          </details>
        )}

        {cited.length > 0 && !streaming && (
          <fieldset className="mt-3 flex min-w-0 flex-wrap gap-1.5 border-t pt-3" aria-label="Passages cited in this answer">
            {cited.map((label) => {
              const p = byLabel.get(label);
              return p ? (
                <button
                  key={label}
                  type="button"
                  onClick={() => onOpen(p, { evidence: statements.flatMap((s) => evidenceFor(s, label)) })}
                  className="max-w-full truncate rounded-full border px-2 py-0.5 text-xs hover:bg-accent cursor-pointer"
                >
                  <span className="font-mono font-semibold">[{label}]</span> {p.title}
                  {passagePlace(p) && `, ${passagePlace(p)}`}
                </button>
              ) : null;
            })}
          </fieldset>
        )}

        <details className="group mt-3 text-sm" open={streaming || undefined}>
          <summary className="flex cursor-pointer list-none items-center gap-1 text-muted-foreground hover:text-foreground [&::-webkit-details-marker]:hidden">
            <ChevronRight aria-hidden="true" className="size-4 transition-transform group-open:rotate-90" />
            How this answer was found ({turn.trace.length} step{turn.trace.length === 1 ? "" : "s"})
            {summary && ` · ${summary.claims_cited} of ${summary.claims} statements cited`}
            {turn.elapsedMs ? ` · ${(turn.elapsedMs / 1000).toFixed(1)} s` : ""}
          </summary>
          <div className="mt-2">
            <Trace steps={turn.trace} streaming={streaming} />
            <Checks kept={statements} removed={turn.answer?.verification.removed ?? []} />
          </div>
        </details>
      </div>
    </article>
  );
}

export function Thread({
  turns,
  passages,
  onOpen,
  onRetry,
}: {
  turns: ChatTurn[];
  passages: Passage[];
  onOpen: OnOpen;
  onRetry: () => void;
}) {
  return (
    <div className="space-y-6">
      {turns.map((turn, i) => (
        <TurnView
          key={turn.id}
          turn={turn}
          passages={passages}
          onOpen={onOpen}
          onRetry={i === turns.length - 1 && turn.status === "error" ? onRetry : undefined}
        />
      ))}
    </div>
  );
}
