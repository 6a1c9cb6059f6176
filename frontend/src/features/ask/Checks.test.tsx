import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, expect, it } from "vitest";
import type { Verdict } from "@/api/types";
import { Checks } from "@/features/ask/Checks";

afterEach(cleanup);

const verdict = (rule: Verdict["rule"], passed: boolean, reason: Verdict["reason"], extra: Partial<Verdict> = {}): Verdict => ({
  rule,
  passed,
  reason,
  label: null,
  quote: null,
  detail: "",
  score: null,
  ...extra,
});

it("shows each statement kept or removed by the rule that removed it, with every verdict in order", () => {
  render(
    <Checks
      kept={[
        {
          text: "Brew at 93 degrees.",
          evidence: [],
          supported: true,
          trail: [verdict("quote", true, "found", { label: 1 }), verdict("supported", true, "evidence")],
        },
      ]}
      removed={[
        {
          text: "Employees get 27 days.",
          quotes: [{ label: 2, quote: "a fictional company" }],
          check: "quote",
          trail: [verdict("says", false, "misses_number", { label: 2, detail: "27" }), verdict("supported", false, "no_evidence")],
        },
        {
          text: "Use citric acid.",
          quotes: [],
          check: "answer",
          trail: [verdict("answer_check", false, "does_not_answer", { detail: "P(yes) = 0.100", score: 0.1 })],
        },
      ]}
    />,
  );
  const statements = screen.getAllByTestId("checked-statement");
  expect(statements.map((s) => s.dataset.fate)).toEqual(["kept", "removed", "removed"]);
  expect(statements[1]?.textContent).toContain("removed by supported");
  expect(statements[1]?.textContent).toContain("says the claim [2]: misses number (27)");
  expect(statements[2]?.textContent).toContain("removed by answer check");
  expect(statements[2]?.textContent).toContain("does not answer (P(yes) = 0.100)");
  const first = statements[0]?.querySelectorAll("[data-testid=verdict]") ?? [];
  expect(Array.from(first).map((v) => v.textContent)).toEqual(["quote [1]: found", "supported: evidence"]);
  expect(Array.from(first).map((v) => (v as HTMLElement).dataset.passed)).toEqual(["true", "true"]);
});

it("shows nothing for an answer whose statements were not checked (excerpts)", () => {
  const { container } = render(<Checks kept={[{ text: "An excerpt.", evidence: [], supported: true }]} removed={[]} />);
  expect(container.textContent).toBe("");
});
