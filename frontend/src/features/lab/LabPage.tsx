/** Index Lab (#/lab): recall@10 against queries per second for each index and library, and one query through every index. */
import { FlaskConical } from "lucide-react";
import { useEffect, useRef, useState } from "react";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardHeader, CardTitle } from "@/components/ui/card";
import { Input } from "@/components/ui/input";
import { Skeleton } from "@/components/ui/skeleton";
import { type AnnComparison, compare, getLab, type LabState } from "./api";
import { ComparisonResult } from "./ComparisonResult";
import { fmtInt } from "./format";
import { TradeoffChart } from "./TradeoffChart";

export function LabPage() {
  const [lab, setLab] = useState<LabState>({ state: "loading" });
  const [query, setQuery] = useState("");
  const [result, setResult] = useState<{ busy: boolean; data?: AnnComparison; error?: string }>({ busy: false });
  const running = useRef<AbortController | null>(null);
  useEffect(() => {
    const abort = new AbortController();
    getLab(abort.signal)
      .then(setLab)
      .catch(() => undefined);
    return () => {
      abort.abort();
      running.current?.abort();
    };
  }, []);

  return (
    <main className="min-w-0 flex-1 overflow-y-auto">
      <div className="mx-auto max-w-4xl space-y-4 p-4" data-testid="lab-page">
        <div className="flex items-center gap-2">
          <FlaskConical aria-hidden="true" className="size-5" />
          <h1 className="text-xl font-semibold">Index Lab</h1>
          {lab.state === "unavailable" && (
            <Badge variant="warning" data-testid="lab-unavailable">
              unavailable
            </Badge>
          )}
        </div>
        <p className="text-sm text-muted-foreground">
          How the approximate indexes (HNSW, IVF-PQ) trade recall for speed against exact search, next to reference libraries, and what each
          returns for the same query.
        </p>
        {lab.state === "loading" && <Skeleton className="h-64 w-full" />}
        {lab.state === "unavailable" && (
          <Card className="border-dashed">
            <CardContent className="pt-4 text-sm">
              <p className="font-medium">The Index Lab is not available from this agent.</p>
              <p className="mt-1 text-muted-foreground" data-testid="lab-reason">
                {lab.why}
              </p>
            </CardContent>
          </Card>
        )}
        {lab.state === "ready" && (
          <>
            {lab.created && (
              <p className="text-xs text-muted-foreground" data-testid="lab-created">
                Benchmarked <time dateTime={lab.created}>{lab.created.replace("T", " ")}</time> by{" "}
                <code className="font-mono">sextant-lab bench</code>.
              </p>
            )}
            {lab.datasets.map((d) => (
              <Card key={d.name} data-testid="lab-dataset" data-dataset={d.name}>
                <CardHeader>
                  <CardTitle>{d.name}: recall@10 against speed</CardTitle>
                  <p className="text-sm text-muted-foreground">{`${fmtInt(d.vectors)} vectors × ${d.dimension} dimensions`}</p>
                </CardHeader>
                <CardContent>
                  <TradeoffChart dataset={d} />
                </CardContent>
              </Card>
            ))}
            <Card>
              <CardHeader>
                <CardTitle>One query through every index</CardTitle>
                <p className="text-sm text-muted-foreground">
                  Over this knowledge base&apos;s own vectors: Chroma&apos;s index and each of the lab&apos;s, built fresh for the query.
                </p>
              </CardHeader>
              <CardContent className="space-y-3">
                <form
                  className="flex gap-2"
                  onSubmit={async (e) => {
                    e.preventDefault();
                    if (!query.trim() || result.busy) return;
                    running.current?.abort();
                    const abort = new AbortController();
                    running.current = abort;
                    setResult({ busy: true });
                    try {
                      setResult({ busy: false, data: await compare(query.trim(), 5, abort.signal) });
                    } catch (error) {
                      if ((error as Error).name !== "AbortError") setResult({ busy: false, error: (error as Error).message });
                    }
                  }}
                >
                  <Input aria-label="Query to compare" value={query} onChange={(e) => setQuery(e.target.value)} placeholder="A query…" />
                  <Button type="submit" disabled={result.busy}>
                    {result.busy ? "Comparing…" : "Compare"}
                  </Button>
                </form>
                <div aria-live="polite" className="sr-only">
                  {result.busy ? "Comparing: building every index" : result.data ? `${result.data.answers.length} indexes answered` : ""}
                </div>
                {result.error && (
                  <p role="alert" className="text-sm text-destructive">
                    {result.error}
                  </p>
                )}
                {result.data && <ComparisonResult data={result.data} />}
              </CardContent>
            </Card>
          </>
        )}
      </div>
    </main>
  );
}
