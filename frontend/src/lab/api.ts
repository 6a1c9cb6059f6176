/**
 * The Index Lab API. NOT in the agent yet: these shapes are what the lead expects it to return, so
 * this file (and only this file) changes when it lands; regenerate openapi.json and switch the
 * types below to the generated ones then. Until `GET /lab` answers, the page says "unavailable".
 */
import { errorFrom } from "@/api/client";
import { apiBase } from "@/api/config";

export interface LabPoint {
  param: string | number;
  recall_at_10: number;
  qps: number;
}
export interface LabIndex {
  index: string;
  points: LabPoint[];
}
export interface LabDataset {
  name: string;
  indexes: LabIndex[];
}
export interface LabOverview {
  available: boolean;
  datasets: LabDataset[];
}
export interface LabHit {
  rank: number;
  chunk_id: string;
  score: number;
}
export interface LabComparison {
  indexes: { index: string; hits: LabHit[]; latency_ms: number }[];
}

export type LabState =
  | { state: "loading" }
  | { state: "unavailable"; why: string }
  | { state: "ready"; overview: LabOverview };

export async function getLab(signal?: AbortSignal): Promise<LabState> {
  let response: Response;
  try {
    response = await fetch(`${apiBase()}/lab`, { signal });
  } catch (error) {
    if ((error as Error).name === "AbortError") throw error;
    return { state: "unavailable", why: `cannot reach the agent at ${apiBase()}` };
  }
  if (response.status === 404) return { state: "unavailable", why: "this agent has no Index Lab API yet (GET /lab answered 404)" };
  if (!response.ok) return { state: "unavailable", why: (await errorFrom(response)).message };
  const overview = (await response.json()) as LabOverview;
  if (!overview.available) return { state: "unavailable", why: "the agent says the Index Lab is not available" };
  return { state: "ready", overview };
}

export async function compare(query: string): Promise<LabComparison> {
  const response = await fetch(`${apiBase()}/lab/compare`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ query }),
  });
  if (!response.ok) throw await errorFrom(response);
  return (await response.json()) as LabComparison;
}
