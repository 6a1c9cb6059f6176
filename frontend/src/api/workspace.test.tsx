import { cleanup, renderHook } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { AgentEvent } from "@/api/types";

interface Call {
  method: string;
  path: string;
  auth: string | null;
}

interface Answer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/**
 * A test double for the agent at the network boundary (fetch and XMLHttpRequest): it mints tokens,
 * answers 401 for a token it does not hold, and records every request with its Authorization header.
 */
class FakeAgent {
  readonly calls: Call[] = [];
  readonly tokens = new Set<string>();
  private readonly refusals = new Map<string, Answer>();
  private minted = 0;

  constructor(readonly workspaces: boolean) {}

  /** Answer `METHOD /path` with this refusal from now on. */
  refuse(route: string, status: number, detail: string, headers: Record<string, string> = {}) {
    this.refusals.set(route, { status, body: { detail }, headers });
  }

  answer(method: string, url: string, auth: string | null): Answer {
    const path = new URL(url).pathname;
    this.calls.push({ method, path, auth });
    if (path === "/health") return { status: 200, body: { status: "ok", workspaces: this.workspaces } };
    if (path === "/workspaces" && method === "POST") {
      if (!this.workspaces) return { status: 404, body: { detail: "workspaces are off" } };
      const token = `t${++this.minted}`;
      this.tokens.add(token);
      return {
        status: 201,
        body: { token, expires_at: 1_900_000_000, questions_asked: 0, limits: { documents: 20, questions: 100, file_mb: 10 } },
      };
    }
    if (this.workspaces && !this.tokens.has(auth?.replace(/^Bearer /, "") ?? "")) {
      return { status: 401, body: { detail: "a workspace token is required" }, headers: { "WWW-Authenticate": "Bearer" } };
    }
    const refusal = this.refusals.get(`${method} ${path}`);
    if (refusal) return refusal;
    if (path === "/workspaces/current" && method === "DELETE") {
      this.tokens.delete(auth?.replace(/^Bearer /, "") ?? "");
      return { status: 200, body: { status: "deleted" } };
    }
    if (path === "/workspaces/current") return { status: 200, body: { expires_at: 1_900_000_000, questions_asked: 1, limits: {} } };
    if (path === "/documents") return { status: 200, body: { documents: [] } };
    if (path.startsWith("/documents/")) return { status: 200, body: { document_id: "d", page: 3, text: "page three" } };
    if (path === "/lab/compare") return { status: 200, body: { query: "q", k: 5, vectors: 0, answers: [] } };
    if (path === "/upload") return { status: 200, body: { results: [] } };
    if (path === "/query/stream") return { status: 200, body: 'event: done\ndata: {"request_id": "r", "elapsed_ms": 1}\n\n' };
    return { status: 404, body: { detail: "Not Found" } };
  }

  readonly fetch = async (url: string, init: RequestInit = {}) => {
    const auth = new Headers(init.headers).get("Authorization");
    const { status, body, headers } = this.answer(init.method ?? "GET", url, auth);
    return new Response(typeof body === "string" ? body : JSON.stringify(body), { status, headers });
  };

  /** XMLHttpRequest, as far as uploadFiles uses it. */
  get Xhr() {
    const agent = this; // inside the class, `this` is the request
    return class {
      status = 0;
      response: unknown = null;
      responseType = "";
      upload: { onprogress: ((e: ProgressEvent) => void) | null } = { onprogress: null };
      onload: (() => void) | null = null;
      onerror: (() => void) | null = null;
      onabort: (() => void) | null = null;
      private method = "GET";
      private url = "";
      private headers: Record<string, string> = {};
      private answered: Record<string, string> = {};
      open(method: string, url: string) {
        this.method = method;
        this.url = url;
      }
      setRequestHeader(name: string, value: string) {
        this.headers[name] = value;
      }
      getResponseHeader(name: string) {
        return this.answered[name] ?? null;
      }
      abort() {
        this.onabort?.();
      }
      send() {
        const { status, body, headers } = agent.answer(this.method, this.url, this.headers.Authorization ?? null);
        this.status = status;
        this.response = body;
        this.answered = headers ?? {};
        queueMicrotask(() => this.onload?.());
      }
    };
  }
}

let agent: FakeAgent;
let client: typeof import("@/api/client");
let workspace: typeof import("@/api/workspace");
let lab: typeof import("@/features/lab/api");
let stream: typeof import("@/features/ask/useAgentStream");

/** A fresh page: the workspace module's memory (mode, lost) starts empty, as after a reload. */
async function load(workspaces: boolean) {
  agent = new FakeAgent(workspaces);
  vi.stubGlobal("fetch", agent.fetch);
  vi.stubGlobal("XMLHttpRequest", agent.Xhr);
  vi.resetModules();
  client = await import("@/api/client");
  workspace = await import("@/api/workspace");
  lab = await import("@/features/lab/api");
  stream = await import("@/features/ask/useAgentStream");
}

async function ask(): Promise<AgentEvent[]> {
  const { result } = renderHook(() => stream.useAgentStream());
  const events: AgentEvent[] = [];
  await result.current.ask({ question: "How often?", history: [], passages: [] }, (e) => events.push(e));
  return events;
}

const upload = () => client.uploadFiles([new File(["# Notes"], "notes.md")], () => undefined);
const requests = (route: string) => agent.calls.filter((c) => `${c.method} ${c.path}` === route);

beforeEach(() => window.localStorage.clear());
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe("the workspace token", () => {
  it("is created once, on the first action, and sent on every call after", async () => {
    await load(true);
    expect(await client.getDocuments()).toEqual([]);
    expect(requests("POST /workspaces")).toHaveLength(0); // reading creates nothing

    await Promise.all([lab.compare("descale"), lab.compare("grind"), upload()]);
    expect(requests("POST /workspaces")).toHaveLength(1);
    expect(JSON.parse(window.localStorage.getItem(workspace.WORKSPACE_KEY) ?? "{}")).toMatchObject({ token: "t1" });

    await client.getDocuments();
    await client.getPage("espresso", 3);
    await client.getWorkspace();
    expect((await ask()).map((e) => e.event)).toEqual(["done"]);

    const own = agent.calls.filter((c) => c.path !== "/health" && c.path !== "/workspaces");
    expect(new Set(own.map((c) => c.path))).toEqual(
      new Set(["/lab/compare", "/upload", "/documents", "/documents/espresso/pages/3", "/workspaces/current", "/query/stream"]),
    );
    expect(own.every((c) => c.auth === "Bearer t1")).toBe(true);
  });

  it("is dropped on a 401, once, with a plain message; the next action creates a new workspace and nothing is retried", async () => {
    await load(true);
    await lab.compare("descale");
    agent.tokens.clear(); // it expired on the server
    const changes = vi.fn();
    const unsubscribe = workspace.subscribe(changes);

    const [documents, compared] = await Promise.allSettled([client.getDocuments(), lab.compare("grind")]);
    for (const outcome of [documents, compared]) {
      expect(outcome).toMatchObject({ status: "rejected", reason: { status: 401, message: workspace.LOST_MESSAGE } });
    }
    expect(workspace.LOST_MESSAGE).toMatch(/expired.*documents were deleted/);
    expect(requests("GET /documents")).toHaveLength(1);
    expect(requests("POST /lab/compare")).toHaveLength(2); // the first call, and the refused one: no retry
    expect(requests("POST /workspaces")).toHaveLength(1);
    expect(window.localStorage.getItem(workspace.WORKSPACE_KEY)).toBeNull();
    expect(workspace.workspaceState()).toMatchObject({ held: null, lost: true });
    expect(changes).toHaveBeenCalledTimes(1);

    const events = await ask();
    expect(events.map((e) => e.event)).toEqual(["done"]);
    expect(requests("POST /workspaces")).toHaveLength(2);
    expect(requests("POST /query/stream")[0]?.auth).toBe("Bearer t2");
    expect(workspace.workspaceState()).toMatchObject({ held: { token: "t2" }, lost: false });
    unsubscribe();
  });

  it("is forgotten without a loss when the workspace is deleted on purpose", async () => {
    await load(true);
    await upload();
    expect(await client.deleteWorkspace()).toEqual({ status: "deleted" });
    workspace.forget();
    expect(workspace.workspaceState()).toMatchObject({ held: null, lost: false });
    await expect(client.getPage("espresso", 3)).rejects.toMatchObject({ message: client.NO_WORKSPACE });
    expect(requests("GET /documents/espresso/pages/3")).toHaveLength(0);
  });

  it("is never asked for or sent when the agent runs without workspaces", async () => {
    await load(false);
    expect((await client.getHealth()).workspaces).toBe(false);
    await Promise.all([lab.compare("descale"), upload(), client.getDocuments(), ask()]);
    expect(requests("POST /workspaces")).toHaveLength(0);
    expect(agent.calls.every((c) => c.auth === null)).toBe(true);
    expect(workspace.workspaceState()).toMatchObject({ on: false, held: null });
  });
});

describe("limit refusals", () => {
  it("show the agent's message, which names the setting, for a question (429) and an upload (409)", async () => {
    await load(true);
    agent.refuse("POST /query/stream", 429, "limit reached: this workspace has asked its questions (SEXTANT_WORKSPACE_QUESTIONS=100)", {
      "Retry-After": "60",
    });
    agent.refuse("POST /upload", 409, "limit reached: this workspace holds 20 documents (SEXTANT_WORKSPACE_DOCUMENTS=20)");

    const error = (await ask()).find((e) => e.event === "error");
    expect(error).toMatchObject({
      status: 429,
      message: expect.stringMatching(/SEXTANT_WORKSPACE_QUESTIONS=100\) \(try again in 60 s\)$/),
    });
    await expect(upload()).rejects.toMatchObject({ status: 409, message: expect.stringContaining("SEXTANT_WORKSPACE_DOCUMENTS=20") });
    expect(workspace.workspaceState().held?.token).toBe("t1"); // a refusal is not a lost workspace
  });
});
