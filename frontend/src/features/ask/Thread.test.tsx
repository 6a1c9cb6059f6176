import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ChatTurn } from "@/features/ask/conversation";
import { Thread } from "@/features/ask/Thread";
import { answerEvent, passage } from "@/test/fixtures";

afterEach(cleanup);

function turn(text: string, extra: Partial<ChatTurn> = {}): ChatTurn {
  return { id: "t1", question: "How often?", text, trace: [], citations: {}, status: "done", ...extra };
}

describe("citations in an answer", () => {
  it("renders each [n] with a passage as a control that opens exactly that passage", () => {
    const onOpen = vi.fn();
    const passages = [passage(1), passage(2)];
    render(<Thread turns={[turn("Descale every two months [2].")]} passages={passages} onOpen={onOpen} onRetry={() => undefined} />);
    const button = screen.getByRole("button", { name: /^Citation 2:/ });
    expect(button.textContent).toBe("2");
    expect(button.getAttribute("aria-label")).toContain("p. 2, Chapter 3. Descaling");
    fireEvent.click(button);
    expect(onOpen).toHaveBeenCalledWith(passages[1]);
    expect(document.querySelector("a")).toBeNull(); // never a link
  });

  it("strikes through a dangling label in red and says so in words", () => {
    const streaming = turn("Use 18 g [1] and [4]", { status: "streaming", citations: { 1: true, 4: false } });
    render(<Thread turns={[streaming]} passages={[passage(1)]} onOpen={() => undefined} onRetry={() => undefined} />);
    const dangling = document.querySelector('[data-citation="4"]');
    expect(dangling?.tagName).toBe("S");
    expect(dangling?.className).toContain("text-destructive");
    expect(dangling?.textContent).toContain("no passage behind it");
    expect(screen.queryByRole("button", { name: /^Citation 4/ })).toBeNull();
    expect(screen.getByRole("button", { name: /^Citation 1/ })).toBeTruthy();
  });

  it("lists labels the server removed from the final answer, struck through", () => {
    const done = turn("Use 18 g [1].", { answer: answerEvent("Use 18 g [1].", [4]) });
    render(<Thread turns={[done]} passages={[passage(1)]} onOpen={() => undefined} onRetry={() => undefined} />);
    const note = screen.getByTestId("dangling");
    expect(note.querySelector('s[data-citation="4"]')).not.toBeNull();
  });

  it("tells the reader what the answer check left out, once the answer is complete", () => {
    const answer = answerEvent("The documents do not answer this question.");
    answer.verification.not_answering = ["Brew at 93 degrees."];
    const done = turn(answer.text, { answer });
    render(<Thread turns={[done]} passages={[passage(1)]} onOpen={() => undefined} onRetry={() => undefined} />);
    const note = screen.getByTestId("not-answering");
    expect(note.textContent).toContain("Left out: a statement whose passages do not answer the question");
    expect(note.querySelector("li")?.textContent).toBe("Brew at 93 degrees.");
    cleanup();
    render(
      <Thread
        turns={[turn("Use 18 g [1].", { answer: answerEvent("Use 18 g [1].") })]}
        passages={[passage(1)]}
        onOpen={() => undefined}
        onRetry={() => undefined}
      />,
    );
    expect(screen.queryByTestId("not-answering")).toBeNull();
  });

  it("keeps a citation inside a table cell and a half-streamed table as text", () => {
    const table = "| drink | grams |\n| --- | --- |\n| double | 18 [1] |\n";
    render(<Thread turns={[turn(table)]} passages={[passage(1)]} onOpen={() => undefined} onRetry={() => undefined} />);
    expect(screen.getByRole("table").querySelector('button[data-citation="1"]')).not.toBeNull();
    cleanup();
    render(
      <Thread
        turns={[turn("| drink | grams |\n| --- |", { status: "streaming" })]}
        passages={[]}
        onOpen={() => undefined}
        onRetry={() => undefined}
      />,
    );
    expect(screen.queryByRole("table")).toBeNull();
  });
});
