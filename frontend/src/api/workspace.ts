/**
 * The caller's private workspace, when the agent runs with SEXTANT_WORKSPACES=on (GET /health says
 * so). It is created on first use, its bearer token kept in localStorage (so this browser's tabs
 * share it), and `authorization()` is the one place that builds the header every request sends.
 * A 401 for the held token means the workspace expired or was deleted: the token is dropped and the
 * person told; nothing is retried, and the next action creates a new workspace.
 */
import { newId } from "@/lib/utils";
import { ApiError, errorFrom, request } from "./http";
import type { Health, WorkspaceCreated, WorkspaceLimits } from "./types";

export const WORKSPACE_KEY = "sextant.workspace.v1";

export const LOST_MESSAGE =
  "Your private workspace has expired (or was deleted in another tab), and its documents were deleted with it. Your next question or upload starts a new, empty workspace.";

export interface Workspace {
  /** This browser's name for the workspace (the server's id never leaves it), to tell which one a conversation's sources were in. */
  id: string;
  token: string;
  /** When the agent deletes it and its documents, in ms since the epoch. */
  expiresAt: number;
  limits: WorkspaceLimits;
}

export interface WorkspaceState {
  /** Whether the agent runs with workspaces; null until /health has said. */
  on: boolean | null;
  held: Workspace | null;
  /** The held workspace was refused (expired or deleted) and no new one has been created yet. */
  lost: boolean;
}

/** read: a request that only looks (with no workspace there is nothing to see); act: one that creates a workspace if none is held. */
export type Access = "read" | "act";

let on: boolean | null = null;
let lost = false;
let learning: Promise<boolean> | null = null;
let creating: Promise<Workspace> | null = null;
let snapshot: WorkspaceState = { on, held: read(), lost };
const listeners = new Set<() => void>();

function read(): Workspace | null {
  try {
    const held = JSON.parse(window.localStorage.getItem(WORKSPACE_KEY) ?? "null") as Workspace | null;
    return typeof held?.token === "string" ? held : null;
  } catch {
    return null;
  }
}

function changed(): void {
  snapshot = { on, held: read(), lost };
  for (const listener of listeners) listener();
}

const onStorage = (e: StorageEvent) => {
  if (e.key === WORKSPACE_KEY || e.key === null) changed();
};

/** For useSyncExternalStore: another tab creating or deleting the workspace counts as a change too. */
export function subscribe(listener: () => void): () => void {
  if (listeners.size === 0) window.addEventListener("storage", onStorage);
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0) window.removeEventListener("storage", onStorage);
  };
}

export const workspaceState = (): WorkspaceState => snapshot;

/** Record what /health said (it is polled, so an agent restarted in the other mode is followed). */
export function learnMode(workspaces: boolean): void {
  if (on === workspaces) return;
  on = workspaces;
  changed();
}

function mode(): Promise<boolean> {
  if (on !== null) return Promise.resolve(on);
  learning ??= (async () => {
    try {
      const response = await request("/health");
      if (!response.ok) throw await errorFrom(response);
      learnMode(((await response.json()) as Health).workspaces === true);
      return on ?? false;
    } finally {
      learning = null;
    }
  })();
  return learning;
}

/** One POST /workspaces however many requests need a workspace at once. */
function create(): Promise<Workspace> {
  creating ??= (async () => {
    try {
      const response = await request("/workspaces", { method: "POST" });
      if (!response.ok) throw await errorFrom(response);
      const created = (await response.json()) as WorkspaceCreated;
      const held: Workspace = { id: newId(), token: created.token, expiresAt: created.expires_at * 1000, limits: created.limits };
      window.localStorage.setItem(WORKSPACE_KEY, JSON.stringify(held));
      lost = false;
      changed();
      return held;
    } finally {
      creating = null;
    }
  })();
  return creating;
}

/**
 * The headers that open the caller's workspace: {} when workspaces are off. With `act` a workspace
 * is created when none is held; with `read` the answer is then null, as there is nothing to read.
 * Throws: ApiError when the agent cannot be reached or refuses a new workspace (its limit, named).
 */
export async function authorization(access: Access): Promise<Record<string, string> | null> {
  if (!(await mode())) return {};
  const held = read() ?? (access === "act" ? await create() : null);
  return held && { Authorization: `Bearer ${held.token}` };
}

/** The held workspace, created if there is none; null without workspaces. For callers that need its limits first. */
export async function ensureWorkspace(): Promise<Workspace | null> {
  return (await mode()) ? (read() ?? create()) : null;
}

/**
 * A 401 answered a request sent with `sent`. If it carried the held token, that workspace is gone:
 * drop the token (once, however many requests were refused) and return the message that says so.
 * Without a token the agent wants one we did not know to send, so /health is asked again.
 */
export function refused(sent: Record<string, string>, error: ApiError): ApiError {
  const token = sent.Authorization?.replace(/^Bearer /, "");
  if (!token) {
    on = null;
    changed();
    return error;
  }
  if (read()?.token === token) {
    window.localStorage.removeItem(WORKSPACE_KEY);
    lost = true;
    changed();
  }
  return new ApiError(LOST_MESSAGE, 401);
}

/** The workspace was deleted on purpose: drop its token without calling that a loss. */
export function forget(): void {
  window.localStorage.removeItem(WORKSPACE_KEY);
  lost = false;
  changed();
}
