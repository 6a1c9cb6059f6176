/** Every passage numbered in this conversation, updated as `sources` frames arrive. */
import { FileText, Globe } from "lucide-react";
import type { Passage } from "@/api/types";
import { Skeleton } from "@/components/ui/skeleton";
import { passagePlace } from "@/features/ask/conversation";
import { cn } from "@/lib/utils";

interface SourcesProps {
  passages: Passage[];
  cited: Set<number>;
  loading: boolean;
  onOpen: (passage: Passage) => void;
}

export function Sources({ passages, cited, loading, onOpen }: SourcesProps) {
  if (passages.length === 0) {
    return loading ? (
      <div className="space-y-2" role="status" aria-label="Loading sources">
        <Skeleton className="h-14 w-full" />
        <Skeleton className="h-14 w-full" />
      </div>
    ) : (
      <p className="text-sm text-muted-foreground">Sources appear here as the agent finds them.</p>
    );
  }
  return (
    <ul className="space-y-2" aria-label="Sources" aria-live="polite" data-testid="sources">
      {passages.map((p) => (
        <li key={p.label}>
          <button
            type="button"
            onClick={() => onOpen(p)}
            className={cn(
              "w-full rounded-md border p-2 text-left text-sm hover:bg-accent focus-visible:outline-2 focus-visible:outline-ring cursor-pointer",
              cited.has(p.label) && "border-primary/50",
            )}
            aria-label={`Source ${p.label}: ${[p.title, passagePlace(p, "spoken")].filter(Boolean).join(", ")}${cited.has(p.label) ? " (cited)" : ""}`}
          >
            <div className="flex items-start gap-2">
              <span className="mt-0.5 rounded bg-muted px-1 font-mono text-xs font-semibold">{p.label}</span>
              <div className="min-w-0 flex-1">
                <p className="flex items-center gap-1 font-medium">
                  {p.tier === "web" ? (
                    <Globe aria-hidden="true" className="size-3.5 shrink-0" />
                  ) : (
                    <FileText aria-hidden="true" className="size-3.5 shrink-0" />
                  )}
                  <span className="truncate">{p.title}</span>
                </p>
                <p className="truncate text-xs text-muted-foreground">
                  {[passagePlace(p), p.section].filter(Boolean).join(" · ") || p.source}
                </p>
              </div>
              {cited.has(p.label) && <span className="text-xs text-primary">cited</span>}
            </div>
          </button>
        </li>
      ))}
    </ul>
  );
}
