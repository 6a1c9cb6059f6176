import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { ComparisonResult } from "./ComparisonResult";

afterEach(cleanup);

describe("the Index Lab", () => {
  it("shows each index's latency, overlap with exact search and the hits exact search did not return", () => {
    const hit = (rank: number, chunk_id: string) => ({ rank, chunk_id, document_id: "espresso", cosine: 0.9 - rank / 10 });
    render(
      <ComparisonResult
        data={{
          query: "descale",
          k: 5,
          vectors: 120,
          answers: [
            { index: "flat", hits: [hit(1, "a"), hit(2, "b")], latency_ms: 0.4, build_seconds: 0.001, overlap_with_exact: 1 },
            { index: "ivfpq", hits: [hit(1, "a"), hit(2, "z")], latency_ms: 0.1, build_seconds: 0.2, overlap_with_exact: 0.5 },
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
    // Build time and each hit's cosine are read under the contract's own names (build_seconds, cosine).
    expect(screen.getByRole("rowheader", { name: "ivfpq" }).closest("tr")?.textContent).toContain("0.20 s");
    expect(answers[1]?.textContent).toContain("0.800");
  });
});
