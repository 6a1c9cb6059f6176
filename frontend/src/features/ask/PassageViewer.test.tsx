import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { useState } from "react";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { AnswerStatement, Passage } from "@/api/types";
import type { ChatTurn } from "@/features/ask/conversation";
import type { PassageFocus } from "@/features/ask/evidence";
import { PassageViewer } from "@/features/ask/PassageViewer";
import { Thread } from "@/features/ask/Thread";
import { answerEvent, passage } from "@/test/fixtures";

const TEXT = "Descale the machine every two\nmonths above 120 ppm. Rinse the\ntank twice after descal-\ning.";

function quoted(label: number, quote: string, text = TEXT) {
  const start = text.indexOf(quote);
  return { label, quote, start, end: start + quote.length };
}

const MONTHS: AnswerStatement = { text: "Descale every two months.", supported: true, evidence: [quoted(1, "every two\nmonths")] };
const RINSE: AnswerStatement = { text: "Rinse the tank twice.", supported: true, evidence: [quoted(1, "Rinse the\ntank twice")] };
const GUESS: AnswerStatement = { text: "Use filtered water.", supported: false, evidence: [] };
const ANSWER = "Descale every two months [1]. Rinse the tank twice [1]. Use filtered water.";

function turn(extra: Partial<ChatTurn> = {}): ChatTurn {
  return {
    id: "t1",
    question: "How often?",
    text: ANSWER,
    trace: [],
    citations: {},
    status: "done",
    answer: answerEvent(ANSWER),
    statements: [MONTHS, RINSE, GUESS],
    ...extra,
  };
}

/** The answer and the viewer wired as the page wires them. */
function Page({ passages, turns }: { passages: Passage[]; turns: ChatTurn[] }) {
  const [open, setOpen] = useState<{ passage: Passage; focus?: PassageFocus } | null>(null);
  return (
    <>
      <Thread turns={turns} passages={passages} onOpen={(p, focus) => setOpen({ passage: p, focus })} onRetry={() => undefined} />
      <PassageViewer passage={open?.passage ?? null} focus={open?.focus} onClose={() => setOpen(null)} />
    </>
  );
}

const marks = () => [...screen.getByTestId("passage-text").querySelectorAll("mark")].map((m) => m.textContent);

let scrolled: Element[] = [];

beforeAll(() => {
  HTMLDialogElement.prototype.showModal ??= function (this: HTMLDialogElement) {
    this.open = true; // jsdom has no modal dialogs
  };
  HTMLDialogElement.prototype.close ??= function (this: HTMLDialogElement) {
    this.open = false;
  };
  URL.createObjectURL ??= () => "blob:page"; // where the environment has no object URLs
  URL.revokeObjectURL ??= () => undefined;
});

beforeEach(() => {
  scrolled = [];
  Element.prototype.scrollIntoView = function (this: Element) {
    scrolled.push(this);
  };
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe("opening a citation shows its statement's quote in the passage", () => {
  const text = passage(1, { text: TEXT, source: "notes.md" });

  it("marks the quote of the statement whose citation was clicked, reflowed, and scrolls to it", () => {
    render(<Page passages={[text]} turns={[turn()]} />);
    const [first, second] = screen.getAllByRole("button", { name: /^Citation 1:/ });
    fireEvent.click(second as HTMLElement);
    expect(marks()).toEqual(["Rinse the tank twice"]);
    expect(screen.getByTestId("cited-for").textContent).toContain("Rinse the tank twice.");
    expect(screen.getByTestId("passage-text").textContent).toBe(
      "Descale the machine every two months above 120 ppm. Rinse the tank twice after descaling.",
    );
    expect(scrolled.map((e) => e.textContent)).toEqual(["Rinse the tank twice"]);

    fireEvent.click(screen.getByRole("button", { name: "Close" }));
    fireEvent.click(first as HTMLElement);
    expect(marks()).toEqual(["every two months"]);
  });

  it("marks nothing for a citation no statement carries, and every quote of a label from the cited list", () => {
    render(<Page passages={[text]} turns={[turn({ statements: [] })]} />);
    fireEvent.click(screen.getAllByRole("button", { name: /^Citation 1:/ })[0] as HTMLElement);
    expect(marks()).toEqual([]);
    expect(screen.queryByTestId("cited-for")).toBeNull();
    cleanup();
    render(<Page passages={[text]} turns={[turn()]} />);
    fireEvent.click(screen.getByRole("button", { name: /^\[1\]/ }));
    expect(marks()).toEqual(["every two months", "Rinse the tank twice"]);
  });

  it("marks an unsupported statement in the answer and in the viewer, in words as well as colour", () => {
    render(<Page passages={[text]} turns={[turn()]} />);
    const flagged = document.querySelector('[data-unsupported="true"]');
    expect(flagged?.textContent).toContain("Use filtered water.");
    expect(flagged?.textContent).toContain("(not supported by the passages it cites)");
    expect(document.querySelectorAll('[data-unsupported="true"]')).toHaveLength(1);
    expect(screen.getByTestId("unsupported-statements").textContent).toContain("Use filtered water.");
    cleanup();
    render(<PassageViewer passage={text} focus={{ statement: GUESS, evidence: [] }} onClose={() => undefined} />);
    expect(screen.getByTestId("cited-for").dataset.supported).toBe("false");
    expect(screen.getByTestId("unsupported").textContent).toMatch(/Not supported/);
  });

  it("says so when a quote is not in the passage it names", () => {
    const stale = { label: 1, quote: "descale weekly", start: 0, end: 14 };
    render(<PassageViewer passage={text} focus={{ statement: MONTHS, evidence: [stale] }} onClose={() => undefined} />);
    expect(marks()).toEqual([]);
    expect(screen.getByTestId("evidence-missing").textContent).toMatch(/not found/);
  });
});

describe("the page of a PDF passage", () => {
  const pdf = passage(1, { text: TEXT, source: "espresso-maintenance.pdf", page: 3, page_label: "3" });
  const focus = { statement: MONTHS, evidence: MONTHS.evidence ?? [] };

  function agent(image: { status: number; detail?: string }) {
    const calls: string[] = [];
    vi.stubGlobal("fetch", async (url: string) => {
      const { pathname, search } = new URL(url);
      calls.push(pathname + search);
      if (pathname === "/health") return Response.json({ status: "ok", workspaces: false });
      if (pathname.endsWith("/image")) {
        if (image.status !== 200) return Response.json({ detail: image.detail }, { status: image.status });
        return new Response(new Blob(["png"], { type: "image/png" }), { headers: { "X-Sextant-Highlights": "2" } });
      }
      return Response.json({ document_id: "espresso-maintenance", page: 3, text: "The whole of page three." });
    });
    return calls;
  }

  it("shows the page image with the statement's quote asked for, and the text on request", async () => {
    const calls = agent({ status: 200 });
    render(<PassageViewer passage={pdf} focus={focus} onClose={() => undefined} />);
    const image = await screen.findByRole("img", { name: /Page 3 of .*quoted words highlighted/ });
    expect(image.getAttribute("src")).toMatch(/^blob:/);
    const asked = calls.find((c) => c.includes("/image")) ?? "";
    expect(new URLSearchParams(asked.split("?")[1]).get("quote")).toBe("every two\nmonths");
    expect(marks()).toEqual(["every two months"]); // the passage keeps its mark beside the page
    fireEvent.click(screen.getByRole("button", { name: "Text" }));
    await screen.findByText("The whole of page three.");
    expect(screen.getByRole("button", { name: "Text" }).getAttribute("aria-pressed")).toBe("true");
  });

  it("falls back to the page's text when the agent has no image of it", async () => {
    agent({ status: 404, detail: "no page image: 'espresso-maintenance' has no page images: its original PDF is not kept" });
    render(<PassageViewer passage={pdf} focus={focus} onClose={() => undefined} />);
    await screen.findByText("The whole of page three.");
    expect(screen.getByTestId("no-page-image").textContent).toMatch(
      /^No image of this page: 'espresso-maintenance' .*original PDF is not kept/,
    );
    expect(screen.queryByRole("img")).toBeNull();
    expect(screen.queryByRole("group", { name: "Show the page as" })).toBeNull();
  });

  it("asks for no image for a passage that is not from a PDF", async () => {
    const calls = agent({ status: 200 });
    render(<PassageViewer passage={{ ...pdf, source: "notes.md" }} onClose={() => undefined} />);
    fireEvent.click(screen.getByRole("button", { name: /Show the whole page 3/ }));
    await waitFor(() => expect(screen.getByText("The whole of page three.")).toBeTruthy());
    expect(calls.some((c) => c.includes("/image"))).toBe(false);
  });

  it("names a deck's page a slide, in the details and for its whole text", async () => {
    const calls = agent({ status: 200 });
    const slide = { ...pdf, source: "workshop.pptx", page_unit: "slide" as const };
    render(<PassageViewer passage={slide} onClose={() => undefined} />);
    expect(screen.getByTestId("passage-page").previousElementSibling?.textContent).toBe("Slide");
    expect(screen.queryByRole("button", { name: /page/i })).toBeNull();
    fireEvent.click(screen.getByRole("button", { name: "Show the whole slide 3" }));
    const whole = await screen.findByRole("region", { name: "Slide 3" });
    expect(whole.textContent).toMatch(/^Slide 3/);
    expect(calls.some((c) => c.includes("/image"))).toBe(false);
  });
});
