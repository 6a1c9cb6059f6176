/** The private workspace in words: when it goes, what it may hold, that it went, and which saved sources went with it. */
import { Clock, FileX, TriangleAlert } from "lucide-react";
import { LOST_MESSAGE, type WorkspaceState } from "@/api/workspace";

const clock = (ms: number) => {
  const at = new Date(ms);
  const sameDay = at.toDateString() === new Date().toDateString();
  return sameDay
    ? at.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })
    : at.toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
};

/** For the foot of the sidebar: the workspace's expiry and limits, or that one is made on first use. */
export function WorkspaceNote({ state, asked }: { state: WorkspaceState; asked: number | null }) {
  if (!state.on) return null;
  const held = state.held;
  return (
    <section
      aria-label="Private workspace"
      data-testid="workspace-note"
      className="mt-auto rounded-md border p-2 text-xs text-muted-foreground"
    >
      <p className="flex items-center gap-1.5 font-medium text-foreground">
        <Clock aria-hidden="true" className="size-3.5 shrink-0" />
        {held ? <span data-testid="workspace-expiry">Private workspace — deleted at {clock(held.expiresAt)}</span> : "Private workspace"}
      </p>
      <p className="mt-1">
        {held
          ? `Your documents here are yours alone and are deleted with it. Up to ${held.limits.documents} documents, ${held.limits.file_mb} MB a file, ${held.limits.questions} questions${asked === null ? "" : ` (${asked} asked)`}.`
          : "Created with your first question or upload; it and its documents are deleted when it expires."}
      </p>
    </section>
  );
}

export function WorkspaceLostBanner({ state }: { state: WorkspaceState }) {
  if (!state.lost) return null;
  return (
    <div
      role="alert"
      data-testid="workspace-lost"
      className="flex items-center gap-2 border-b border-warning-foreground/30 bg-warning px-4 py-2 text-sm text-warning-foreground"
    >
      <TriangleAlert aria-hidden="true" className="size-4 shrink-0" />
      <span>{LOST_MESSAGE}</span>
    </div>
  );
}

/** Above a saved conversation whose sources were in a workspace this browser no longer holds. */
export function SourcesGoneNote() {
  return (
    <p
      role="note"
      data-testid="sources-gone"
      className="mb-4 flex items-start gap-2 rounded-md border border-dashed p-3 text-sm text-muted-foreground"
    >
      <FileX aria-hidden="true" className="mt-0.5 size-4 shrink-0" />
      <span>
        The documents this conversation cites were in a workspace that has since been deleted. The passages quoted here are kept in this
        browser, but their pages can no longer be opened, and a follow-up searches your current workspace.
      </span>
    </p>
  );
}
