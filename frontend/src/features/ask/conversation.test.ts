import { describe, expect, it } from "vitest";
import type { AgentEvent } from "@/api/types";
import {
  applyEvent,
  buildRequest,
  mergePassages,
  newConversation,
  passageCitation,
  passagePlace,
  settle,
  startTurn,
  toMarkdown,
} from "@/features/ask/conversation";
import { answerEvent, passage } from "@/test/fixtures";

function play(events: AgentEvent[], question: string, start = newConversation()) {
  return events.reduce(applyEvent, startTurn(start, question));
}

const done: AgentEvent = { event: "done", request_id: "r", elapsed_ms: 10 };

describe("label continuity across turns", () => {
  const first = play(
    [
      { event: "tool_call", id: "c1", name: "kb_search", arguments: { query: "descale" }, turn: 0, forced: false },
      { event: "tool_result", id: "c1", name: "kb_search", ok: true, found: 2, abstained: false, labels: [1, 2], summary: "" },
      { event: "sources", passages: [passage(1), passage(2)] },
      { event: "token", text: "Every two months [1]." },
      answerEvent("Every two months [1]."),
      done,
    ],
    "How often should I descale?",
  );

  it("sends the passages it holds and the earlier turns with a follow-up", () => {
    const request = buildRequest(first, "And with soft water?");
    expect(request.passages?.map((p) => p.label)).toEqual([1, 2]);
    expect(request.history).toEqual([
      { role: "user", text: "How often should I descale?" },
      { role: "assistant", text: "Every two months [1]." },
    ]);
  });

  it("keeps what [1] meant when the next turn's sources arrive, and adds [3]", () => {
    const second = play(
      [
        { event: "sources", passages: [passage(1), passage(2), passage(3, { text: "Soft water: twice a year." })] },
        { event: "token", text: "Twice a year [3], unlike [1]." },
        answerEvent("Twice a year [3], unlike [1]."),
        done,
      ],
      "And with soft water?",
      first,
    );
    expect(second.passages.map((p) => p.label)).toEqual([1, 2, 3]);
    expect(second.passages[0]).toEqual(first.passages[0]);
    expect(second.turns.map((t) => t.status)).toEqual(["done", "done"]);
  });

  it("never loses a held passage when a frame omits it", () => {
    expect(mergePassages([passage(1), passage(2)], [passage(3)]).map((p) => p.label)).toEqual([1, 2, 3]);
  });
});

describe("a turn's events", () => {
  it("pairs tool results with their calls and records citation validity", () => {
    const c = play(
      [
        { event: "tool_call", id: "a", name: "kb_search", arguments: { query: "x" }, turn: 0, forced: false },
        { event: "tool_result", id: "a", name: "kb_search", ok: true, found: 0, abstained: true, labels: [], summary: "nothing" },
        { event: "citation", label: 4, valid: false },
        { event: "error", message: "the answer failed: boom", status: 500 },
        done,
      ],
      "q",
    );
    const turn = c.turns[0];
    expect(turn?.trace[0]?.result?.found).toBe(0);
    expect(turn?.citations[4]).toBe(false);
    expect(turn?.status).toBe("error");
    expect(turn?.error).toContain("boom");
  });

  it("marks a turn saved mid-stream as stopped when it is loaded again", () => {
    const c = startTurn(newConversation(), "q");
    expect(settle(c).turns[0]?.status).toBe("stopped");
  });

  it("exports the conversation as Markdown with its sources", () => {
    const c = play([{ event: "sources", passages: [passage(1)] }, answerEvent("Every two months [1]."), done], "How often?");
    const md = toMarkdown(c);
    expect(md).toContain("# How often?");
    expect(md).toContain("Every two months [1].");
    expect(md).toContain("[1] Caring for Your Home Espresso Machine, p. 1, Chapter 3. Descaling");
  });
});

describe("where a passage is", () => {
  it("is a page or a slide, written short or spoken in full, and nothing for a passage without pages", () => {
    expect(passagePlace(passage(1, { page: 5, page_label: "iv" }))).toBe("p. iv");
    expect(passagePlace(passage(1, { page: 5, page_label: "iv" }), "spoken")).toBe("page iv");
    expect(passagePlace(passage(1, { page: 7, page_label: "7", page_unit: "slide" }), "spoken")).toBe("slide 7");
    expect(passagePlace(passage(1, { page: null, page_label: null }))).toBeNull();
    expect(passageCitation(passage(2, { page: 3, page_label: "3", page_unit: "slide", section: "Roadmap" }))).toBe(
      "Caring for Your Home Espresso Machine, slide 3, Roadmap",
    );
  });
});
