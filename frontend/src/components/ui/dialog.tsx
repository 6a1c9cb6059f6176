/** A modal on the native <dialog>: focus moves in and is trapped, Escape closes, focus returns after. */
import { X } from "lucide-react";
import { type ReactNode, useEffect, useRef } from "react";
import { cn } from "@/lib/utils";
import { Button } from "./button";

interface DialogProps {
  open: boolean;
  onClose: () => void;
  title: ReactNode;
  description?: ReactNode;
  children: ReactNode;
  className?: string;
  /** "center" for a dialog, "right" for a sheet sliding from the side. */
  side?: "center" | "right";
  labelledBy?: string;
}

export function Dialog({ open, onClose, title, description, children, className, side = "center" }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    // biome-ignore lint/a11y/useKeyWithClickEvents: the keyboard's way out is Esc (onCancel); the click is only the backdrop's
    <dialog
      ref={ref}
      onClose={onClose}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
      onClick={(e) => {
        if (e.target === ref.current) onClose(); // a click on the backdrop
      }}
      aria-label={typeof title === "string" ? title : undefined}
      className={cn(
        "bg-card text-foreground shadow-xl backdrop:bg-black/40 p-0 open:flex flex-col",
        side === "right"
          ? "m-0 ml-auto h-dvh max-h-dvh w-full max-w-xl border-l"
          : "mx-auto mt-[12vh] w-[calc(100%-2rem)] max-w-lg rounded-lg border",
        className,
      )}
    >
      {open && (
        <>
          <div className="flex items-start justify-between gap-4 border-b p-4">
            <div className="min-w-0">
              <h2 className="font-semibold leading-tight">{title}</h2>
              {description && <div className="mt-1 text-sm text-muted-foreground">{description}</div>}
            </div>
            <Button variant="ghost" size="icon" aria-label="Close" onClick={onClose}>
              <X />
            </Button>
          </div>
          <div className="min-h-0 flex-1 overflow-y-auto p-4">{children}</div>
        </>
      )}
    </dialog>
  );
}
