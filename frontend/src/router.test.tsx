import { RouterProvider } from "@tanstack/react-router";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ToastProvider } from "@/components/ui/toast";
import { createAppRouter } from "./router";

/** The agent at the network boundary: no model, no workspaces, no documents, no Index Lab results. */
function agent(url: string): unknown {
  const path = new URL(url).pathname;
  if (path === "/health")
    return { status: "ok", workspaces: false, model: { configured: false, provider: "none", name: null, detail: "" } };
  if (path === "/documents") return { documents: [] };
  if (path === "/lab") return { available: false, reason: "no benchmark results", created: null, datasets: [] };
  return {};
}

function open(hash: string) {
  window.location.hash = hash;
  render(
    <ToastProvider>
      <RouterProvider router={createAppRouter()} />
    </ToastProvider>,
  );
}

beforeEach(() => {
  window.localStorage.clear();
  vi.stubGlobal("scrollTo", () => undefined); // the router resets the scroll on navigation; jsdom has no scrolling
  vi.stubGlobal(
    "fetch",
    async (url: string) => new Response(JSON.stringify(agent(url)), { headers: { "Content-Type": "application/json" } }),
  );
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  window.location.hash = "";
});

describe("the pages' addresses", () => {
  it("opens Ask at #/ and at no hash at all", async () => {
    open("");
    expect(await screen.findByTestId("onboarding")).toBeTruthy();
    expect(screen.queryByTestId("lab-page")).toBeNull();
  });

  it("opens the Index Lab at #/lab, and the nav marks it as the page shown", async () => {
    open("#/lab");
    expect(await screen.findByTestId("lab-page")).toBeTruthy();
    expect(screen.getByRole("link", { name: "Index Lab" }).getAttribute("aria-current")).toBe("page");
    expect(screen.getByRole("link", { name: "Ask" }).getAttribute("aria-current")).toBeNull();
  });

  it("sends an address it does not know to Ask", async () => {
    open("#/no-such-page");
    expect(await screen.findByTestId("onboarding")).toBeTruthy();
    await waitFor(() => expect(window.location.hash).toBe("#/"));
  });

  it("moves between the pages from the nav, and the hash follows", async () => {
    open("#/");
    await screen.findByTestId("onboarding");
    fireEvent.click(screen.getByRole("link", { name: "Index Lab" }));
    expect(await screen.findByTestId("lab-page")).toBeTruthy();
    expect(window.location.hash).toBe("#/lab");
    fireEvent.click(screen.getByRole("link", { name: "Ask" }));
    expect(await screen.findByTestId("onboarding")).toBeTruthy();
    expect(window.location.hash).toBe("#/");
  });
});
