import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import type { LabDataset } from "@/api/types";
import { TradeoffChart } from "./TradeoffChart";

afterEach(cleanup);

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
});
