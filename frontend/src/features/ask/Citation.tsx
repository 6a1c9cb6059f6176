/**
 * One citation label. With a passage behind it: a button that opens that passage, with the words of its
 * statement to mark there (`focus`). Without one (a dangling label): struck through in red, and said in
 * words too, since colour alone is not enough.
 */
import type { Passage } from "@/api/types";
import { passageCitation } from "@/features/ask/conversation";
import type { PassageFocus } from "@/features/ask/evidence";

interface CitationProps {
  label: number;
  passage: Passage | undefined;
  valid: boolean;
  onOpen: (passage: Passage, focus?: PassageFocus) => void;
  focus?: PassageFocus;
}

export function Citation({ label, passage, valid, onOpen, focus }: CitationProps) {
  if (!valid || !passage) {
    return (
      <s
        data-citation={label}
        data-dangling="true"
        className="mx-0.5 font-mono text-[0.8em] text-destructive decoration-2"
        title={`[${label}] names no passage the model was shown`}
      >
        [{label}]<span className="sr-only"> (citation with no passage behind it)</span>
      </s>
    );
  }
  return (
    <button
      type="button"
      data-citation={label}
      data-evidence={focus ? focus.evidence.length : undefined}
      onClick={() => (focus ? onOpen(passage, focus) : onOpen(passage))}
      title={passageCitation(passage)}
      aria-label={`Citation ${label}: ${passageCitation(passage)}`}
      className="mx-0.5 inline-flex h-5 min-w-5 -translate-y-px items-center justify-center rounded border border-primary/40 bg-accent px-1 align-baseline font-mono text-[0.75em] font-semibold text-accent-foreground hover:bg-primary hover:text-primary-foreground focus-visible:outline-2 focus-visible:outline-ring cursor-pointer"
    >
      {label}
    </button>
  );
}
