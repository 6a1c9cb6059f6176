/** What /health says, in words: no model (answers are excerpts), or the agent cannot be reached. */
import { PlugZap, Quote } from "lucide-react";
import { apiBase } from "@/api/config";
import { Button } from "@/components/ui/button";
import type { HealthState } from "@/shell/useHealth";

export function HealthBanner({ health, onRetry }: { health: HealthState; onRetry: () => void }) {
  if (health.state === "down") {
    return (
      <div role="alert" className="flex flex-wrap items-center gap-2 border-b border-destructive/40 bg-destructive/10 px-4 py-2 text-sm">
        <PlugZap aria-hidden="true" className="size-4 text-destructive" />
        <span className="flex-1">
          <strong>The agent is not reachable</strong> at <code className="font-mono">{apiBase()}</code> ({health.error}). Start it with{" "}
          <code className="font-mono">sextant-agent</code> or <code className="font-mono">./start_all_services.sh</code>.
        </span>
        <Button size="sm" variant="outline" onClick={onRetry}>
          Check again
        </Button>
      </div>
    );
  }
  if (health.state === "ok" && !health.health.model.configured) {
    return (
      <div
        role="status"
        data-testid="no-model-banner"
        className="flex items-center gap-2 border-b border-warning-foreground/30 bg-warning px-4 py-2 text-sm text-warning-foreground"
      >
        <Quote aria-hidden="true" className="size-4 shrink-0" />
        <span>
          <strong>No model is configured</strong>: answers are excerpts quoted from your documents, not written answers.{" "}
          <span className="hidden sm:inline">({health.health.model.detail})</span>
        </span>
      </div>
    );
  }
  return null;
}
