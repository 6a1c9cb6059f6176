/** ⌘K / Ctrl-K: every action by name, filtered as you type; arrows move, Enter runs. */
import { Search } from "lucide-react";
import { useEffect, useMemo, useRef, useState } from "react";
import { cn } from "@/lib/utils";
import { Dialog } from "./ui/dialog";
import { Kbd } from "./ui/kbd";

export interface Command {
  id: string;
  label: string;
  group: string;
  shortcut?: string;
  run: () => void;
}

export function CommandPalette({ open, onClose, commands }: { open: boolean; onClose: () => void; commands: Command[] }) {
  const [query, setQuery] = useState("");
  const [active, setActive] = useState(0);
  const listRef = useRef<HTMLDivElement>(null);
  const shown = useMemo(() => {
    const words = query.toLowerCase().split(/\s+/).filter(Boolean);
    return commands.filter((c) => words.every((w) => `${c.group} ${c.label}`.toLowerCase().includes(w)));
  }, [commands, query]);
  useEffect(() => {
    if (open) {
      setQuery("");
      setActive(0);
    }
  }, [open]);
  useEffect(() => {
    listRef.current?.querySelector(`[data-index="${active}"]`)?.scrollIntoView({ block: "nearest" });
  }, [active]);

  const runAt = (i: number) => {
    const command = shown[i];
    if (!command) return;
    onClose();
    command.run();
  };

  return (
    <Dialog open={open} onClose={onClose} title="Command palette">
      <div className="space-y-2">
        <div className="flex items-center gap-2 rounded-md border px-2">
          <Search aria-hidden="true" className="size-4 text-muted-foreground" />
          <input
            autoFocus
            role="combobox"
            aria-expanded="true"
            aria-controls="command-list"
            aria-activedescendant={shown[active] ? `command-${shown[active]?.id}` : undefined}
            aria-label="Type a command"
            placeholder="Type a command or a conversation's name…"
            className="h-10 w-full bg-transparent text-sm outline-none"
            value={query}
            onChange={(e) => {
              setQuery(e.target.value);
              setActive(0);
            }}
            onKeyDown={(e) => {
              if (e.key === "ArrowDown") {
                e.preventDefault();
                setActive((a) => Math.min(a + 1, shown.length - 1));
              } else if (e.key === "ArrowUp") {
                e.preventDefault();
                setActive((a) => Math.max(a - 1, 0));
              } else if (e.key === "Enter") {
                e.preventDefault();
                runAt(active);
              }
            }}
          />
        </div>
        <div id="command-list" role="listbox" aria-label="Commands" ref={listRef} className="max-h-80 overflow-y-auto">
          {shown.length === 0 && <p className="p-3 text-sm text-muted-foreground">No command matches “{query}”.</p>}
          {shown.map((c, i) => (
            // biome-ignore lint/a11y/useKeyWithClickEvents: the keys are the combobox's, which points here with aria-activedescendant
            <div
              key={c.id}
              id={`command-${c.id}`}
              role="option"
              tabIndex={-1}
              aria-selected={i === active}
              data-index={i}
              onMouseMove={() => setActive(i)}
              onClick={() => runAt(i)}
              className={cn(
                "flex cursor-pointer items-center justify-between gap-2 rounded-md px-2 py-2 text-sm",
                i === active && "bg-accent text-accent-foreground",
              )}
            >
              <span>
                <span className="mr-2 text-xs text-muted-foreground">{c.group}</span>
                {c.label}
              </span>
              {c.shortcut && <Kbd>{c.shortcut}</Kbd>}
            </div>
          ))}
        </div>
      </div>
    </Dialog>
  );
}

export function ShortcutsDialog({ open, onClose, shortcuts }: { open: boolean; onClose: () => void; shortcuts: [string, string][] }) {
  return (
    <Dialog open={open} onClose={onClose} title="Keyboard shortcuts" description="Single keys work when you are not typing in a field.">
      <table className="w-full text-sm">
        <tbody>
          {shortcuts.map(([keys, what]) => (
            <tr key={keys} className="border-b last:border-0">
              <td className="py-1.5 pr-4 whitespace-nowrap">
                {keys.split(" ").map((k) => (
                  <Kbd key={k} className="mr-1">
                    {k}
                  </Kbd>
                ))}
              </td>
              <td className="py-1.5">{what}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Dialog>
  );
}
