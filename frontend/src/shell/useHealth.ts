import { useCallback, useEffect, useState } from "react";
import { getHealth } from "@/api/client";
import type { Health } from "@/api/types";

export type HealthState = { state: "loading" } | { state: "ok"; health: Health } | { state: "down"; error: string };

/** /health on load and every 30 s: whether a model is configured, whether the agent answers at all. */
export function useHealth(): [HealthState, () => void] {
  const [health, setHealth] = useState<HealthState>({ state: "loading" });
  const refresh = useCallback(() => {
    getHealth()
      .then((h) => setHealth({ state: "ok", health: h }))
      .catch((e: Error) => setHealth({ state: "down", error: e.message }));
  }, []);
  useEffect(() => {
    refresh();
    const timer = window.setInterval(refresh, 30_000);
    return () => window.clearInterval(timer);
  }, [refresh]);
  return [health, refresh];
}
