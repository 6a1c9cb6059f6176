/**
 * The frame around every page (the router's root): header, conversations, sources, the dialogs and
 * shortcuts. It owns the ask and documents sessions, which outlive a page, and hands them down.
 */
import { Outlet, useLocation, useNavigate } from "@tanstack/react-router";
import { useCallback, useState } from "react";
import { CommandPalette, ShortcutsDialog } from "@/components/CommandPalette";
import { Dialog } from "@/components/ui/dialog";
import { PassageViewer } from "@/features/ask/PassageViewer";
import { Sidebar } from "@/features/ask/Sidebar";
import { Sources } from "@/features/ask/Sources";
import { AskContext, useAsk } from "@/features/ask/useAsk";
import { DropOverlay, FilePicker, UploadDialog } from "@/features/documents/Upload";
import { DocumentsContext, useDocuments } from "@/features/documents/useDocuments";
import { useDeleteWorkspace, useWorkspace } from "@/features/workspace/useWorkspace";
import { WorkspaceLostBanner, WorkspaceNote } from "@/features/workspace/Workspace";
import { Header } from "./Header";
import { HealthBanner } from "./HealthBanner";
import { type Page, SHORTCUTS, useCommands, useShortcutKeys } from "./useCommands";
import { useHealth } from "./useHealth";

export function Shell() {
  const [health, refreshHealth] = useHealth();
  const workspace = useWorkspace();
  const session = useAsk(workspace);
  const documents = useDocuments(workspace.held);
  const { conv, current, stream, inputRef } = session;
  const { uploads } = documents;
  const addFiles = (files: File[]) => void uploads.upload(files);
  const navigate = useNavigate();
  const pathname = useLocation({ select: (l) => l.pathname });
  const [palette, setPalette] = useState(false);
  const [shortcuts, setShortcuts] = useState(false);
  const [drawer, setDrawer] = useState<"conversations" | "sources" | null>(null);

  const go = useCallback((page: Page) => void navigate({ to: page }), [navigate]);
  const switchTo = useCallback(
    (action: () => void) => {
      stream.stop();
      action();
      setDrawer(null);
      go("/");
    },
    [stream, go],
  );
  const removeWorkspace = useDeleteWorkspace(
    workspace.held,
    documents.documents?.length ?? 0,
    useCallback(() => switchTo(conv.startNew), [switchTo, conv.startNew]),
  );
  const commands = useCommands({
    session,
    documents,
    workspaces: workspace.on === true,
    removeWorkspace,
    switchTo,
    go,
    showSources: useCallback(() => setDrawer("sources"), []),
    showShortcuts: useCallback(() => setShortcuts(true), []),
  });
  useShortcutKeys(
    commands,
    stream,
    useCallback(() => setPalette((p) => !p), []),
  );

  const sources = <Sources passages={current.passages} cited={session.cited} loading={stream.streaming} onOpen={session.openPassage} />;
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
    <AskContext value={session}>
      <DocumentsContext value={documents}>
        <div className="flex h-full flex-col">
          {/* A button, not a link to #question: the hash is the router's address. */}
          <button
            type="button"
            className="sr-only focus:not-sr-only focus:absolute focus:top-2 focus:left-2 focus:z-50 focus:rounded focus:bg-card focus:p-2"
            onClick={() => (pathname === "/" ? inputRef.current?.focus() : go("/"))}
          >
            Skip to the question box
          </button>
          <Header
            health={health}
            onConversations={() => setDrawer("conversations")}
            onSources={() => setDrawer("sources")}
            onUpload={documents.pickFiles}
            onPalette={() => setPalette(true)}
            onShortcuts={() => setShortcuts(true)}
          >
            <FilePicker inputRef={documents.fileRef} onFiles={addFiles} />
          </Header>
          <HealthBanner health={health} onRetry={refreshHealth} />
          <WorkspaceLostBanner state={workspace} />

          <div className="flex min-h-0 flex-1">
            <aside className="hidden w-64 shrink-0 border-r md:block">{sidebar}</aside>
            <Outlet />
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
          <PassageViewer
            passage={session.open?.passage ?? null}
            focus={session.open?.focus}
            gone={session.sourcesGone}
            onClose={session.closePassage}
          />
          <CommandPalette open={palette} onClose={() => setPalette(false)} commands={commands} />
          <ShortcutsDialog open={shortcuts} onClose={() => setShortcuts(false)} shortcuts={SHORTCUTS} />
          <UploadDialog run={uploads.run} onClose={uploads.clear} />
          <DropOverlay onFiles={addFiles} />
        </div>
      </DocumentsContext>
    </AskContext>
  );
}
