import { describe, expect, it } from "vitest";
import { readAgentEvents, SseParser, toAgentEvent } from "@/api/sse";
import type { AgentEvent } from "@/api/types";

const WIRE =
  'event: tool_call\ndata: {"event": "tool_call", "id": "c1", "name": "kb_search", "arguments": {"query": "café"}, "turn": 0, "forced": false}\n\n' +
  'event: token\ndata: {"event": "token", "text": "Use 18 g [1]."}\n\n' +
  'event: done\ndata: {"event": "done", "request_id": "r", "elapsed_ms": 5}\n\n';

describe("SseParser", () => {
  it("gives the same frames wherever the stream is cut", () => {
    const whole = new SseParser().push(WIRE);
    expect(whole.map((f) => f.event)).toEqual(["tool_call", "token", "done"]);
    for (let cut = 1; cut < WIRE.length; cut++) {
      const parser = new SseParser();
      const frames = [...parser.push(WIRE.slice(0, cut)), ...parser.push(WIRE.slice(cut))];
      expect(frames).toEqual(whole);
    }
  });

  it("follows the spec: CRLF and CR endings, comments, joined data lines, no space after the colon", () => {
    const parser = new SseParser();
    const frames = parser.push(": keep-alive\r\nevent: a\r\ndata: one\r\ndata:two\r\n\r\nevent: b\rdata: x\r\r");
    frames.push(...parser.push(": next"));
    expect(frames).toEqual([
      { event: "a", data: "one\ntwo" },
      { event: "b", data: "x" },
    ]);
  });

  it("keeps a CR that may be half of a CRLF until the next chunk", () => {
    const parser = new SseParser();
    expect(parser.push("data: a\r")).toEqual([]);
    expect(parser.push("\n\r\n")).toEqual([{ event: "message", data: "a" }]);
  });

  it("drops an unterminated frame at the end and frames with no data", () => {
    const parser = new SseParser();
    expect(parser.push("event: x\n\nevent: token\ndata: {}")).toEqual([]);
    expect(parser.end()).toEqual([]);
  });

  it("types only the agent's events", () => {
    expect(toAgentEvent({ event: "ping", data: "{}" })).toBeNull();
    expect(toAgentEvent({ event: "token", data: "not json" })).toBeNull();
    expect(toAgentEvent({ event: "token", data: '{"text": "hi"}' })).toEqual({ event: "token", text: "hi" });
  });
});

describe("readAgentEvents", () => {
  it("decodes a byte stream split inside multi-byte characters", async () => {
    const bytes = new TextEncoder().encode(WIRE);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 7) controller.enqueue(bytes.slice(i, i + 7));
        controller.close();
      },
    });
    const events: AgentEvent[] = [];
    await readAgentEvents(body, (e) => events.push(e));
    expect(events.map((e) => e.event)).toEqual(["tool_call", "token", "done"]);
    const call = events[0];
    expect(call?.event === "tool_call" && call.arguments.query).toBe("café");
  });
});
