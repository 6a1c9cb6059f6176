import { describe, expect, it } from "vitest";
import type { AgentEvent, AnswerStatement, Evidence } from "@/api/types";
import { applyEvent, newConversation, startTurn } from "@/features/ask/conversation";
import { locate, looseFind, markedPassage, reflow, reflowedOffset, segments, statementsOfCitations } from "@/features/ask/evidence";
import { citationSequence } from "@/features/ask/parseMarkdown";
import { answerEvent } from "@/test/fixtures";

const PDF_TEXT =
  "Chapter 3. Descaling\n\nDescale the machine every two\nmonths above 120 ppm. After descal-\ning, rinse the tank   \ntwice.\n- empty the tray\n- wipe the wand\n\n\nBackflush weekly.";

/** Evidence for `quote` at its first place in `text`, as the server sends it. */
function evidence(text: string, quote: string, label = 1): Evidence {
  const start = text.indexOf(quote);
  if (start === -1) throw new Error(`not in the text: ${quote}`);
  return { label, quote, start, end: start + quote.length };
}

describe("reflow", () => {
  const { text, origin } = reflow(PDF_TEXT);

  it("joins a paragraph's lines and a hyphenated word, keeps paragraph breaks and list lines", () => {
    expect(text).toBe(
      "Chapter 3. Descaling\n\nDescale the machine every two months above 120 ppm. After descaling, rinse the tank twice.\n- empty the tray\n- wipe the wand\n\nBackflush weekly.",
    );
  });

  it("maps every kept character to the character it came from", () => {
    expect(origin).toHaveLength(text.length + 1);
    expect(origin[text.length]).toBe(PDF_TEXT.length);
    for (let i = 0; i < text.length; i++) {
      const from = PDF_TEXT[origin[i] ?? -1] ?? "";
      if (/\S/.test(text[i] ?? "")) expect(from).toBe(text[i]);
      else expect(from).toMatch(/\s/); // a space or break stands for the whitespace it replaced
    }
    for (let i = 1; i < origin.length; i++) expect(origin[i]).toBeGreaterThanOrEqual(origin[i - 1] ?? 0);
  });

  it("moves a source span onto the reflowed text, across a line break and a joined hyphen", () => {
    const quote = "After descal-\ning, rinse the tank   \ntwice.";
    const start = PDF_TEXT.indexOf(quote);
    const [a, b] = [reflowedOffset(origin, start), reflowedOffset(origin, start + quote.length)];
    expect(text.slice(a, b)).toBe("After descaling, rinse the tank twice.");
  });

  it("leaves a text without line breaks as it is, and carriage returns count as line breaks", () => {
    expect(reflow("One  line, as  is.").text).toBe("One  line, as  is.");
    expect(reflow("two\r\nlines\r\rand a paragraph").text).toBe("two lines\n\nand a paragraph");
    expect(reflow("  \n lead and trail \n ").text).toBe("lead and trail");
  });
});

describe("locating and marking a quote", () => {
  it("takes the server's offsets when they hold the quote, else finds its words", () => {
    const good = evidence(PDF_TEXT, "every two\nmonths");
    expect(locate(PDF_TEXT, good)).toEqual([good.start, good.end]);
    expect(locate(PDF_TEXT, { ...good, start: 0, end: 5 })).toEqual([good.start, good.end]); // stale offsets
    const loose = locate(PDF_TEXT, { label: 1, quote: "every two months", start: 0, end: 0 }); // line break as a space
    expect(loose && PDF_TEXT.slice(...loose)).toBe("every two\nmonths");
    expect(locate(PDF_TEXT, { label: 1, quote: "never in it", start: 0, end: 11 })).toBeNull();
  });

  it("counts the server's offsets in code points, so a character beyond U+FFFF does not shift them", () => {
    const text = "🧪 Descale monthly.";
    expect(locate(text, { label: 1, quote: "Descale", start: 2, end: 9 })).toEqual([3, 10]);
  });

  it("marks the quote in the reflowed passage and says when one is missing", () => {
    const { segments: parts, missing } = markedPassage(PDF_TEXT, [
      evidence(PDF_TEXT, "every two\nmonths above 120 ppm."),
      { label: 1, quote: "not in this passage", start: 3, end: 22 },
    ]);
    expect(parts.filter((s) => s.marked).map((s) => s.text)).toEqual(["every two months above 120 ppm."]);
    expect(parts.map((s) => s.text).join("")).toBe(reflow(PDF_TEXT).text);
    expect(missing).toBe(1);
  });

  it("merges overlapping spans and keeps the text whole", () => {
    expect(
      segments("abcdefgh", [
        [5, 7],
        [1, 3],
        [2, 4],
      ]),
    ).toEqual([
      { text: "a", marked: false },
      { text: "bcd", marked: true },
      { text: "e", marked: false },
      { text: "fg", marked: true },
      { text: "h", marked: false },
    ]);
  });

  it("finds a statement in the answer whatever its spacing and citation markers", () => {
    const answer = "Descale every two months [1][2]. Rinse twice [3].";
    const at = looseFind(answer, "Descale every two months.", /\[\d+(?:,\s*\d+)*\]/);
    expect(at && answer.slice(...at)).toBe("Descale every two months [1][2].");
  });
});

const statement = (text: string, labels: number[], supported = true): AnswerStatement => ({
  text,
  supported,
  evidence: labels.map((label) => ({ label, quote: `${text} (from ${label})`, start: 0, end: 1 })),
});

describe("the statement behind each citation", () => {
  it("follows the answer's order, so a label cited by two statements opens each one's own quote", () => {
    const statements = [statement("Descale monthly.", [1, 2]), statement("No quote for this.", [], false), statement("Rinse twice.", [1])];
    const answer = "Descale monthly [1][2]. No quote for this. Rinse twice [1].";
    const labels = citationSequence(answer);
    expect(labels).toEqual([1, 2, 1]);
    expect(statementsOfCitations(labels, statements)).toEqual([0, 0, 2]);
  });

  it("gives a repeated or unknown label to the statement that cites it, or to none", () => {
    const statements = [statement("Descale monthly.", [1]), statement("Rinse twice.", [2])];
    expect(statementsOfCitations([1, 1, 2, 7], statements)).toEqual([0, 0, 1, null]);
    expect(statementsOfCitations([1], [])).toEqual([null]);
  });

  it("keeps each streamed statement by its index, and the answer's list replaces them", () => {
    const events: AgentEvent[] = [
      { event: "statement", index: 1, statement: statement("Rinse twice.", [2]) },
      { event: "statement", index: 0, statement: statement("Descale monthly.", [1]) },
    ];
    const streamed = events.reduce(applyEvent, startTurn(newConversation(), "How often?"));
    expect(streamed.turns[0]?.statements?.map((s) => s.text)).toEqual(["Descale monthly.", "Rinse twice."]);
    const final = { ...answerEvent("Descale monthly [1]."), statements: [statement("Descale monthly.", [1])] };
    expect(applyEvent(streamed, final).turns[0]?.statements?.map((s) => s.text)).toEqual(["Descale monthly."]);
    const bare = applyEvent(streamed, answerEvent("Descale monthly [1]. Rinse twice [2]."));
    expect(bare.turns[0]?.statements).toHaveLength(2); // an answer without its list keeps the streamed ones
  });
});
