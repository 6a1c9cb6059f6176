/** Saved conversations: open, rename, delete, start a new one; `children` go at the foot. */
import { Check, MessageSquare, Pencil, Plus, Trash2, X } from "lucide-react";
import { type ReactNode, useState } from "react";
import { Button } from "@/components/ui/button";
import { Input } from "@/components/ui/input";
import type { ConversationMeta } from "@/features/ask/storage";
import { cn } from "@/lib/utils";

interface SidebarProps {
  list: ConversationMeta[];
  currentId: string;
  onOpen: (id: string) => void;
  onNew: () => void;
  onRename: (id: string, title: string) => void;
  onDelete: (id: string) => void;
  children?: ReactNode;
}

export function Sidebar({ list, currentId, onOpen, onNew, onRename, onDelete, children }: SidebarProps) {
  const [editing, setEditing] = useState<string | null>(null);
  const [draft, setDraft] = useState("");
  return (
    <nav aria-label="Conversations" className="flex h-full flex-col gap-2 p-3">
      <Button variant="outline" onClick={onNew} className="justify-start">
        <Plus /> New conversation
      </Button>
      <h2 className="mt-2 px-1 text-xs font-semibold tracking-wide text-muted-foreground uppercase">Saved in this browser</h2>
      {list.length === 0 ? (
        <p className="px-1 text-sm text-muted-foreground">Conversations you have are kept here (up to 30).</p>
      ) : (
        <ul className="-mx-1 min-h-0 flex-1 space-y-0.5 overflow-y-auto px-1" data-testid="conversation-list">
          {list.map((c) => (
            <li key={c.id} className={cn("group flex items-center gap-1 rounded-md", c.id === currentId && "bg-accent")}>
              {editing === c.id ? (
                <form
                  className="flex w-full items-center gap-1 p-1"
                  onSubmit={(e) => {
                    e.preventDefault();
                    onRename(c.id, draft);
                    setEditing(null);
                  }}
                >
                  <Input
                    autoFocus
                    aria-label="New name for the conversation"
                    value={draft}
                    maxLength={120}
                    onChange={(e) => setDraft(e.target.value)}
                    onKeyDown={(e) => e.key === "Escape" && setEditing(null)}
                    className="h-8"
                  />
                  <Button type="submit" variant="ghost" size="icon" className="size-8" aria-label="Save the name">
                    <Check />
                  </Button>
                  <Button variant="ghost" size="icon" className="size-8" aria-label="Cancel renaming" onClick={() => setEditing(null)}>
                    <X />
                  </Button>
                </form>
              ) : (
                <>
                  <button
                    type="button"
                    onClick={() => onOpen(c.id)}
                    aria-current={c.id === currentId ? "page" : undefined}
                    className="flex min-w-0 flex-1 items-center gap-2 rounded-md px-2 py-1.5 text-left text-sm hover:bg-accent cursor-pointer"
                  >
                    <MessageSquare aria-hidden="true" className="size-4 shrink-0 text-muted-foreground" />
                    <span className="truncate">{c.title}</span>
                  </button>
                  <Button
                    variant="ghost"
                    size="icon"
                    className="size-7 opacity-60 group-hover:opacity-100 focus-visible:opacity-100"
                    aria-label={`Rename “${c.title}”`}
                    onClick={() => {
                      setDraft(c.title);
                      setEditing(c.id);
                    }}
                  >
                    <Pencil />
                  </Button>
                  <Button
                    variant="ghost"
                    size="icon"
                    className="size-7 opacity-60 group-hover:opacity-100 focus-visible:opacity-100"
                    aria-label={`Delete “${c.title}”`}
                    onClick={() => {
                      if (window.confirm(`Delete “${c.title}”? It is only stored in this browser.`)) onDelete(c.id);
                    }}
                  >
                    <Trash2 />
                  </Button>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      {children}
    </nav>
  );
}
