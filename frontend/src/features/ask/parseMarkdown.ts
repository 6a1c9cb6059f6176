/**
 * A small Markdown parser for answers as they stream: headings, paragraphs, bullet and numbered
 * lists, block quotes, fenced code, rules, GFM tables; inline bold, italics, code, links and
 * citations. Two rules the stock parsers do not give us:
 *
 * - A table is a table only once its rule row (`| --- | --- |`) is complete: the row has as many
 *   cells as the header and, while streaming, a newline after it. Until then the header renders
 *   as a paragraph, so a half-streamed table never flickers broken.
 * - `[3]` (or `[3, 4]`) is always a citation, never a link or a reference, whatever follows it.
 */

export type Inline =
  | { type: "text"; text: string }
  | { type: "code"; text: string }
  | { type: "strong"; children: Inline[] }
  | { type: "em"; children: Inline[] }
  | { type: "link"; href: string; children: Inline[] }
  | { type: "citation"; labels: number[]; raw: string };

export type Align = "left" | "center" | "right" | null;

export type Block =
  | { type: "heading"; level: number; text: string }
  | { type: "paragraph"; text: string }
  | { type: "list"; ordered: boolean; start: number; items: Block[][] }
  | { type: "blockquote"; children: Block[] }
  | { type: "code"; lang: string; text: string }
  | { type: "hr" }
  | { type: "table"; header: string[]; align: Align[]; rows: string[][] };

export interface ParseOptions {
  /** The text is still arriving: its last line may be incomplete. */
  streaming?: boolean;
}

const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+-]*)/;
const HR = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?/;
const ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])(?:[ \t]+(.*))?$/;
const RULE_CELL = /^\s*:?-{1,}:?\s*$/;

/** Cells of a table row: outer pipes optional, `\|` is a literal pipe. */
export function splitRow(line: string): string[] {
  let row = line.trim();
  if (row.startsWith("|")) row = row.slice(1);
  if (row.endsWith("|") && !row.endsWith("\\|")) row = row.slice(0, -1);
  const cells: string[] = [];
  let cell = "";
  for (let i = 0; i < row.length; i++) {
    if (row[i] === "\\" && row[i + 1] === "|") {
      cell += "|";
      i++;
    } else if (row[i] === "|") {
      cells.push(cell.trim());
      cell = "";
    } else cell += row[i];
  }
  cells.push(cell.trim());
  return cells;
}

function ruleRow(line: string, columns: number): Align[] | null {
  if (!line.includes("-") || !/^[\s|:-]+$/.test(line)) return null;
  const cells = splitRow(line);
  if (cells.length !== columns || !cells.every((c) => RULE_CELL.test(c))) return null;
  return cells.map((c) => {
    const left = c.startsWith(":");
    const right = c.endsWith(":");
    return left && right ? "center" : right ? "right" : left ? "left" : null;
  });
}

function isItem(line: string): RegExpMatchArray | null {
  return line.match(ITEM);
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

export function parseBlocks(text: string, options: ParseOptions = {}): Block[] {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  // While streaming, the last line has no newline yet: it may be a cut-off rule row.
  const complete = (i: number) => !options.streaming || i < lines.length - 1;
  const tableAt = (i: number): Align[] | null => {
    const head = lines[i];
    const rule = lines[i + 1];
    if (head === undefined || rule === undefined || !head.includes("|") || !complete(i + 1)) return null;
    return ruleRow(rule, splitRow(head).length);
  };
  const startsBlock = (i: number) => {
    const line = lines[i] ?? "";
    return HEADING.test(line) || FENCE.test(line) || HR.test(line) || QUOTE.test(line) || !!isItem(line) || !!tableAt(i);
  };

  const blocks: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] ?? "";
    if (line.trim() === "") {
      i++;
      continue;
    }
    const fence = line.match(FENCE);
    if (fence) {
      const marker = fence[1] ?? "```";
      const body: string[] = [];
      i++;
      while (i < lines.length && !(lines[i] ?? "").trim().startsWith(marker)) body.push(lines[i++] ?? "");
      i++; // the closing fence (or past the end)
      blocks.push({ type: "code", lang: fence[2] ?? "", text: body.join("\n") });
      continue;
    }
    const heading = line.match(HEADING);
    if (heading) {
      blocks.push({ type: "heading", level: (heading[1] ?? "#").length, text: heading[2] ?? "" });
      i++;
      continue;
    }
    if (HR.test(line)) {
      blocks.push({ type: "hr" });
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const body: string[] = [];
      while (i < lines.length && QUOTE.test(lines[i] ?? "")) body.push((lines[i++] ?? "").replace(QUOTE, ""));
      blocks.push({ type: "blockquote", children: parseBlocks(body.join("\n"), options) });
      continue;
    }
    const align = tableAt(i);
    if (align) {
      const header = splitRow(line);
      const rows: string[][] = [];
      i += 2;
      while (i < lines.length && (lines[i] ?? "").includes("|") && (lines[i] ?? "").trim() !== "") {
        const cells = splitRow(lines[i++] ?? "");
        rows.push(header.map((_, c) => cells[c] ?? ""));
      }
      blocks.push({ type: "table", header, align, rows });
      continue;
    }
    const item = isItem(line);
    if (item) {
      const ordered = /\d/.test(item[2] ?? "");
      const start = ordered ? Number.parseInt(item[2] ?? "1", 10) : 1;
      const items: string[][] = [];
      while (i < lines.length) {
        const current = lines[i] ?? "";
        const next = isItem(current);
        if (next && /\d/.test(next[2] ?? "") === ordered && indentOf(current) <= 3) {
          items.push([next[3] ?? ""]);
          i++;
          continue;
        }
        if (current.trim() === "") {
          // A blank line continues the list only when an item or indented content follows.
          const after = lines[i + 1] ?? "";
          if (items.length && (isItem(after) || (indentOf(after) >= 2 && after.trim() !== ""))) {
            items[items.length - 1]?.push("");
            i++;
            continue;
          }
          break;
        }
        if (indentOf(current) >= 2 || (!startsBlock(i) && items.length)) {
          items[items.length - 1]?.push(current.replace(/^ {2,4}/, ""));
          i++;
          continue;
        }
        break;
      }
      blocks.push({ type: "list", ordered, start, items: items.map((it) => parseBlocks(it.join("\n"), options)) });
      continue;
    }
    const body: string[] = [line];
    i++;
    while (i < lines.length && (lines[i] ?? "").trim() !== "" && !startsBlock(i)) body.push(lines[i++] ?? "");
    blocks.push({ type: "paragraph", text: body.join("\n") });
  }
  return blocks;
}

const CITATION = /^\[(\d{1,4}(?:\s*,\s*\d{1,4})*)\]/;
const LINK = /^\[([^\]\n]+)\]\(([^)\s]+)\)/;
const SAFE_HREF = /^(https?:|mailto:)/i;

export function parseInline(text: string): Inline[] {
  const out: Inline[] = [];
  let plain = "";
  const flush = () => {
    if (plain) out.push({ type: "text", text: plain });
    plain = "";
  };
  let i = 0;
  while (i < text.length) {
    const rest = text.slice(i);
    const c = text[i];
    if (c === "\\" && i + 1 < text.length && /[\\`*_[\]()#|>-]/.test(text[i + 1] ?? "")) {
      plain += text[i + 1];
      i += 2;
      continue;
    }
    if (c === "`") {
      const run = rest.match(/^`+/)?.[0] ?? "`";
      const close = text.indexOf(run, i + run.length);
      if (close !== -1) {
        flush();
        out.push({ type: "code", text: text.slice(i + run.length, close).trim() || text.slice(i + run.length, close) });
        i = close + run.length;
        continue;
      }
    }
    if (c === "[") {
      const citation = rest.match(CITATION);
      if (citation) {
        flush();
        const labels = (citation[1] ?? "").split(",").map((n) => Number.parseInt(n.trim(), 10));
        out.push({ type: "citation", labels, raw: citation[0] });
        i += citation[0].length;
        continue;
      }
      const link = rest.match(LINK);
      if (link && SAFE_HREF.test(link[2] ?? "")) {
        flush();
        out.push({ type: "link", href: link[2] ?? "", children: parseInline(link[1] ?? "") });
        i += link[0].length;
        continue;
      }
    }
    if (c === "*" || c === "_") {
      const double = text[i + 1] === c;
      const marker = double ? c + c : c;
      const prev = text[i - 1] ?? " ";
      const opens = text[i + marker.length] !== undefined && !/\s/.test(text[i + marker.length] ?? " ");
      const wordy = c === "_" && /\w/.test(prev); // snake_case is not emphasis
      if (opens && !wordy) {
        let close = text.indexOf(marker, i + marker.length);
        while (close !== -1 && (/\s/.test(text[close - 1] ?? " ") || (!double && text[close + 1] === c))) {
          close = text.indexOf(marker, close + marker.length);
        }
        if (close !== -1 && close > i + marker.length) {
          flush();
          const children = parseInline(text.slice(i + marker.length, close));
          out.push(double ? { type: "strong", children } : { type: "em", children });
          i = close + marker.length;
          continue;
        }
      }
    }
    plain += c;
    i++;
  }
  flush();
  return out;
}

/** Every citation label in a text, repeats kept, in the order the answer renders them (one per control). */
export function citationSequence(text: string, options: ParseOptions = {}): number[] {
  const labels: number[] = [];
  const walk = (inlines: Inline[]) => {
    for (const node of inlines) {
      if (node.type === "citation") labels.push(...node.labels);
      else if (node.type === "strong" || node.type === "em" || node.type === "link") walk(node.children);
    }
  };
  const visit = (blocks: Block[]) => {
    for (const b of blocks) {
      if (b.type === "paragraph" || b.type === "heading") walk(parseInline(b.text));
      else if (b.type === "list") for (const item of b.items) visit(item);
      else if (b.type === "blockquote") visit(b.children);
      else if (b.type === "table") for (const row of [b.header, ...b.rows]) for (const c of row) walk(parseInline(c));
    }
  };
  visit(parseBlocks(text, options));
  return labels;
}

/** Every citation label in a text, in order of first appearance. */
export function citedLabels(text: string): number[] {
  return [...new Set(citationSequence(text))];
}
