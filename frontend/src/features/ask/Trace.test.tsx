import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, expect, it } from "vitest";
import { Trace } from "@/features/ask/Trace";

afterEach(cleanup);

it("labels a search that found nothing in words and its own style, next to the search that followed", () => {
  render(
    <Trace
      streaming={false}
      steps={[
        {
          call: { event: "tool_call", id: "a", name: "kb_search", arguments: { query: "zelvatrine dose" }, turn: 0, forced: false },
          result: {
            event: "tool_result",
            id: "a",
            name: "kb_search",
            ok: true,
            found: 0,
            abstained: true,
            labels: [],
            summary: "no passages",
          },
        },
        {
          call: { event: "tool_call", id: "b", name: "kb_search", arguments: { query: "LUMEN-2 dose" }, turn: 1, forced: false },
          result: {
            event: "tool_result",
            id: "b",
            name: "kb_search",
            ok: true,
            found: 2,
            abstained: false,
            labels: [1, 2],
            summary: "2 passages",
          },
        },
      ]}
    />,
  );
  const steps = screen.getAllByTestId("trace-step");
  expect(steps.map((s) => s.dataset.outcome)).toEqual(["nothing-found", "found"]);
  expect(steps[0]?.textContent).toContain("nothing found");
  expect(steps[0]?.className).toContain("border-dashed");
  expect(steps[1]?.textContent).toContain("found 2 → [1], [2]");
  expect(steps[0]?.textContent).toContain('query: "zelvatrine dose"');
});
