import { afterEach, describe, expect, it, vi } from "vitest";
import { messageFrom, newTraceparent, request } from "./http";

describe("request", () => {
  afterEach(() => vi.unstubAllGlobals());

  it("sends a W3C traceparent of its own with every request, and keeps the caller's headers", async () => {
    const fetched = vi.fn(async () => new Response("{}"));
    vi.stubGlobal("fetch", fetched);
    await request("/health", { headers: { Authorization: "Bearer t" } });
    await request("/health");
    const sent = fetched.mock.calls.map((call) => new Headers((call as unknown as [string, RequestInit])[1].headers));
    expect(sent[0]?.get("authorization")).toBe("Bearer t");
    const [first = "", second = ""] = sent.map((h) => h.get("traceparent") ?? "");
    expect(first).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(first.split("-")[1]).not.toBe(second.split("-")[1]);
  });

  it("keeps a traceparent the caller set", async () => {
    const fetched = vi.fn(async () => new Response("{}"));
    vi.stubGlobal("fetch", fetched);
    const mine = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    await request("/query", { headers: { traceparent: mine } });
    expect(new Headers((fetched.mock.calls[0] as unknown as [string, RequestInit])[1].headers).get("traceparent")).toBe(mine);
  });
});

describe("newTraceparent", () => {
  afterEach(() => vi.restoreAllMocks());

  it("draws again rather than send the all-zero ids the standard calls invalid", () => {
    let calls = 0;
    vi.spyOn(crypto, "getRandomValues").mockImplementation(<T extends ArrayBufferView | null>(array: T): T => {
      (array as unknown as Uint8Array).fill(calls++ === 0 ? 0 : 0xab);
      return array;
    });
    expect(newTraceparent()).toBe(`00-${"ab".repeat(16)}-${"ab".repeat(8)}-01`);
  });
});

describe("messageFrom", () => {
  it("tells when to retry a knowledge base that is down, as for a rate limit", () => {
    expect(messageFrom(503, "Service Unavailable", { detail: "the knowledge base is unavailable: starting" }, "5")).toBe(
      "the knowledge base is unavailable: starting (try again in 5 s)",
    );
  });
});
