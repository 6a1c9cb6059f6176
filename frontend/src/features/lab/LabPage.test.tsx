import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { LabPage } from "./LabPage";

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
});
