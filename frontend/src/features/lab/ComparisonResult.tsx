/** One query through every index: what each returned, how fast, and how much of it exact search agrees with. */
import type { AnnComparison } from "./api";
import { fmtInt, fmtSeconds } from "./format";

/** A chunk id is `document~hash~n`; under its document's name, "chunk n" says enough (the full id is its tooltip). */
function chunkLabel(chunkId: string, documentId: string): string {
  const n = chunkId.startsWith(`${documentId}~`) ? chunkId.split("~").pop() : undefined;
  return n && /^\d+$/.test(n) ? `chunk ${n}` : chunkId;
}

/** The same query through every index: latency, build time, overlap with exact search, and the hits themselves. */
export function ComparisonResult({ data }: { data: AnnComparison }) {
  const exact = data.answers.find((ix) => ix.index === "flat");
  const exactIds = new Set(exact?.hits.map((h) => h.chunk_id) ?? []);
  const k = exact?.hits.length ?? Math.max(0, ...data.answers.map((ix) => ix.hits.length));
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
            {data.answers.map((ix) => (
              <tr key={ix.index} className="border-b last:border-0">
                <th scope="row" className="py-1 pr-3 font-mono font-medium">
                  {ix.index}
                </th>
                <td className="py-1 pr-3 tabular-nums">{ix.latency_ms.toFixed(2)} ms</td>
                <td className="py-1 pr-3 tabular-nums">{ix.build_seconds > 0 ? fmtSeconds(ix.build_seconds) : "—"}</td>
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
        {data.answers.map((ix) => (
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
                        {h.cosine.toFixed(3)}
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
