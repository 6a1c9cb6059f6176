/**
 * Renders an answer's Markdown; every `[n]` becomes a citation control (see parseMarkdown.ts), told its
 * place among the answer's citations, and the statements named in `flagged` are marked as unsupported.
 */
// biome-ignore-all lint/suspicious/noArrayIndexKey: Markdown re-parsed on every token has no ids; a node's path of positions is its identity
import { Fragment, memo, type ReactNode, useMemo } from "react";
import { looseFind } from "@/features/ask/evidence";
import { type Block, type Inline, parseBlocks, parseInline } from "@/features/ask/parseMarkdown";
import { cn } from "@/lib/utils";

/** `ordinal`: this control's place among all the answer's citation controls, in reading order. */
export type CitationRenderer = (label: number, key: string, ordinal: number) => ReactNode;

interface MarkdownProps {
  text: string;
  streaming?: boolean;
  renderCitation: CitationRenderer;
  /** Statements to mark as not supported by their passages, wherever their words stand in the text. */
  flagged?: string[];
  className?: string;
}

/** What one render carries down the tree; the counter numbers citations in the order they are rendered. */
interface Ctx {
  cite: CitationRenderer;
  count: { n: number };
  flagged: string[];
}

const MARKER = /\[\d{1,4}(?:\s*,\s*\d{1,4})*\]/;

function inlines(nodes: Inline[], ctx: Ctx, prefix: string): ReactNode[] {
  return nodes.map((node, i) => {
    const key = `${prefix}.${i}`;
    switch (node.type) {
      case "text":
        return <Fragment key={key}>{node.text}</Fragment>;
      case "code":
        return (
          <code key={key} className="rounded bg-muted px-1 py-0.5 font-mono text-[0.85em]">
            {node.text}
          </code>
        );
      case "strong":
        return <strong key={key}>{inlines(node.children, ctx, key)}</strong>;
      case "em":
        return <em key={key}>{inlines(node.children, ctx, key)}</em>;
      case "link":
        return (
          <a key={key} href={node.href} target="_blank" rel="noreferrer noopener" className="text-primary underline">
            {inlines(node.children, ctx, key)}
          </a>
        );
      case "citation":
        return (
          <span key={key} className="whitespace-nowrap">
            {node.labels.map((label, j) => ctx.cite(label, `${key}.${j}`, ctx.count.n++))}
          </span>
        );
      default:
        return null;
    }
  });
}

/** Inline Markdown, with the words of any flagged statement wrapped in a mark that says so in words too. */
function text(s: string, ctx: Ctx, key: string): ReactNode[] {
  const spans: Array<[number, number]> = [];
  for (const statement of ctx.flagged) {
    const at = looseFind(s, statement, MARKER);
    if (at && !spans.some(([a, b]) => at[0] < b && a < at[1])) spans.push(at);
  }
  if (spans.length === 0) return inlines(parseInline(s), ctx, key);
  spans.sort((a, b) => a[0] - b[0]);
  const out: ReactNode[] = [];
  let at = 0;
  spans.forEach(([start, end], i) => {
    if (start > at) out.push(...inlines(parseInline(s.slice(at, start)), ctx, `${key}.p${i}`));
    out.push(
      <span
        key={`${key}.u${i}`}
        data-unsupported="true"
        title="Not supported by the passages it cites"
        className="underline decoration-destructive decoration-wavy decoration-1 underline-offset-4"
      >
        {inlines(parseInline(s.slice(start, end)), ctx, `${key}.u${i}`)}
        <span className="sr-only"> (not supported by the passages it cites)</span>
      </span>,
    );
    at = end;
  });
  if (at < s.length) out.push(...inlines(parseInline(s.slice(at)), ctx, `${key}.rest`));
  return out;
}

function blocks(nodes: Block[], ctx: Ctx, prefix: string): ReactNode[] {
  return nodes.map((block, i) => {
    const key = `${prefix}.${i}`;
    switch (block.type) {
      case "heading": {
        const size = ["text-xl", "text-lg", "text-base", "text-base", "text-sm", "text-sm"][block.level - 1];
        const Tag = `h${Math.min(block.level + 2, 6)}` as "h3";
        return (
          <Tag key={key} className={cn("mt-4 mb-2 font-semibold first:mt-0", size)}>
            {text(block.text, ctx, key)}
          </Tag>
        );
      }
      case "paragraph":
        return (
          <p key={key} className="my-2 leading-relaxed whitespace-pre-line first:mt-0">
            {text(block.text, ctx, key)}
          </p>
        );
      case "list": {
        const items = block.items.map((item, j) => <li key={j}>{blocks(item, ctx, `${key}.${j}`)}</li>);
        return block.ordered ? (
          <ol key={key} start={block.start} className="my-2 list-decimal space-y-1 pl-6 [&_p]:my-0">
            {items}
          </ol>
        ) : (
          <ul key={key} className="my-2 list-disc space-y-1 pl-6 [&_p]:my-0">
            {items}
          </ul>
        );
      }
      case "blockquote":
        return (
          <blockquote key={key} className="my-3 border-l-4 border-primary/30 bg-muted/40 py-1 pl-3 text-foreground/90">
            {blocks(block.children, ctx, key)}
          </blockquote>
        );
      case "code":
        return (
          <pre key={key} className="my-3 overflow-x-auto rounded-md bg-muted p-3 text-sm">
            <code className="font-mono">{block.text}</code>
          </pre>
        );
      case "hr":
        return <hr key={key} className="my-4" />;
      case "table":
        return (
          <div key={key} className="my-3 overflow-x-auto">
            <table className="w-full border-collapse text-sm">
              <thead>
                <tr>
                  {block.header.map((cell, c) => (
                    <th
                      key={c}
                      scope="col"
                      className="border bg-muted px-2 py-1 font-semibold"
                      style={{ textAlign: block.align[c] ?? "left" }}
                    >
                      {text(cell, ctx, `${key}.h${c}`)}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {block.rows.map((row, r) => (
                  <tr key={r}>
                    {row.map((cell, c) => (
                      <td key={c} className="border px-2 py-1 align-top" style={{ textAlign: block.align[c] ?? "left" }}>
                        {text(cell, ctx, `${key}.${r}.${c}`)}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        );
      default:
        return null;
    }
  });
}

const NONE: string[] = [];

export const Markdown = memo(function Markdown({ text: source, streaming, renderCitation, flagged = NONE, className }: MarkdownProps) {
  const parsed = useMemo(() => parseBlocks(source, { streaming }), [source, streaming]);
  // A fresh counter each render: the ordinals are a pure function of the text, as citationSequence computes them.
  const ctx: Ctx = { cite: renderCitation, count: { n: 0 }, flagged };
  return <div className={cn("text-[0.95rem] break-words", className)}>{blocks(parsed, ctx, "b")}</div>;
});
