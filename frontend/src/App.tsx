/** The page: header, conversations, the thread and its composer, sources; the Index Lab on #/lab. */
import { BookOpen, Command as CommandIcon, FileUp, FlaskConical, Keyboard, Menu, MessageSquare } from "lucide-react";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { deleteWorkspace, getDocuments } from "@/api/client";
import type { DocumentEntry, Passage } from "@/api/types";
import { ensureWorkspace, forget, workspaceState } from "@/api/workspace";
import { HealthBanner } from "@/shell/HealthBanner";
import { CommandPalette, ShortcutsDialog, type Command } from "@/components/CommandPalette";
import { Composer } from "@/features/ask/Composer";
import { Onboarding } from "@/features/ask/Onboarding";
import { PassageViewer } from "@/features/ask/PassageViewer";
import { Sidebar } from "@/features/ask/Sidebar";
import { Sources } from "@/features/ask/Sources";
import { Thread } from "@/features/ask/Thread";
import { ACCEPT, DropOverlay, UploadDialog, useUpload, type FileResult } from "@/features/documents/Upload";
import { SourcesGoneNote, WorkspaceLostBanner, WorkspaceNote } from "@/features/workspace/Workspace";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";
import { Kbd } from "@/components/ui/kbd";
import { useToast } from "@/components/ui/toast";
import { useAgentStream } from "@/features/ask/useAgentStream";
import { useConversations } from "@/features/ask/useConversations";
import { useHealth } from "@/shell/useHealth";
import { useWorkspace } from "@/features/workspace/useWorkspace";
import { LabPage } from "@/features/lab/LabPage";
import { applyEvent, buildRequest, startTurn, stopLast, toMarkdown } from "@/features/ask/conversation";
import type { PassageFocus } from "@/features/ask/evidence";
import { citedLabels } from "@/features/ask/parseMarkdown";
import { FIRST_RUN_KEY } from "@/features/ask/storage";
import { cn, modKey } from "@/lib/utils";

type Page = "ask" | "lab";
const pageFromHash = (): Page => (window.location.hash.startsWith("#/lab") ? "lab" : "ask");

const SHORTCUTS: [string, string][] = [
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

function typingIn(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return !!el && (el.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName));
}

export function App() {
  const toast = useToast();
  const [health, refreshHealth] = useHealth();
  const workspace = useWorkspace();
  const { refresh: refreshWorkspace } = workspace;
  const conv = useConversations(
    useCallback((n: number) => toast("info", `Removed the ${n} oldest conversation${n > 1 ? "s" : ""} to make room`), [toast]),
    useCallback((m: string) => toast("error", "Could not save the conversation", m), [toast]),
  );
  const { current } = conv;
  const stream = useAgentStream();
  const [page, setPage] = useState<Page>(pageFromHash);
  const [open, setOpen] = useState<{ passage: Passage; focus?: PassageFocus } | null>(null);
  const openPassage = useCallback((passage: Passage, focus?: PassageFocus) => setOpen({ passage, focus }), []);
  const [palette, setPalette] = useState(false);
  const [shortcuts, setShortcuts] = useState(false);
  const [drawer, setDrawer] = useState<"conversations" | "sources" | null>(null);
  const [documents, setDocuments] = useState<DocumentEntry[] | null>(null);
  const [firstRun, setFirstRun] = useState(() => !window.localStorage.getItem(FIRST_RUN_KEY));
  const [loadingSample, setLoadingSample] = useState(false);
  const inputRef = useRef<HTMLTextAreaElement>(null);
  const fileRef = useRef<HTMLInputElement>(null);
  const scrollRef = useRef<HTMLDivElement>(null);

  const refreshDocuments = useCallback(() => {
    getDocuments()
      .then(setDocuments)
      .catch(() => setDocuments((d) => d ?? []));
  }, []);
  // A workspace created, lost or deleted changes which documents there are.
  const heldId = workspace.held?.id;
  useEffect(refreshDocuments, [refreshDocuments, heldId]);

  const onUploaded = useCallback(
    (results: FileResult[]) => {
      const ok = results.filter((r) => r.status !== "refused").length;
      const refused = results.length - ok;
      toast(refused ? "error" : "success", `${ok} file${ok === 1 ? "" : "s"} added${refused ? `, ${refused} refused` : ""}`);
      refreshDocuments();
    },
    [toast, refreshDocuments],
  );
  const uploads = useUpload(onUploaded);

  useEffect(() => {
    const onHash = () => setPage(pageFromHash());
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);
  const go = (p: Page) => {
    window.location.hash = p === "lab" ? "#/lab" : "#/";
    setPage(p);
  };

  const ask = useCallback(
    async (question: string) => {
      if (stream.streaming) return;
      if (pageFromHash() !== "ask") go("ask");
      const id = conv.current.id;
      const request = buildRequest(conv.current, question);
      conv.update((c) => startTurn(c, question), true);
      const outcome = await stream.ask(request, (event) => {
        conv.update((c) => {
          if (c.id !== id) return c;
          const next = applyEvent(c, event);
          return event.event === "sources" ? { ...next, workspace: workspaceState().held?.id } : next;
        }, event.event === "done");
        if (event.event === "error") toast("error", "The answer failed", event.message);
      });
      if (outcome === "stopped") conv.update((c) => (c.id === id ? stopLast(c) : c), true);
      refreshWorkspace();
      inputRef.current?.focus();
    },
    [stream, conv, toast, refreshWorkspace],
  );

  const retry = useCallback(() => {
    const last = conv.current.turns[conv.current.turns.length - 1];
    if (!last) return;
    conv.update((c) => ({ ...c, turns: c.turns.slice(0, -1) }));
    void ask(last.question);
  }, [conv, ask]);

  const switchTo = useCallback(
    (action: () => void) => {
      stream.stop();
      action();
      setDrawer(null);
      go("ask");
    },
    [stream],
  );

  const exportMarkdown = useCallback(() => {
    if (current.turns.length === 0) {
      toast("info", "Nothing to export yet", "Ask a question first.");
      return;
    }
    const blob = new Blob([toMarkdown(current)], { type: "text/markdown" });
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = `sextant-${current.title.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "") || "conversation"}.md`;
    a.click();
    URL.revokeObjectURL(a.href);
  }, [current, toast]);

  /** How many more documents may be added: a workspace's limit less what it holds; no limit without workspaces. */
  const roomForDocuments = useCallback(async () => {
    const held = await ensureWorkspace();
    return held ? Math.max(0, held.limits.documents - (documents?.length ?? 0)) : Infinity;
  }, [documents]);

  const loadSample = useCallback(async () => {
    setLoadingSample(true);
    try {
      let names = (await (await fetch("/sample/index.json")).json()) as string[];
      const room = await roomForDocuments();
      if (room === 0) {
        toast("error", "This workspace is full", "Delete it (command palette) to start an empty one.");
        return;
      }
      if (room < names.length) {
        names = names.slice(0, room);
        toast("info", `Loading ${room} of the sample documents`, "That is all this workspace has room for.");
      }
      const files = await Promise.all(
        names.map(async (name) => new File([await (await fetch(`/sample/${encodeURIComponent(name)}`)).blob()], name)),
      );
      await uploads.upload(files);
    } catch (error) {
      toast("error", "Could not load the sample corpus", (error as Error).message);
    } finally {
      setLoadingSample(false);
    }
  }, [uploads, toast, roomForDocuments]);

  const removeWorkspace = useCallback(async () => {
    if (!workspace.held) {
      toast("info", "No workspace to delete", "One is created with your first question or upload.");
      return;
    }
    const count = documents?.length ?? 0;
    if (!window.confirm(`Delete this workspace and its ${count} document${count === 1 ? "" : "s"}? This cannot be undone.`)) return;
    try {
      const { status } = await deleteWorkspace();
      forget();
      switchTo(conv.startNew);
      toast("success", "Workspace deleted", status === "deleting" ? "Its documents go as soon as the answer running in it ends." : undefined);
    } catch (error) {
      toast("error", "Could not delete the workspace", (error as Error).message);
    }
  }, [workspace.held, documents, toast, switchTo, conv.startNew]);

  const dismissWelcome = () => {
    window.localStorage.setItem(FIRST_RUN_KEY, "1");
    setFirstRun(false);
  };

  const commands = useMemo<Command[]>(
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
      { id: "upload", group: "Documents", label: "Upload files…", shortcut: "U", run: () => fileRef.current?.click() },
      { id: "sample", group: "Documents", label: "Load the sample corpus", run: () => void loadSample() },
      ...(workspace.on
        ? [{ id: "delete-workspace", group: "Workspace", label: "Delete this workspace", run: () => void removeWorkspace() }]
        : []),
      { id: "sources", group: "View", label: "Show the sources", shortcut: "S", run: () => setDrawer("sources") },
      { id: "ask", group: "Go to", label: "Ask", shortcut: "A", run: () => go("ask") },
      { id: "lab", group: "Go to", label: "Index Lab", shortcut: "L", run: () => go("lab") },
      { id: "focus", group: "Go to", label: "The question box", shortcut: "/", run: () => inputRef.current?.focus() },
      { id: "keys", group: "Help", label: "Keyboard shortcuts", shortcut: "?", run: () => setShortcuts(true) },
      ...conv.list.map((c) => ({ id: `open-${c.id}`, group: "Open", label: c.title, run: () => switchTo(() => conv.open(c.id)) })),
    ],
    [conv, current, exportMarkdown, loadSample, switchTo, workspace.on, removeWorkspace],
  );

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.metaKey || e.ctrlKey) && e.key.toLowerCase() === "k") {
        e.preventDefault();
        setPalette((p) => !p);
        return;
      }
      if (e.key === "Escape" && stream.streaming && !document.querySelector("dialog[open]")) {
        stream.stop();
        return;
      }
      if (e.metaKey || e.ctrlKey || e.altKey || typingIn(e.target) || document.querySelector("dialog[open]")) return;
      const run = (id: string) => {
        e.preventDefault();
        commands.find((c) => c.id === id)?.run();
      };
      if (e.key === "/") run("focus");
      else if (e.key === "?") run("keys");
      else if (e.key === "n") run("new");
      else if (e.key === "u") run("upload");
      else if (e.key === "e") run("export");
      else if (e.key === "s") run("sources");
      else if (e.key === "a") run("ask");
      else if (e.key === "l") run("lab");
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [commands, stream]);

  // Follow the answer as it streams, unless the reader has scrolled up.
  const lastText = current.turns[current.turns.length - 1]?.text.length ?? 0;
  useEffect(() => {
    const el = scrollRef.current;
    if (el && el.scrollHeight - el.scrollTop - el.clientHeight < 160) el.scrollTop = el.scrollHeight;
  }, [lastText, current.turns.length]);

  const sourcesGone = workspace.on === true && current.workspace !== undefined && current.workspace !== workspace.held?.id;
  const cited = useMemo(() => new Set(current.turns.flatMap((t) => citedLabels(t.text))), [current.turns]);
  const sources = (
    <Sources passages={current.passages} cited={cited} loading={stream.streaming} onOpen={openPassage} />
  );
  const sidebar = (
    <Sidebar
      list={conv.list}
      currentId={current.id}
      onOpen={(id) => switchTo(() => conv.open(id))}
      onNew={() => switchTo(conv.startNew)}
      onRename={conv.rename}
      onDelete={conv.remove}
    >
      <WorkspaceNote state={workspace} asked={workspace.asked} />
    </Sidebar>
  );

  return (
    <div className="flex h-full flex-col">
      <a href="#question" className="sr-only focus:not-sr-only focus:absolute focus:top-2 focus:left-2 focus:z-50 focus:rounded focus:bg-card focus:p-2">
        Skip to the question box
      </a>
      <header className="flex items-center gap-2 border-b px-3 py-2">
        <Button variant="ghost" size="icon" className="md:hidden" aria-label="Conversations" onClick={() => setDrawer("conversations")}>
          <Menu />
        </Button>
        <a href="#/" className="flex items-center gap-2 font-semibold" aria-label="Sextant, home">
          <svg viewBox="0 0 32 32" className="size-5" aria-hidden="true">
            <path d="M4 28 L16 4 L28 28 Z" fill="var(--color-primary)" />
          </svg>
          <span>Sextant</span>
        </a>
        <nav aria-label="Pages" className="ml-2 flex gap-1">
          <Button variant={page === "ask" ? "secondary" : "ghost"} size="sm" aria-current={page === "ask" ? "page" : undefined} onClick={() => go("ask")}>
            <MessageSquare /> <span className="hidden sm:inline">Ask</span>
          </Button>
          <Button variant={page === "lab" ? "secondary" : "ghost"} size="sm" aria-current={page === "lab" ? "page" : undefined} onClick={() => go("lab")}>
            <FlaskConical /> <span className="hidden sm:inline">Index Lab</span>
          </Button>
        </nav>
        <div className="ml-auto flex items-center gap-1">
          <span
            className={cn(
              "hidden items-center gap-1.5 rounded-full border px-2 py-0.5 text-xs sm:flex",
              health.state === "down" && "border-destructive/50 text-destructive",
            )}
            title={health.state === "ok" ? health.health.model.detail : undefined}
          >
            <span
              aria-hidden="true"
              className={cn(
                "size-2 rounded-full",
                health.state === "ok" ? (health.health.status === "ok" ? "bg-success" : "bg-warning-foreground") : health.state === "down" ? "bg-destructive" : "bg-muted-foreground",
              )}
            />
            {health.state === "loading"
              ? "connecting…"
              : health.state === "down"
                ? "agent offline"
                : health.health.model.configured
                  ? `model: ${health.health.model.name ?? health.health.model.provider}`
                  : "excerpts only"}
          </span>
          <Button variant="ghost" size="icon" className="lg:hidden" aria-label="Sources" onClick={() => setDrawer("sources")}>
            <BookOpen />
          </Button>
          <Button variant="outline" size="sm" onClick={() => fileRef.current?.click()} aria-label="Upload files">
            <FileUp /> <span className="hidden sm:inline">Upload</span>
          </Button>
          <Button variant="ghost" size="sm" onClick={() => setPalette(true)} aria-label="Command palette" aria-keyshortcuts="Control+K Meta+K">
            <CommandIcon /> <Kbd className="hidden sm:inline">{modKey} K</Kbd>
          </Button>
          <Button variant="ghost" size="icon" className="hidden sm:inline-flex" onClick={() => setShortcuts(true)} aria-label="Keyboard shortcuts">
            <Keyboard />
          </Button>
        </div>
        <input
          ref={fileRef}
          type="file"
          multiple
          accept={ACCEPT}
          className="hidden"
          aria-label="Choose files to upload"
          data-testid="file-input"
          onChange={(e) => {
            const files = Array.from(e.target.files ?? []);
            e.target.value = "";
            if (files.length) void uploads.upload(files);
          }}
        />
      </header>
      <HealthBanner health={health} onRetry={refreshHealth} />
      <WorkspaceLostBanner state={workspace} />

      <div className="flex min-h-0 flex-1">
        <aside className="hidden w-64 shrink-0 border-r md:block">{sidebar}</aside>
        {page === "lab" ? (
          <main className="min-w-0 flex-1 overflow-y-auto">
            <LabPage />
          </main>
        ) : (
          <main className="flex min-w-0 flex-1 flex-col">
            <div ref={scrollRef} className="min-h-0 flex-1 overflow-y-auto px-3 py-4 sm:px-6" aria-live="off">
              <div className="mx-auto max-w-3xl">
                <h1 className="sr-only">{current.turns.length ? current.title : "Ask your documents"}</h1>
                {current.turns.length === 0 ? (
                  <Onboarding
                    firstRun={firstRun}
                    onDismiss={dismissWelcome}
                    documents={documents}
                    loadingSample={loadingSample}
                    onLoadSample={() => void loadSample()}
                    onUpload={() => fileRef.current?.click()}
                    onAsk={(q) => void ask(q)}
                  />
                ) : (
                  <>
                    {sourcesGone && <SourcesGoneNote />}
                    <Thread turns={current.turns} passages={current.passages} onOpen={openPassage} onRetry={retry} />
                  </>
                )}
              </div>
            </div>
            <div className="border-t bg-background px-3 py-3 sm:px-6">
              <div className="mx-auto max-w-3xl">
                <Composer
                  onAsk={(q) => void ask(q)}
                  onStop={stream.stop}
                  streaming={stream.streaming}
                  inputRef={inputRef}
                  followUp={current.turns.length > 0}
                />
              </div>
            </div>
          </main>
        )}
        <aside aria-label="Sources in this conversation" className="hidden w-80 shrink-0 overflow-y-auto border-l p-3 lg:block">
          <h2 className="mb-2 text-xs font-semibold tracking-wide text-muted-foreground uppercase">
            Sources {current.passages.length > 0 && `(${current.passages.length})`}
          </h2>
          {sources}
        </aside>
      </div>

      <Dialog open={drawer === "conversations"} onClose={() => setDrawer(null)} title="Conversations" side="right">
        {sidebar}
      </Dialog>
      <Dialog open={drawer === "sources"} onClose={() => setDrawer(null)} title={`Sources (${current.passages.length})`} side="right">
        {sources}
      </Dialog>
      <PassageViewer passage={open?.passage ?? null} focus={open?.focus} gone={sourcesGone} onClose={() => setOpen(null)} />
      <CommandPalette open={palette} onClose={() => setPalette(false)} commands={commands} />
      <ShortcutsDialog open={shortcuts} onClose={() => setShortcuts(false)} shortcuts={SHORTCUTS} />
      <UploadDialog run={uploads.run} onClose={uploads.clear} />
      <DropOverlay onFiles={(files) => void uploads.upload(files)} />
    </div>
  );
}
