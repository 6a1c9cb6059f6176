/** What the agent did: each tool call with its arguments and outcome; "nothing found" stands out. */
import { CircleSlash, Search, Wrench } from "lucide-react";
import { Badge } from "@/components/ui/badge";
import type { TraceStep } from "@/features/ask/conversation";
import { cn } from "@/lib/utils";

function args(argumentsObject: Record<string, unknown>): string {
  return Object.entries(argumentsObject)
    .map(([k, v]) => `${k}: ${typeof v === "string" ? `"${v}"` : JSON.stringify(v)}`)
    .join(", ");
}

export function Trace({ steps, streaming }: { steps: TraceStep[]; streaming: boolean }) {
  if (steps.length === 0) {
    return <p className="text-sm text-muted-foreground">{streaming ? "Waiting for the first step…" : "No tools were called."}</p>;
  }
  return (
    <ol className="space-y-2" aria-label="Agent trace">
      {steps.map(({ call, result }, i) => {
        const nothing = result?.ok && result.found === 0;
        const failed = result && !result.ok;
        const Icon = call.name === "kb_search" ? Search : Wrench;
        return (
          <li
            // biome-ignore lint/suspicious/noArrayIndexKey: call ids are the model's and need not be unique; steps only append
            key={`${call.id}-${i}`}
            data-testid="trace-step"
            data-outcome={!result ? "pending" : failed ? "failed" : nothing ? "nothing-found" : "found"}
            className={cn(
              "rounded-md border p-2 text-sm",
              nothing && "border-dashed border-warning-foreground/50 bg-warning/40",
              failed && "border-destructive/50",
            )}
          >
            <div className="flex flex-wrap items-center gap-2">
              <Icon aria-hidden="true" className="size-4 text-muted-foreground" />
              <span className="font-mono text-xs font-semibold">{call.name}</span>
              {call.forced && <Badge variant="secondary">by the loop</Badge>}
              {!result && <Badge variant="secondary">running…</Badge>}
              {nothing && (
                <Badge variant="warning">
                  <CircleSlash aria-hidden="true" /> nothing found
                </Badge>
              )}
              {failed && <Badge variant="destructive">failed</Badge>}
              {result?.ok && result.found > 0 && (
                <Badge variant="success">
                  found {result.found}
                  {(result.labels ?? []).length > 0 && ` → [${(result.labels ?? []).join("], [")}]`}
                </Badge>
              )}
              {result?.abstained && <Badge variant="outline">abstained</Badge>}
            </div>
            <p className="mt-1 font-mono text-xs break-words text-muted-foreground">{args(call.arguments)}</p>
            {result?.summary && <p className={cn("mt-1 text-xs break-words", nothing && "text-warning-foreground")}>{result.summary}</p>}
          </li>
        );
      })}
    </ol>
  );
}
