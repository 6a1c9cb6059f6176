/** Index Lab (#/lab): recall@10 against queries per second for each index and library, and one query through every index. */
import { FlaskConical } from "lucide-react";
import { useEffect, useId, useRef, useState } from "react";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardHeader, CardTitle } from "@/components/ui/card";
import { Input } from "@/components/ui/input";
import { Skeleton } from "@/components/ui/skeleton";
import { compare, getLab, type LabComparison, type LabDataset, type LabIndex, type LabState } from "./api";

/** Our own indexes come from this system; every other system is a reference library. */
const OURS = "sextant";

/**
 * Each system has a colour (Okabe-Ito, safe for colour-blind readers) and, so that colour is never the only cue,
 * a line style: ours solid with filled markers, each reference library its own dash pattern with hollow markers.
 */
const SYSTEMS: Record<string, { colour: string; dash?: string }> = {
  sextant: { colour: "#0072B2" },
  hnswlib: { colour: "#D55E00", dash: "7 4" },
  faiss: { colour: "#009E73", dash: "2 3" },
  numpy: { colour: "#CC79A7", dash: "10 3 2 3" },
};
const OTHER_SYSTEM = { colour: "#6B7280", dash: "4 4" };
const systemStyle = (system: string) => SYSTEMS[system] ?? OTHER_SYSTEM;

/** The index type (the part before " · library") sets the marker's shape. */
type Shape = "square" | "circle" | "triangle" | "diamond" | "cross";
const SHAPES: Record<string, Shape> = { flat: "square", hnsw: "circle", ivfpq: "triangle", ivfpq_rerank: "diamond" };
const family = (index: string) => index.split(" · ")[0] ?? index;
const shapeOf = (index: string): Shape => SHAPES[family(index)] ?? "cross";

const isOurs = (index: LabIndex) => index.system === OURS;
const libraryName = (system: string) => (system === OURS ? "Sextant (ours)" : system);

function Marker({ shape, x, y, colour, hollow }: { shape: Shape; x: number; y: number; colour: string; hollow: boolean }) {
  const paint = hollow
    ? { style: { fill: "var(--color-card, white)" }, stroke: colour, strokeWidth: 1.8 }
    : { fill: colour, stroke: colour, strokeWidth: 1 };
  if (shape === "square") return <rect x={x - 4} y={y - 4} width={8} height={8} {...paint} />;
  if (shape === "diamond") return <path d={`M${x} ${y - 5.5}L${x + 5.5} ${y}L${x} ${y + 5.5}L${x - 5.5} ${y}Z`} {...paint} />;
  if (shape === "triangle") return <path d={`M${x} ${y - 5.5}L${x + 5.5} ${y + 4.5}L${x - 5.5} ${y + 4.5}Z`} {...paint} />;
  if (shape === "cross")
    return <path d={`M${x - 4} ${y - 4}L${x + 4} ${y + 4}M${x + 4} ${y - 4}L${x - 4} ${y + 4}`} stroke={colour} strokeWidth={2} />;
  return <circle cx={x} cy={y} r={4.5} {...paint} />;
}

/** A legend swatch: a stretch of the curve's line with its marker. */
function Swatch({ index }: { index: LabIndex }) {
  const style = systemStyle(index.system);
  return (
    <svg width={30} height={12} aria-hidden="true" className="shrink-0 overflow-visible">
      <line x1={1} x2={29} y1={6} y2={6} stroke={style.colour} strokeWidth={isOurs(index) ? 2.5 : 1.8} strokeDasharray={style.dash} />
      <Marker shape={shapeOf(index.index)} x={15} y={6} colour={style.colour} hollow={!isOurs(index)} />
    </svg>
  );
}

const fmtInt = (n: number) => Math.round(n).toLocaleString("en");
const fmtBytes = (b: number) =>
  b >= 1024 ** 3
    ? `${(b / 1024 ** 3).toFixed(1)} GiB`
    : b >= 1024 ** 2
      ? `${(b / 1024 ** 2).toFixed(1)} MiB`
      : `${(b / 1024).toFixed(0)} KiB`;
const fmtSeconds = (s: number) => (s < 0.01 ? `${(s * 1000).toFixed(1)} ms` : `${s.toFixed(2)} s`);
const pointLabel = (index: LabIndex, param: number | string) =>
  index.knob && index.knob !== "-" && param !== "-" ? `${index.knob} ${param}` : "exact";

/** Ticks for a log axis: the powers of ten within [lo, hi] (log10 values), with 2× and 5× when there are few. */
function logTicks(lo: number, hi: number): number[] {
  const powers: number[] = [];
  for (let e = Math.ceil(lo); e <= Math.floor(hi); e++) powers.push(10 ** e);
  if (powers.length >= 3) return powers;
  const ticks: number[] = [];
  for (let e = Math.floor(lo); e <= Math.ceil(hi); e++)
    for (const m of [1, 2, 5]) {
      const v = m * 10 ** e;
      if (Math.log10(v) >= lo - 1e-9 && Math.log10(v) <= hi + 1e-9) ticks.push(v);
    }
  return ticks.length >= 2 ? ticks : [10 ** lo, 10 ** hi];
}

/**
 * Recall@10 (y) against QPS (x, log scale), one curve per index and library. Colour, line style (solid for ours,
 * dashed for reference libraries), marker fill (filled for ours, hollow otherwise) and marker shape (index type)
 * all carry the distinction; every point has a tooltip, and the same numbers are in a table below the chart.
 */
export function TradeoffChart({ dataset }: { dataset: LabDataset }) {
  const noteId = useId();
  const W = 640,
    H = 320,
    L = 56,
    R = 16,
    T = 16,
    B = 44;
  const points = dataset.indexes.flatMap((i) => i.points);
  const qps = points.map((p) => Math.max(p.qps, 1e-3));
  const lo = Math.log10(Math.min(...qps)),
    hi = Math.log10(Math.max(...qps));
  const pad = (hi - lo || 1) * 0.04;
  const [xlo, xhi] = [lo - pad, hi + pad];
  const x = (q: number) => L + ((Math.log10(Math.max(q, 1e-3)) - xlo) / (xhi - xlo)) * (W - L - R);
  const y = (r: number) => T + (1 - r) * (H - T - B);
  // Ours drawn last, so on top.
  const ordered = [...dataset.indexes].sort((a, b) => Number(isOurs(a)) - Number(isOurs(b)));
  const ours = dataset.indexes.filter(isOurs);
  const references = dataset.indexes.filter((i) => !isOurs(i));
  return (
    <figure data-testid="lab-chart" data-dataset={dataset.name}>
      <svg
        viewBox={`0 0 ${W} ${H}`}
        className="w-full"
        role="img"
        aria-label={`Recall at 10 against queries per second for ${dataset.name}: ${dataset.indexes.length} curves, ${ours.length} of Sextant's own indexes and ${references.length} from reference libraries. The numbers are in the table below.`}
        aria-describedby={noteId}
      >
        {[0, 0.25, 0.5, 0.75, 1].map((r) => (
          <g key={r}>
            <line x1={L} x2={W - R} y1={y(r)} y2={y(r)} stroke="currentColor" strokeOpacity={0.12} />
            <text x={L - 8} y={y(r) + 4} textAnchor="end" fontSize={11} fill="currentColor">
              {r.toFixed(2)}
            </text>
          </g>
        ))}
        <text x={(W + L) / 2} y={H - 6} textAnchor="middle" fontSize={12} fill="currentColor">
          queries per second (log scale)
        </text>
        <text x={14} y={H / 2} textAnchor="middle" fontSize={12} fill="currentColor" transform={`rotate(-90 14 ${H / 2})`}>
          recall@10
        </text>
        {logTicks(lo, hi).map((v) => (
          <g key={v}>
            <line x1={x(v)} x2={x(v)} y1={H - B} y2={H - B + 4} stroke="currentColor" strokeOpacity={0.5} />
            <text x={x(v)} y={H - B + 16} textAnchor="middle" fontSize={11} fill="currentColor">
              {fmtInt(v)}
            </text>
          </g>
        ))}
        {ordered.map((index) => {
          const style = systemStyle(index.system);
          const hollow = !isOurs(index);
          const sorted = [...index.points].sort((a, b) => a.qps - b.qps);
          return (
            <g key={index.index} data-testid="lab-curve" data-index={index.index} data-system={index.system}>
              {sorted.length > 1 && (
                <polyline
                  fill="none"
                  stroke={style.colour}
                  strokeWidth={hollow ? 1.8 : 2.5}
                  strokeDasharray={style.dash}
                  points={sorted.map((p) => `${x(p.qps)},${y(p.recall_at_10)}`).join(" ")}
                />
              )}
              {sorted.map((p) => (
                <g key={String(p.param)}>
                  <title>{`${index.index} (${libraryName(index.system)}), ${pointLabel(index, p.param)}: recall@10 ${p.recall_at_10.toFixed(3)}, ${fmtInt(p.qps)} QPS`}</title>
                  <Marker shape={shapeOf(index.index)} x={x(p.qps)} y={y(p.recall_at_10)} colour={style.colour} hollow={hollow} />
                </g>
              ))}
            </g>
          );
        })}
      </svg>
      <figcaption className="mt-3 space-y-2 text-sm">
        <p id={noteId} className="text-muted-foreground">
          Solid lines and filled markers: Sextant&apos;s own indexes. Dashed lines and hollow markers: reference libraries, each with its
          own dash. Marker shape: the index type (■ flat, ● hnsw, ▲ ivfpq, ◆ ivfpq with rerank). Up and to the right is better.
        </p>
        {[
          { title: "Ours (Sextant)", items: ours },
          { title: "Reference libraries", items: references },
        ].map(
          (group) =>
            group.items.length > 0 && (
              <div key={group.title} className="flex flex-wrap items-center gap-x-4 gap-y-1">
                <span className="font-medium">{group.title}:</span>
                {group.items.map((index) => (
                  <span key={index.index} className="flex items-center gap-1.5" data-testid="lab-legend-item" data-system={index.system}>
                    <Swatch index={index} />
                    {index.index}
                  </span>
                ))}
              </div>
            ),
        )}
      </figcaption>
      <details className="mt-3 text-sm">
        <summary className="cursor-pointer select-none font-medium">The numbers behind the chart</summary>
        <div className="mt-2 overflow-x-auto">
          <table className="w-full border-collapse text-left text-xs" data-testid="lab-table">
            <caption className="sr-only">{`Every index on ${dataset.name}: its library, build time, memory and each setting's recall@10 and speed`}</caption>
            <thead>
              <tr className="border-b">
                <th scope="col" className="py-1 pr-3">
                  Index
                </th>
                <th scope="col" className="py-1 pr-3">
                  Library
                </th>
                <th scope="col" className="py-1 pr-3">
                  Build
                </th>
                <th scope="col" className="py-1 pr-3">
                  Memory
                </th>
                <th scope="col" className="py-1">
                  Setting: recall@10 at QPS
                </th>
              </tr>
            </thead>
            <tbody>
              {dataset.indexes.map((index) => (
                <tr key={index.index} className="border-b align-top last:border-0" data-system={index.system}>
                  <th scope="row" className="py-1 pr-3 font-mono font-medium">
                    {index.index}
                  </th>
                  <td className="py-1 pr-3">{libraryName(index.system)}</td>
                  <td className="py-1 pr-3 tabular-nums">{fmtSeconds(index.build_s)}</td>
                  <td className="py-1 pr-3 tabular-nums">{fmtBytes(index.memory_bytes)}</td>
                  <td className="py-1 tabular-nums">
                    <ul>
                      {index.points.map((p) => (
                        <li key={String(p.param)}>{`${pointLabel(index, p.param)}: ${p.recall_at_10.toFixed(3)} at ${fmtInt(p.qps)}`}</li>
                      ))}
                    </ul>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}

/** A chunk id is `document~hash~n`; under its document's name, "chunk n" says enough (the full id is its tooltip). */
function chunkLabel(chunkId: string, documentId: string): string {
  const n = chunkId.startsWith(`${documentId}~`) ? chunkId.split("~").pop() : undefined;
  return n && /^\d+$/.test(n) ? `chunk ${n}` : chunkId;
}

/** The same query through every index: latency, build time, overlap with exact search, and the hits themselves. */
export function ComparisonResult({ data }: { data: LabComparison }) {
  const exact = data.indexes.find((ix) => ix.index === "flat");
  const exactIds = new Set(exact?.hits.map((h) => h.chunk_id) ?? []);
  const k = exact?.hits.length ?? Math.max(0, ...data.indexes.map((ix) => ix.hits.length));
  return (
    <div className="space-y-3" data-testid="lab-comparison">
      <p className="text-sm text-muted-foreground">
        {`“${data.query}” over ${fmtInt(data.vectors)} vectors. `}
        {exact
          ? "Overlap is the share of exact search's (flat) top results an index also returned; hits exact search did not return are marked."
          : "No exact (flat) answer came back to compare against."}
      </p>
      <div className="overflow-x-auto">
        <table className="w-full border-collapse text-left text-sm">
          <caption className="sr-only">Each index's latency, build time and overlap with exact search for this query</caption>
          <thead>
            <tr className="border-b">
              <th scope="col" className="py-1 pr-3">
                Index
              </th>
              <th scope="col" className="py-1 pr-3">
                Latency
              </th>
              <th scope="col" className="py-1 pr-3">
                Build
              </th>
              <th scope="col" className="py-1">
                Overlap with exact
              </th>
            </tr>
          </thead>
          <tbody>
            {data.indexes.map((ix) => (
              <tr key={ix.index} className="border-b last:border-0">
                <th scope="row" className="py-1 pr-3 font-mono font-medium">
                  {ix.index}
                </th>
                <td className="py-1 pr-3 tabular-nums">{ix.latency_ms.toFixed(2)} ms</td>
                <td className="py-1 pr-3 tabular-nums">{ix.build_s > 0 ? fmtSeconds(ix.build_s) : "—"}</td>
                <td className="py-1 tabular-nums">
                  <span className="inline-flex items-center gap-2">
                    {/* biome-ignore lint/a11y/useSemanticElements: a <meter>'s bar cannot be styled alike across browsers */}
                    <span
                      className="h-1.5 w-16 overflow-hidden rounded-full bg-muted"
                      role="meter"
                      aria-label={`${ix.index} overlap with exact search`}
                      aria-valuemin={0}
                      aria-valuemax={100}
                      aria-valuenow={Math.round(ix.overlap_with_exact * 100)}
                    >
                      <span className="block h-full bg-primary" style={{ width: `${ix.overlap_with_exact * 100}%` }} />
                    </span>
                    {`${Math.round(ix.overlap_with_exact * 100)}%`}
                    {k > 0 && <span className="text-muted-foreground">{`(${Math.round(ix.overlap_with_exact * k)} of ${k})`}</span>}
                  </span>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div className="grid gap-3 sm:grid-cols-2 lg:grid-cols-3">
        {data.indexes.map((ix) => (
          <section
            key={ix.index}
            className="rounded-md border p-2 text-sm"
            data-testid="lab-answer"
            data-index={ix.index}
            aria-label={`${ix.index}: what it returned`}
          >
            <h4 className="font-semibold">
              <span className="font-mono">{ix.index}</span>{" "}
              <span className="font-normal text-muted-foreground">{`${ix.latency_ms.toFixed(2)} ms · ${Math.round(ix.overlap_with_exact * 100)}% overlap`}</span>
            </h4>
            {ix.hits.length === 0 ? (
              <p className="mt-1 text-muted-foreground">no hits</p>
            ) : (
              <ol className="mt-1 space-y-1 text-xs">
                {ix.hits.map((h) => {
                  const missed = exact !== undefined && ix !== exact && !exactIds.has(h.chunk_id);
                  return (
                    <li key={h.rank} data-testid="lab-hit" className="flex gap-1.5">
                      <span className="tabular-nums text-muted-foreground">{h.rank}.</span>
                      <span className="min-w-0 flex-1">
                        <span className="block truncate font-medium" title={h.document_id}>
                          {h.document_id || "?"}
                        </span>
                        <span className="block break-all font-mono text-muted-foreground" title={h.chunk_id}>
                          {chunkLabel(h.chunk_id, h.document_id)}
                        </span>
                        {missed && <span className="text-warning-foreground">✕ not in exact search&apos;s top {k}</span>}
                      </span>
                      <span className="tabular-nums" title="exact cosine of query and passage">
                        {h.score.toFixed(3)}
                      </span>
                    </li>
                  );
                })}
              </ol>
            )}
          </section>
        ))}
      </div>
    </div>
  );
}

export function LabPage() {
  const [lab, setLab] = useState<LabState>({ state: "loading" });
  const [query, setQuery] = useState("");
  const [result, setResult] = useState<{ busy: boolean; data?: LabComparison; error?: string }>({ busy: false });
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
                  {result.busy ? "Comparing: building every index" : result.data ? `${result.data.indexes.length} indexes answered` : ""}
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
