/**
 * The evidence behind a citation: which statement of an answer a `[n]` belongs to, where that statement's
 * quoted words stand in passage n, and the passage reflowed for reading without losing those places.
 *
 * Evidence offsets count characters of the passage's text as the server holds it, hard line breaks and all.
 * The reader sees it reflowed (a line break inside a paragraph becomes a space, a word hyphenated at a line
 * end is joined, a blank line stays a paragraph break), so `reflow` returns, with the new text, the origin of
 * each character it kept; a span is moved onto the reflowed text through that map, never by re-searching.
 */
import type { AnswerStatement, Evidence } from "@/api/types";

export interface Reflowed {
  text: string;
  /** `origin[i]` is the offset in the source of reflowed character i; `origin[text.length]` is the source's length. */
  origin: number[];
}

/** A line that starts a list item or a table row keeps its line break. */
const LINE_START = /^(?:[-*•◦▪–·]\s|\d{1,3}[.)]\s|[a-z][.)]\s|\|)/;

export function reflow(source: string): Reflowed {
  let text = "";
  const origin: number[] = [];
  const emit = (s: string, at: number) => {
    text += s;
    for (let k = 0; k < s.length; k++) origin.push(at);
  };
  let i = 0;
  while (i < source.length) {
    const c = source[i] ?? "";
    if (!/\s/.test(c)) {
      emit(c, i);
      i++;
      continue;
    }
    let j = i;
    let breaks = 0;
    while (j < source.length && /\s/.test(source[j] ?? "")) {
      const w = source[j];
      if (w === "\n" || (w === "\r" && source[j + 1] !== "\n")) breaks++;
      j++;
    }
    if (breaks === 0 || j === source.length || text.length === 0) {
      if (breaks === 0) emit(source.slice(i, j), i); // spaces within a line are the text's own
      i = j;
      continue;
    }
    const rest = source.slice(j, j + 8);
    const lineEnd = text[text.length - 1] ?? "";
    if (breaks >= 2) emit("\n\n", i);
    else if (LINE_START.test(rest) || lineEnd === "|") emit("\n", i);
    else if (lineEnd === "-" && /\p{L}/u.test(text[text.length - 2] ?? "") && /^\p{Ll}/u.test(rest)) {
      text = text.slice(0, -1); // "descal-\ning" reads "descaling"
      origin.pop();
    } else emit(" ", i);
    i = j;
  }
  origin.push(source.length);
  return { text, origin };
}

/** The reflowed offset of source offset `at`: the first kept character at or after it. */
export function reflowedOffset(origin: number[], at: number): number {
  let lo = 0;
  let hi = origin.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((origin[mid] ?? 0) < at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Text with the whitespace and anything matching `skip` left out, and where each kept character stood. */
function significant(text: string, skip?: RegExp): { chars: string; at: number[] } {
  const skipped = new Uint8Array(text.length);
  if (skip) for (const m of text.matchAll(new RegExp(skip.source, "g"))) skipped.fill(1, m.index, m.index + m[0].length);
  let chars = "";
  const at: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? "";
    if (skipped[i] || /\s/.test(c)) continue;
    chars += c;
    at.push(i);
  }
  return { chars, at };
}

/** Where `needle` stands in `haystack`, comparing all but whitespace (and what `skip` matches): [start, end). */
export function looseFind(haystack: string, needle: string, skip?: RegExp, from = 0): [number, number] | null {
  const h = significant(haystack, skip);
  const n = significant(needle, skip).chars;
  if (!n) return null;
  const first = h.at.findIndex((offset) => offset >= from);
  if (first === -1) return null;
  const k = h.chars.indexOf(n, first);
  if (k === -1) return null;
  return [h.at[k] ?? 0, (h.at[k + n.length - 1] ?? 0) + 1];
}

/**
 * Where a quote stands in the passage: at its offsets when they hold it (the server checked them), else
 * wherever the passage holds its words (offsets from another version of the text); null if nowhere.
 */
export function locate(text: string, evidence: Evidence): [number, number] | null {
  const { start, end, quote } = evidence;
  if (end > start && text.slice(start, end) === quote) return [start, end];
  // The server counts code points, JavaScript UTF-16 units: they differ after any character beyond U+FFFF.
  const [s16, e16] = [utf16Offset(text, start), utf16Offset(text, end)];
  if (e16 > s16 && text.slice(s16, e16) === quote) return [s16, e16];
  const exact = quote ? text.indexOf(quote) : -1;
  if (exact !== -1) return [exact, exact + quote.length];
  return looseFind(text, quote);
}

function utf16Offset(text: string, codePoints: number): number {
  let units = 0;
  for (let n = 0; n < codePoints && units < text.length; n++) units += (text.codePointAt(units) ?? 0) > 0xffff ? 2 : 1;
  return units;
}

export interface Segment {
  text: string;
  marked: boolean;
}

/** `text` cut into runs inside and outside the `spans` (half-open, in any order, overlaps merged). */
export function segments(text: string, spans: Array<[number, number]>): Segment[] {
  const merged: Array<[number, number]> = [];
  for (const [s, e] of [...spans].sort((a, b) => a[0] - b[0])) {
    const start = Math.max(0, s);
    const end = Math.min(text.length, e);
    if (end <= start) continue;
    const last = merged[merged.length - 1];
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else merged.push([start, end]);
  }
  const out: Segment[] = [];
  let at = 0;
  for (const [start, end] of merged) {
    if (start > at) out.push({ text: text.slice(at, start), marked: false });
    out.push({ text: text.slice(start, end), marked: true });
    at = end;
  }
  if (at < text.length || out.length === 0) out.push({ text: text.slice(at), marked: false });
  return out;
}

/** A passage reflowed for reading with its evidence marked; `missing` counts quotes not found in it. */
export function markedPassage(text: string, evidence: Evidence[]): { segments: Segment[]; missing: number } {
  const { text: shown, origin } = reflow(text);
  const spans: Array<[number, number]> = [];
  let missing = 0;
  for (const item of evidence) {
    const at = locate(text, item);
    if (at) spans.push([reflowedOffset(origin, at[0]), reflowedOffset(origin, at[1])]);
    else missing++;
  }
  return { segments: segments(shown, spans), missing };
}

export const labelsOf = (statement: AnswerStatement): number[] => [...new Set((statement.evidence ?? []).map((e) => e.label))];

/**
 * The statement each citation of an answer belongs to, by the citations' order in the text (`labels`, one
 * entry per rendered `[n]`): statements are written in order, each followed by its evidence's labels, so a
 * citation belongs to the first statement from the current one on that cites its label and has not yet
 * been seen citing it. A label no statement cites belongs to none (null).
 */
export function statementsOfCitations(labels: number[], statements: AnswerStatement[]): Array<number | null> {
  const cites = statements.map((s) => new Set(labelsOf(s)));
  const seen = statements.map(() => new Set<number>());
  let current = 0;
  return labels.map((label) => {
    for (let k = current; k < statements.length; k++) {
      if (cites[k]?.has(label) && !seen[k]?.has(label)) {
        seen[k]?.add(label);
        current = k;
        return k;
      }
    }
    for (let k = Math.min(current, statements.length - 1); k >= 0; k--) if (cites[k]?.has(label)) return k; // cited twice
    return null;
  });
}

/** The evidence a statement takes from passage `label`. */
export function evidenceFor(statement: AnswerStatement | undefined, label: number): Evidence[] {
  return (statement?.evidence ?? []).filter((e) => e.label === label);
}

/** Why a passage was opened: the statement it was cited for (if any) and the words of it to mark. */
export interface PassageFocus {
  evidence: Evidence[];
  statement?: AnswerStatement;
}
