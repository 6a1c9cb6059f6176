/** Index Lab: recall@10 against queries per second for each index, and one query through every index. */
import { FlaskConical } from "lucide-react";
import { useEffect, useState } from "react";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardHeader, CardTitle } from "@/components/ui/card";
import { Input } from "@/components/ui/input";
import { Skeleton } from "@/components/ui/skeleton";
import { compare, getLab, type LabComparison, type LabDataset, type LabState } from "./api";

const COLOURS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2"];
const MARKERS = ["circle", "square", "diamond", "triangle"] as const;

function Marker({ kind, x, y, colour }: { kind: (typeof MARKERS)[number]; x: number; y: number; colour: string }) {
  if (kind === "square") return <rect x={x - 4} y={y - 4} width={8} height={8} fill={colour} />;
  if (kind === "diamond") return <path d={`M${x} ${y - 5}L${x + 5} ${y}L${x} ${y + 5}L${x - 5} ${y}Z`} fill={colour} />;
  if (kind === "triangle") return <path d={`M${x} ${y - 5}L${x + 5} ${y + 4}L${x - 5} ${y + 4}Z`} fill={colour} />;
  return <circle cx={x} cy={y} r={4.5} fill={colour} />;
}

/** Recall@10 (y) against QPS (x, log scale); one line and marker shape per index, so colour is not the only cue. */
export function TradeoffChart({ dataset }: { dataset: LabDataset }) {
  const W = 640, H = 320, L = 56, R = 16, T = 16, B = 44;
  const points = dataset.indexes.flatMap((i) => i.points);
  const qps = points.map((p) => Math.max(p.qps, 1e-3));
  const lo = Math.log10(Math.min(...qps)), hi = Math.log10(Math.max(...qps));
  const span = hi - lo || 1;
  const x = (q: number) => L + ((Math.log10(Math.max(q, 1e-3)) - lo) / span) * (W - L - R);
  const y = (r: number) => T + (1 - r) * (H - T - B);
  return (
    <figure>
      <svg viewBox={`0 0 ${W} ${H}`} className="w-full" role="img" aria-label={`Recall at 10 against queries per second for ${dataset.name}`}>
        {[0, 0.25, 0.5, 0.75, 1].map((r) => (
          <g key={r}>
            <line x1={L} x2={W - R} y1={y(r)} y2={y(r)} stroke="currentColor" strokeOpacity={0.12} />
            <text x={L - 8} y={y(r) + 4} textAnchor="end" fontSize={11} fill="currentColor">{r.toFixed(2)}</text>
          </g>
        ))}
        <text x={(W + L) / 2} y={H - 6} textAnchor="middle" fontSize={12} fill="currentColor">queries per second (log scale)</text>
        <text x={14} y={H / 2} textAnchor="middle" fontSize={12} fill="currentColor" transform={`rotate(-90 14 ${H / 2})`}>recall@10</text>
        {[lo, (lo + hi) / 2, hi].map((v) => (
          <text key={v} x={x(10 ** v)} y={H - B + 16} textAnchor="middle" fontSize={11} fill="currentColor">{Math.round(10 ** v).toLocaleString()}</text>
        ))}
        {dataset.indexes.map((index, i) => {
          const colour = COLOURS[i % COLOURS.length] ?? "#2563eb";
          const sorted = [...index.points].sort((a, b) => a.qps - b.qps);
          return (
            <g key={index.index}>
              <polyline fill="none" stroke={colour} strokeWidth={2} points={sorted.map((p) => `${x(p.qps)},${y(p.recall_at_10)}`).join(" ")} />
              {sorted.map((p) => (
                <g key={String(p.param)}>
                  <title>{`${index.index} ${p.param}: recall@10 ${p.recall_at_10.toFixed(3)}, ${Math.round(p.qps)} QPS`}</title>
                  <Marker kind={MARKERS[i % MARKERS.length] ?? "circle"} x={x(p.qps)} y={y(p.recall_at_10)} colour={colour} />
                </g>
              ))}
            </g>
          );
        })}
      </svg>
      <figcaption className="mt-2 flex flex-wrap gap-3 text-sm">
        {dataset.indexes.map((index, i) => (
          <span key={index.index} className="flex items-center gap-1">
            <svg width={12} height={12} aria-hidden="true"><Marker kind={MARKERS[i % MARKERS.length] ?? "circle"} x={6} y={6} colour={COLOURS[i % COLOURS.length] ?? "#2563eb"} /></svg>
            {index.index}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}

export function LabPage() {
  const [lab, setLab] = useState<LabState>({ state: "loading" });
  const [query, setQuery] = useState("");
  const [result, setResult] = useState<{ busy: boolean; data?: LabComparison; error?: string }>({ busy: false });
  useEffect(() => {
    const abort = new AbortController();
    getLab(abort.signal).then(setLab).catch(() => undefined);
    return () => abort.abort();
  }, []);

  return (
    <div className="mx-auto max-w-4xl space-y-4 p-4" data-testid="lab-page">
      <div className="flex items-center gap-2">
        <FlaskConical aria-hidden="true" className="size-5" />
        <h1 className="text-xl font-semibold">Index Lab</h1>
        {lab.state === "unavailable" && <Badge variant="warning" data-testid="lab-unavailable">unavailable</Badge>}
      </div>
      <p className="text-sm text-muted-foreground">
        How the approximate indexes (HNSW, IVF-PQ) trade recall for speed against exact search, and what each returns for the same query.
      </p>
      {lab.state === "loading" && <Skeleton className="h-64 w-full" />}
      {lab.state === "unavailable" && (
        <Card className="border-dashed">
          <CardContent className="pt-4 text-sm">
            <p className="font-medium">The Index Lab is not available from this agent.</p>
            <p className="mt-1 text-muted-foreground">{lab.why}. This page fills in once the agent serves <code className="font-mono">GET /lab</code>.</p>
          </CardContent>
        </Card>
      )}
      {lab.state === "ready" && (
        <>
          {lab.overview.datasets.map((d) => (
            <Card key={d.name}>
              <CardHeader><CardTitle>{d.name}: recall@10 against speed</CardTitle></CardHeader>
              <CardContent><TradeoffChart dataset={d} /></CardContent>
            </Card>
          ))}
          <Card>
            <CardHeader><CardTitle>One query through every index</CardTitle></CardHeader>
            <CardContent className="space-y-3">
              <form
                className="flex gap-2"
                onSubmit={async (e) => {
                  e.preventDefault();
                  if (!query.trim()) return;
                  setResult({ busy: true });
                  try {
                    setResult({ busy: false, data: await compare(query.trim()) });
                  } catch (error) {
                    setResult({ busy: false, error: (error as Error).message });
                  }
                }}
              >
                <Input aria-label="Query to compare" value={query} onChange={(e) => setQuery(e.target.value)} placeholder="A query…" />
                <Button type="submit" disabled={result.busy}>Compare</Button>
              </form>
              {result.error && <p role="alert" className="text-sm text-destructive">{result.error}</p>}
              {result.data && (
                <div className="grid gap-3 sm:grid-cols-2 lg:grid-cols-3">
                  {result.data.indexes.map((ix) => (
                    <div key={ix.index} className="rounded-md border p-2 text-sm">
                      <p className="font-semibold">{ix.index} <span className="font-normal text-muted-foreground">{ix.latency_ms.toFixed(1)} ms</span></p>
                      <ol className="mt-1 space-y-0.5 font-mono text-xs">
                        {ix.hits.map((h) => (
                          <li key={h.rank}>{h.rank}. {h.chunk_id} <span className="text-muted-foreground">{h.score.toFixed(3)}</span></li>
                        ))}
                      </ol>
                    </div>
                  ))}
                </div>
              )}
            </CardContent>
          </Card>
        </>
      )}
    </div>
  );
}
