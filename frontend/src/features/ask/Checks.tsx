/**
 * What the checks made of each statement the model wrote: kept, or removed by which rule and why, with every
 * rule's verdict in the order the rules ran (the statement's trail). Rules and reasons are the backend's codes
 * (sextant/agent/statement_checks.py documents them), shown in words.
 */

import type { AnswerStatement, RemovedStatement, Verdict } from "@/api/types";
import { Badge } from "@/components/ui/badge";
import { cn } from "@/lib/utils";

const RULES: Record<Verdict["rule"], string> = {
  quote: "quote",
  says: "says the claim",
  own_words: "own words",
  fact_sentence: "fact sentence",
  supported: "supported",
  answer_kind: "kind of answer",
  answer_check: "answer check",
};

function words(code: string): string {
  return code.replaceAll("_", " ");
}

function VerdictItem({ verdict }: { verdict: Verdict }) {
  const where = verdict.label === null || verdict.label === undefined ? "" : ` [${verdict.label}]`;
  return (
    <li
      data-testid="verdict"
      data-passed={verdict.passed}
      className={cn("rounded border px-1.5 py-0.5 text-xs", verdict.passed ? "border-border" : "border-destructive/50 text-destructive")}
    >
      <span className="font-semibold">
        {RULES[verdict.rule]}
        {where}
      </span>
      : {words(verdict.reason)}
      {verdict.detail && <span className="text-muted-foreground"> ({verdict.detail})</span>}
    </li>
  );
}

function StatementChecks({ text, trail, removed }: { text: string; trail: Verdict[]; removed: boolean }) {
  const last = trail[trail.length - 1];
  return (
    <li data-testid="checked-statement" data-fate={removed ? "removed" : "kept"} className="space-y-1">
      <div className="flex flex-wrap items-center gap-2">
        {removed ? (
          <Badge variant="destructive">removed{last ? ` by ${RULES[last.rule]}` : ""}</Badge>
        ) : (
          <Badge variant="success">kept</Badge>
        )}
        <span className="text-sm">{text}</span>
      </div>
      <ol className="flex flex-wrap gap-1" aria-label={`The checks on: ${text}`}>
        {trail.map((verdict, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: a trail only grows and its order is its meaning
          <VerdictItem key={i} verdict={verdict} />
        ))}
      </ol>
    </li>
  );
}

export function Checks({ kept, removed }: { kept: AnswerStatement[]; removed: RemovedStatement[] }) {
  const checked = kept.filter((s) => (s.trail ?? []).length > 0);
  if (checked.length === 0 && removed.length === 0) {
    return null;
  }
  return (
    <section className="mt-3" aria-label="The checks on each statement">
      <h3 className="mb-1 text-xs font-semibold text-muted-foreground">Each statement the model wrote, and the checks on it</h3>
      <ul className="space-y-2">
        {checked.map((s, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: statements keep their order in the answer
          <StatementChecks key={`kept-${i}`} text={s.text} trail={s.trail ?? []} removed={false} />
        ))}
        {removed.map((s, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: removed statements keep the order they were written in
          <StatementChecks key={`removed-${i}`} text={s.text} trail={s.trail ?? []} removed={true} />
        ))}
      </ul>
    </section>
  );
}
