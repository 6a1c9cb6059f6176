/** Every action by name for the command palette, and the single keys that run the ones with a shortcut. */
import { useEffect, useMemo } from "react";
import type { Command } from "@/components/CommandPalette";
import type { AskSession } from "@/features/ask/useAsk";
import type { DocumentsSession } from "@/features/documents/useDocuments";
import { modKey } from "@/lib/utils";

export type Page = "/" | "/lab";

/** For the shortcuts dialog; the single keys are the commands' own `shortcut`s. */
export const SHORTCUTS: [string, string][] = [
  [`${modKey} K`, "Open the command palette"],
  ["/", "Focus the question box"],
  ["Enter", "Ask (Shift+Enter for a new line)"],
  ["Esc", "Stop the answer, or close a dialog"],
  ["N", "New conversation"],
  ["U", "Upload files"],
  ["E", "Export this conversation as Markdown"],
  ["S", "Show the sources"],
  ["A", "Go to Ask"],
  ["L", "Go to the Index Lab"],
  ["?", "This list"],
];

interface Actions {
  session: AskSession;
  documents: DocumentsSession;
  /** Whether the agent runs with workspaces, so that there is one to delete. */
  workspaces: boolean;
  removeWorkspace: () => Promise<void>;
  /** Leave whatever is on screen for another conversation (stop the answer, close drawers, go to Ask). */
  switchTo: (action: () => void) => void;
  go: (page: Page) => void;
  showSources: () => void;
  showShortcuts: () => void;
}

export function useCommands({ session, documents, workspaces, removeWorkspace, switchTo, go, showSources, showShortcuts }: Actions) {
  const { conv, current, exportMarkdown, inputRef } = session;
  const { pickFiles, loadSample } = documents;
  return useMemo<Command[]>(
    () => [
      { id: "new", group: "Conversation", label: "New conversation", shortcut: "N", run: () => switchTo(conv.startNew) },
      { id: "export", group: "Conversation", label: "Export as Markdown", shortcut: "E", run: exportMarkdown },
      {
        id: "rename",
        group: "Conversation",
        label: "Rename this conversation",
        run: () => {
          const title = window.prompt("New name", current.title);
          if (title) conv.rename(current.id, title);
        },
      },
      {
        id: "delete",
        group: "Conversation",
        label: "Delete this conversation",
        run: () => {
          if (window.confirm(`Delete “${current.title}”?`)) conv.remove(current.id);
        },
      },
      { id: "upload", group: "Documents", label: "Upload files…", shortcut: "U", run: pickFiles },
      { id: "sample", group: "Documents", label: "Load the sample corpus", run: () => void loadSample() },
      ...(workspaces
        ? [{ id: "delete-workspace", group: "Workspace", label: "Delete this workspace", run: () => void removeWorkspace() }]
        : []),
      { id: "sources", group: "View", label: "Show the sources", shortcut: "S", run: showSources },
      { id: "ask", group: "Go to", label: "Ask", shortcut: "A", run: () => go("/") },
      { id: "lab", group: "Go to", label: "Index Lab", shortcut: "L", run: () => go("/lab") },
      { id: "focus", group: "Go to", label: "The question box", shortcut: "/", run: () => inputRef.current?.focus() },
      { id: "keys", group: "Help", label: "Keyboard shortcuts", shortcut: "?", run: showShortcuts },
      ...conv.list.map((c) => ({ id: `open-${c.id}`, group: "Open", label: c.title, run: () => switchTo(() => conv.open(c.id)) })),
    ],
    [conv, current, exportMarkdown, inputRef, pickFiles, loadSample, workspaces, removeWorkspace, switchTo, go, showSources, showShortcuts],
  );
}

function typingIn(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return !!el && (el.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName));
}

/** Mod-K toggles the palette; Esc stops a streaming answer; a command's single key runs it outside text fields and dialogs. */
export function useShortcutKeys(commands: Command[], stream: AskSession["stream"], togglePalette: () => void) {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.metaKey || e.ctrlKey) && e.key.toLowerCase() === "k") {
        e.preventDefault();
        togglePalette();
        return;
      }
      if (e.key === "Escape" && stream.streaming && !document.querySelector("dialog[open]")) {
        stream.stop();
        return;
      }
      if (e.metaKey || e.ctrlKey || e.altKey || typingIn(e.target) || document.querySelector("dialog[open]")) return;
      // Matched as typed, so Shift+N (e.key "N") runs nothing.
      const command = commands.find((c) => c.shortcut !== undefined && c.shortcut.toLowerCase() === e.key);
      if (!command) return;
      e.preventDefault();
      command.run();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [commands, stream, togglePalette]);
}
