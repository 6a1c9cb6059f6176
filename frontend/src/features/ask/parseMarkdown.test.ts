import { describe, expect, it } from "vitest";
import { citedLabels, parseBlocks, parseInline } from "@/features/ask/parseMarkdown";

const TABLE = "Doses:\n\n| drink | grams |\n| --- | ---: |\n| single | 9 [1] |\n| double | 18 [2] |\n";

describe("blocks", () => {
  it("parses headings, lists, paragraphs, quotes, code and rules", () => {
    const blocks = parseBlocks("# Title\n\nSome text\nmore.\n\n- a\n- b\n\n1. one\n2. two\n\n> quoted [1]\n\n```py\nx = 1\n```\n\n---\n");
    expect(blocks.map((b) => b.type)).toEqual(["heading", "paragraph", "list", "list", "blockquote", "code", "hr"]);
    const [, , bullets, numbers] = blocks;
    expect(bullets?.type === "list" && !bullets.ordered && bullets.items.length).toBe(2);
    expect(numbers?.type === "list" && numbers.ordered && numbers.start).toBe(1);
  });

  it("parses a GFM table with alignment", () => {
    const table = parseBlocks(TABLE).find((b) => b.type === "table");
    expect(table).toEqual({
      type: "table",
      header: ["drink", "grams"],
      align: [null, "right"],
      rows: [
        ["single", "9 [1]"],
        ["double", "18 [2]"],
      ],
    });
  });

  it("renders a half-streamed table as a paragraph until its rule row is complete", () => {
    const types = (text: string) => parseBlocks(text, { streaming: true }).map((b) => b.type);
    expect(types("| drink | grams |")).toEqual(["paragraph"]);
    expect(types("| drink | grams |\n")).toEqual(["paragraph"]);
    expect(types("| drink | grams |\n| --- |")).toEqual(["paragraph"]); // too few cells yet
    expect(types("| drink | grams |\n| --- | --")).toEqual(["paragraph"]); // no newline yet: may grow
    expect(types("| drink | grams |\n| --- | --- |")).toEqual(["paragraph"]);
    expect(types("| drink | grams |\n| --- | --- |\n")).toEqual(["table"]);
    expect(types("| drink | grams |\n| --- | --- |\n| sin")).toEqual(["table"]);
    // Once the stream has ended, the last line is complete.
    expect(parseBlocks("| drink | grams |\n| --- | --- |").map((b) => b.type)).toEqual(["table"]);
  });

  it("never flickers: every prefix of a streamed table is paragraphs until it is a table, then stays one", () => {
    let seenTable = false;
    for (let n = 1; n <= TABLE.length; n++) {
      const blocks = parseBlocks(TABLE.slice(0, n), { streaming: true });
      const isTable = blocks.some((b) => b.type === "table");
      if (seenTable) expect(isTable).toBe(true);
      seenTable ||= isTable;
      for (const b of blocks) expect(["paragraph", "table"]).toContain(b.type);
    }
    expect(seenTable).toBe(true);
  });
});

describe("inline", () => {
  it("parses bold, italics, inline code and safe links", () => {
    expect(parseInline("**bold** and *it* and `x[1]`")).toEqual([
      { type: "strong", children: [{ type: "text", text: "bold" }] },
      { type: "text", text: " and " },
      { type: "em", children: [{ type: "text", text: "it" }] },
      { type: "text", text: " and " },
      { type: "code", text: "x[1]" },
    ]);
    expect(parseInline("[docs](https://example.org)")[0]).toMatchObject({ type: "link", href: "https://example.org" });
    expect(parseInline("[bad](javascript:alert(1))")[0]).toMatchObject({ type: "text" });
    expect(parseInline("snake_case_name")).toEqual([{ type: "text", text: "snake_case_name" }]);
  });

  it("keeps [3] a citation, never a link, whatever follows it", () => {
    expect(parseInline("[3](https://evil.example)")[0]).toEqual({ type: "citation", labels: [3], raw: "[3]" });
    expect(parseInline("see [1, 2][4]")).toEqual([
      { type: "text", text: "see " },
      { type: "citation", labels: [1, 2], raw: "[1, 2]" },
      { type: "citation", labels: [4], raw: "[4]" },
    ]);
    // A reference definition does not turn [3] into a link either.
    const blocks = parseBlocks("Brew at 93 °C [3].\n\n[3]: https://example.org");
    expect(blocks.every((b) => b.type === "paragraph")).toBe(true);
    expect(citedLabels("Brew [3].\n\n[3]: https://example.org\n\n| a |\n| - |\n| [5] |\n")).toEqual([3, 5]);
  });
});
