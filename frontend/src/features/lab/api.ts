/** The Index Lab API (`GET /lab`, `POST /lab/compare`), typed by the generated schema. */
import { send } from "@/api/client";
import { errorFrom, request } from "@/api/http";
import type { AnnComparison, CompareRequest, LabDataset, LabOverview } from "@/api/types";

export type { AnnAnswer, AnnComparison, AnnHit, LabDataset, LabIndex, LabOverview, LabPoint } from "@/api/types";

export type LabState =
  | { state: "loading" }
  | { state: "unavailable"; why: string }
  | { state: "ready"; created: string | null; datasets: LabDataset[] };

/** What the page shows for an overview: the agent's own reason when it has none to show. */
export function labState(overview: LabOverview): LabState {
  const datasets = overview.datasets;
  if (!overview.available) return { state: "unavailable", why: overview.reason || "the agent says the Index Lab is not available" };
  if (datasets.length === 0) return { state: "unavailable", why: "the agent's benchmark results hold no datasets" };
  return { state: "ready", created: overview.created ?? null, datasets };
}

export async function getLab(signal?: AbortSignal): Promise<LabState> {
  let response: Response;
  try {
    response = await request("/lab", { signal });
  } catch (error) {
    if ((error as Error).name === "AbortError") throw error;
    return { state: "unavailable", why: (error as Error).message };
  }
  if (response.status === 404) return { state: "unavailable", why: "this agent has no Index Lab API (GET /lab answered 404)" };
  if (!response.ok) return { state: "unavailable", why: (await errorFrom(response)).message };
  return labState((await response.json()) as LabOverview);
}

export async function compare(query: string, k = 5, signal?: AbortSignal): Promise<AnnComparison> {
  const body: CompareRequest = { query, k };
  const response = await send(
    "/lab/compare",
    { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body), signal },
    "act",
  );
  return (await response.json()) as AnnComparison;
}
