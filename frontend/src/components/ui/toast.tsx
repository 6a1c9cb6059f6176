/** Toasts: a polite live region for news, an assertive one for errors; each can be dismissed. */
import { CircleAlert, CircleCheck, Info, X } from "lucide-react";
import { createContext, type ReactNode, useCallback, useContext, useMemo, useState } from "react";
import { cn } from "@/lib/utils";

type Kind = "info" | "success" | "error";
interface Toast {
  id: number;
  kind: Kind;
  title: string;
  detail?: string;
}
type Push = (kind: Kind, title: string, detail?: string) => void;

const ToastContext = createContext<Push>(() => undefined);

export function useToast(): Push {
  return useContext(ToastContext);
}

let next = 1;

export function ToastProvider({ children }: { children: ReactNode }) {
  const [toasts, setToasts] = useState<Toast[]>([]);
  const dismiss = useCallback((id: number) => setToasts((all) => all.filter((t) => t.id !== id)), []);
  const push = useCallback<Push>(
    (kind, title, detail) => {
      const id = next++;
      setToasts((all) => [...all.slice(-3), { id, kind, title, detail }]);
      window.setTimeout(() => dismiss(id), kind === "error" ? 9000 : 5000);
    },
    [dismiss],
  );
  const value = useMemo(() => push, [push]);
  const icon = { info: Info, success: CircleCheck, error: CircleAlert };
  const render = (kinds: Kind[]) =>
    toasts
      .filter((t) => kinds.includes(t.kind))
      .map((t) => {
        const Icon = icon[t.kind];
        return (
          <div
            key={t.id}
            data-testid="toast"
            className={cn(
              "pointer-events-auto flex w-80 max-w-[calc(100vw-2rem)] items-start gap-2 rounded-lg border bg-card p-3 text-sm shadow-lg",
              t.kind === "error" && "border-destructive/60",
            )}
          >
            <Icon
              aria-hidden="true"
              className={cn(
                "mt-0.5 size-4 shrink-0",
                t.kind === "error" ? "text-destructive" : t.kind === "success" ? "text-success" : "text-primary",
              )}
            />
            <div className="min-w-0 flex-1">
              <p className="font-medium">{t.kind === "error" ? `Error: ${t.title}` : t.title}</p>
              {t.detail && <p className="mt-0.5 break-words text-muted-foreground">{t.detail}</p>}
            </div>
            <button type="button" className="rounded p-0.5 hover:bg-muted" aria-label="Dismiss notification" onClick={() => dismiss(t.id)}>
              <X className="size-4" />
            </button>
          </div>
        );
      });
  return (
    <ToastContext.Provider value={value}>
      {children}
      <div className="pointer-events-none fixed right-4 bottom-4 z-50 flex flex-col gap-2">
        <div role="status" aria-live="polite" className="flex flex-col gap-2">
          {render(["info", "success"])}
        </div>
        <div role="alert" aria-live="assertive" className="flex flex-col gap-2">
          {render(["error"])}
        </div>
      </div>
    </ToastContext.Provider>
  );
}
