/** Renders an answer's Markdown; every `[n]` becomes a citation control (see lib/markdown.ts). */
import { Fragment, memo, useMemo, type ReactNode } from "react";
import { parseBlocks, parseInline, type Block, type Inline } from "@/lib/markdown";
import { cn } from "@/lib/utils";

export interface CitationRenderer {
  (label: number, key: string): ReactNode;
}

interface MarkdownProps {
  text: string;
  streaming?: boolean;
  renderCitation: CitationRenderer;
  className?: string;
}

function inlines(nodes: Inline[], cite: CitationRenderer, prefix: string): ReactNode[] {
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
        return <strong key={key}>{inlines(node.children, cite, key)}</strong>;
      case "em":
        return <em key={key}>{inlines(node.children, cite, key)}</em>;
      case "link":
        return (
          <a key={key} href={node.href} target="_blank" rel="noreferrer noopener" className="text-primary underline">
            {inlines(node.children, cite, key)}
          </a>
        );
      case "citation":
        return (
          <span key={key} className="whitespace-nowrap">
            {node.labels.map((label, j) => cite(label, `${key}.${j}`))}
          </span>
        );
      default:
        return null;
    }
  });
}

const text = (s: string, cite: CitationRenderer, key: string) => inlines(parseInline(s), cite, key);

function blocks(nodes: Block[], cite: CitationRenderer, prefix: string): ReactNode[] {
  return nodes.map((block, i) => {
    const key = `${prefix}.${i}`;
    switch (block.type) {
      case "heading": {
        const size = ["text-xl", "text-lg", "text-base", "text-base", "text-sm", "text-sm"][block.level - 1];
        const Tag = `h${Math.min(block.level + 2, 6)}` as "h3";
        return (
          <Tag key={key} className={cn("mt-4 mb-2 font-semibold first:mt-0", size)}>
            {text(block.text, cite, key)}
          </Tag>
        );
      }
      case "paragraph":
        return (
          <p key={key} className="my-2 leading-relaxed whitespace-pre-line first:mt-0">
            {text(block.text, cite, key)}
          </p>
        );
      case "list": {
        const items = block.items.map((item, j) => <li key={j}>{blocks(item, cite, `${key}.${j}`)}</li>);
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
            {blocks(block.children, cite, key)}
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
                    <th key={c} scope="col" className="border bg-muted px-2 py-1 font-semibold" style={{ textAlign: block.align[c] ?? "left" }}>
                      {text(cell, cite, `${key}.h${c}`)}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {block.rows.map((row, r) => (
                  <tr key={r}>
                    {row.map((cell, c) => (
                      <td key={c} className="border px-2 py-1 align-top" style={{ textAlign: block.align[c] ?? "left" }}>
                        {text(cell, cite, `${key}.${r}.${c}`)}
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

export const Markdown = memo(function Markdown({ text: source, streaming, renderCitation, className }: MarkdownProps) {
  const parsed = useMemo(() => parseBlocks(source, { streaming }), [source, streaming]);
  return <div className={cn("text-[0.95rem] break-words", className)}>{blocks(parsed, renderCitation, "b")}</div>;
});
