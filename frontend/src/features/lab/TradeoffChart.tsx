/**
 * Recall@10 against queries per second (log scale), one curve per index and library, told apart by
 * more than colour: ours solid with filled markers, each reference library dashed with hollow ones.
 */
import { useId } from "react";
import type { LabDataset, LabIndex } from "./api";
import { fmtBytes, fmtInt, fmtSeconds } from "./format";

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
