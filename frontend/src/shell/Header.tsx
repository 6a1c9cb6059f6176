/** The bar on every page: the pages, the agent's state, Upload, the command palette and the shortcuts. */
import { Link } from "@tanstack/react-router";
import { BookOpen, Command as CommandIcon, FileUp, FlaskConical, Keyboard, Menu, MessageSquare } from "lucide-react";
import type { ReactNode } from "react";
import { Button, buttonVariants } from "@/components/ui/button";
import { Kbd } from "@/components/ui/kbd";
import { cn, modKey } from "@/lib/utils";
import type { HealthState } from "./useHealth";

interface HeaderProps {
  health: HealthState;
  onConversations: () => void;
  onSources: () => void;
  onUpload: () => void;
  onPalette: () => void;
  onShortcuts: () => void;
  /** The hidden file input, kept in the header as the Upload button's target. */
  children: ReactNode;
}

const page = {
  activeOptions: { exact: true },
  activeProps: { className: buttonVariants({ variant: "secondary", size: "sm" }) },
  inactiveProps: { className: buttonVariants({ variant: "ghost", size: "sm" }) },
} as const;

export function Header({ health, onConversations, onSources, onUpload, onPalette, onShortcuts, children }: HeaderProps) {
  return (
    <header className="flex items-center gap-2 border-b px-3 py-2">
      <Button variant="ghost" size="icon" className="md:hidden" aria-label="Conversations" onClick={onConversations}>
        <Menu />
      </Button>
      <Link to="/" className="flex items-center gap-2 font-semibold" aria-label="Sextant, home">
        <svg viewBox="0 0 32 32" className="size-5" aria-hidden="true">
          <path d="M4 28 L16 4 L28 28 Z" fill="var(--color-primary)" />
        </svg>
        <span>Sextant</span>
      </Link>
      <nav aria-label="Pages" className="ml-2 flex gap-1">
        <Link to="/" {...page}>
          <MessageSquare /> <span className="hidden sm:inline">Ask</span>
        </Link>
        <Link to="/lab" {...page}>
          <FlaskConical /> <span className="hidden sm:inline">Index Lab</span>
        </Link>
      </nav>
      <div className="ml-auto flex items-center gap-1">
        <HealthPill health={health} />
        <Button variant="ghost" size="icon" className="lg:hidden" aria-label="Sources" onClick={onSources}>
          <BookOpen />
        </Button>
        <Button variant="outline" size="sm" onClick={onUpload} aria-label="Upload files">
          <FileUp /> <span className="hidden sm:inline">Upload</span>
        </Button>
        <Button variant="ghost" size="sm" onClick={onPalette} aria-label="Command palette" aria-keyshortcuts="Control+K Meta+K">
          <CommandIcon /> <Kbd className="hidden sm:inline">{modKey} K</Kbd>
        </Button>
        <Button variant="ghost" size="icon" className="hidden sm:inline-flex" onClick={onShortcuts} aria-label="Keyboard shortcuts">
          <Keyboard />
        </Button>
      </div>
      {children}
    </header>
  );
}

/** Which model answers, in a word and a coloured dot: connecting, offline, a model's name, or excerpts only. */
function HealthPill({ health }: { health: HealthState }) {
  const dot =
    health.state === "ok"
      ? health.health.status === "ok"
        ? "bg-success"
        : "bg-warning-foreground"
      : health.state === "down"
        ? "bg-destructive"
        : "bg-muted-foreground";
  return (
    <span
      className={cn(
        "hidden items-center gap-1.5 rounded-full border px-2 py-0.5 text-xs sm:flex",
        health.state === "down" && "border-destructive/50 text-destructive",
      )}
      title={health.state === "ok" ? health.health.model.detail : undefined}
    >
      <span aria-hidden="true" className={cn("size-2 rounded-full", dot)} />
      {health.state === "loading"
        ? "connecting…"
        : health.state === "down"
          ? "agent offline"
          : health.health.model.configured
            ? `model: ${health.health.model.name ?? health.health.model.provider}`
            : "excerpts only"}
    </span>
  );
}
