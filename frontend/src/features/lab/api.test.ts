import { describe, expect, it } from "vitest";
import type { LabOverview } from "@/api/types";
import { labState } from "./api";

describe("the Index Lab", () => {
  it("treats an available lab with no datasets as unavailable, and keeps the agent's reason otherwise", () => {
    const empty: LabOverview = { available: true, reason: "", created: null, datasets: [] };
    expect(labState(empty)).toEqual({ state: "unavailable", why: "the agent's benchmark results hold no datasets" });
    expect(labState({ available: false, reason: "", created: null, datasets: [] })).toMatchObject({
      state: "unavailable",
      why: expect.stringMatching(/not available/),
    });
  });
});
