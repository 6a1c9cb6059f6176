import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { LabDataset, LabOverview } from "@/api/types";
import { labState } from "@/features/lab/api";
import { ComparisonResult, LabPage, TradeoffChart } from "@/features/lab/LabPage";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

function answering(body: unknown, status = 200) {
  const fetch = vi.fn(
    async (_url: string) => new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } }),
  );
  vi.stubGlobal("fetch", fetch);
  return fetch;
}

const dataset: LabDataset = {
  name: "bigann10k",
  vectors: 10000,
  dimension: 128,
  indexes: [
    {
      index: "flat",
      system: "sextant",
      knob: "-",
      build_s: 0.001,
      memory_bytes: 5_120_000,
      points: [{ param: "-", recall_at_10: 1, qps: 900 }],
    },
    {
      index: "hnsw",
      system: "sextant",
      knob: "ef_search",
      build_s: 2.5,
      memory_bytes: 8_000_000,
      points: [
        { param: 16, recall_at_10: 0.8, qps: 9000 },
        { param: 64, recall_at_10: 0.97, qps: 4000 },
      ],
    },
    {
      index: "hnsw · hnswlib",
      system: "hnswlib",
      knob: "ef_search",
      build_s: 1.2,
      memory_bytes: 7_000_000,
      points: [
        { param: 16, recall_at_10: 0.82, qps: 30000 },
        { param: 64, recall_at_10: 0.98, qps: 15000 },
      ],
    },
  ],
};

describe("the Index Lab", () => {
  it("says why it is unavailable, in the agent's own words", async () => {
    const fetch = answering({ available: false, reason: "no benchmark results at /x/ann-lab.json: run `sextant-lab bench`", datasets: [] });
    render(<LabPage />);
    await screen.findByTestId("lab-unavailable");
    expect(screen.getByTestId("lab-reason").textContent).toBe("no benchmark results at /x/ann-lab.json: run `sextant-lab bench`");
    expect(screen.queryByTestId("lab-dataset")).toBeNull();
    expect(String(fetch.mock.calls[0]?.[0])).toMatch(/\/lab$/);
  });

  it("says so when the agent has no lab API or cannot be reached", async () => {
    answering({ detail: "Not Found" }, 404);
    render(<LabPage />);
    expect((await screen.findByTestId("lab-reason")).textContent).toMatch(/404/);
  });

  it("treats an available lab with no datasets as unavailable, and keeps the agent's reason otherwise", () => {
    const empty: LabOverview = { available: true, reason: "", created: null, datasets: [] };
    expect(labState(empty)).toEqual({ state: "unavailable", why: "the agent's benchmark results hold no datasets" });
    expect(labState({ available: false, reason: "", created: null, datasets: [] })).toMatchObject({
      state: "unavailable",
      why: expect.stringMatching(/not available/),
    });
  });

  it("tells ours from reference libraries without colour: line style, marker fill, grouped legend and a table", () => {
    render(<TradeoffChart dataset={dataset} />);
    const curves = screen.getAllByTestId("lab-curve");
    const line = (system: string) =>
      curves.find((c) => c.dataset.system === system && c.querySelector("polyline"))?.querySelector("polyline");
    expect(line("sextant")?.getAttribute("stroke-dasharray")).toBeNull();
    expect(line("hnswlib")?.getAttribute("stroke-dasharray")).toBeTruthy();
    const legend = screen.getAllByTestId("lab-legend-item");
    expect(legend.map((l) => [l.textContent, l.dataset.system])).toEqual([
      ["flat", "sextant"],
      ["hnsw", "sextant"],
      ["hnsw · hnswlib", "hnswlib"],
    ]);
    expect(screen.getByText("Reference libraries:")).toBeTruthy();
    const rows = screen.getByTestId("lab-table").querySelectorAll("tbody tr");
    expect(rows).toHaveLength(3);
    expect(rows[2]?.textContent).toContain("hnswlib");
    expect(rows[1]?.textContent).toContain("ef_search 64: 0.970 at 4,000");
    expect(screen.getByRole("img").getAttribute("aria-label")).toMatch(/2 of Sextant's own indexes and 1 from reference libraries/);
  });

  it("shows each index's latency, overlap with exact search and the hits exact search did not return", () => {
    const hit = (rank: number, chunk_id: string) => ({ rank, chunk_id, document_id: "espresso", score: 0.9 - rank / 10 });
    render(
      <ComparisonResult
        data={{
          query: "descale",
          k: 5,
          vectors: 120,
          indexes: [
            { index: "flat", hits: [hit(1, "a"), hit(2, "b")], latency_ms: 0.4, build_s: 0.001, overlap_with_exact: 1 },
            { index: "ivfpq", hits: [hit(1, "a"), hit(2, "z")], latency_ms: 0.1, build_s: 0.2, overlap_with_exact: 0.5 },
          ],
        }}
      />,
    );
    const answers = screen.getAllByTestId("lab-answer");
    expect(answers.map((a) => a.dataset.index)).toEqual(["flat", "ivfpq"]);
    expect(answers[1]?.textContent).toContain("50% overlap");
    expect(answers[1]?.textContent).toContain("not in exact search's top 2");
    expect(answers[0]?.textContent).not.toContain("not in exact");
    expect(screen.getByRole("meter", { name: "ivfpq overlap with exact search" }).getAttribute("aria-valuenow")).toBe("50");
    expect(screen.getByText("(1 of 2)")).toBeTruthy();
  });
});
