/** The agent's HTTP API, typed by the generated schema: errors carry its own message; calls that reach a workspace send its token. */
import { apiBase } from "./config";
import { ApiError, errorFrom, messageFrom, request, unreachable } from "./http";
import type { DocumentEntry, DocumentsResponse, Health, IngestResponse, PageText, WorkspaceDeleted, WorkspaceInfo } from "./types";
import { type Access, authorization, learnMode, refused } from "./workspace";

/** Why a read found nothing to read: workspaces are on and this browser holds none. */
export const NO_WORKSPACE = "this browser holds no workspace now; documents from an earlier one were deleted with it";

/**
 * A request with the workspace's token; every call to the agent that needs one comes through here
 * (or through uploadFiles). Throws ApiError with the agent's message; a 401 drops the held token.
 */
export async function send(path: string, init: RequestInit = {}, access: Access = "read"): Promise<Response> {
  const auth = await authorization(access);
  if (auth === null) throw new ApiError(NO_WORKSPACE, 401);
  const response = await request(path, { ...init, headers: { ...auth, ...(init.headers as Record<string, string> | undefined) } });
  if (response.status === 401) throw refused(auth, await errorFrom(response));
  if (!response.ok) throw await errorFrom(response);
  return response;
}

export async function getHealth(signal?: AbortSignal): Promise<Health> {
  const response = await request("/health", { signal });
  if (!response.ok) throw await errorFrom(response);
  const health = (await response.json()) as Health;
  learnMode(health.workspaces === true);
  return health;
}

/** Every document; none while workspaces are on and this browser holds none (one is made on the first upload). */
export async function getDocuments(signal?: AbortSignal): Promise<DocumentEntry[]> {
  if ((await authorization("read")) === null) return [];
  return ((await (await send("/documents", { signal })).json()) as DocumentsResponse).documents;
}

export async function getPage(documentId: string, page: number, signal?: AbortSignal): Promise<PageText> {
  return (await (await send(`/documents/${encodeURIComponent(documentId)}/pages/${page}`, { signal })).json()) as PageText;
}

/** The longest quote the agent takes to highlight on a page image (its `quote` parameter's max_length). */
export const MAX_QUOTE_CHARS = 2000;

export interface PageImage {
  blob: Blob;
  /** Rectangles highlighted over the quote; null when the agent's header cannot be read (another origin). */
  highlights: number | null;
}

/** A PDF page as it looks, the quote highlighted; an ApiError with status 404 when there is no image of it. */
export async function getPageImage(documentId: string, page: number, quote?: string, signal?: AbortSignal): Promise<PageImage> {
  const query = quote?.trim() ? `?${new URLSearchParams({ quote: quote.slice(0, MAX_QUOTE_CHARS) })}` : "";
  const response = await send(`/documents/${encodeURIComponent(documentId)}/pages/${page}/image${query}`, { signal });
  const header = response.headers.get("X-Sextant-Highlights");
  return { blob: await response.blob(), highlights: header === null ? null : Number(header) };
}

export async function getWorkspace(signal?: AbortSignal): Promise<WorkspaceInfo> {
  return (await (await send("/workspaces/current", { signal })).json()) as WorkspaceInfo;
}

export async function deleteWorkspace(): Promise<WorkspaceDeleted> {
  return (await (await send("/workspaces/current", { method: "DELETE" })).json()) as WorkspaceDeleted;
}

/** POST /upload with upload progress (fetch cannot report it; XMLHttpRequest can). */
export async function uploadFiles(files: File[], onProgress: (fraction: number) => void, signal?: AbortSignal): Promise<IngestResponse> {
  const auth = await authorization("act");
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    const form = new FormData();
    for (const file of files) form.append("files", file, file.name);
    xhr.open("POST", `${apiBase()}/upload`);
    for (const [name, value] of Object.entries(auth ?? {})) xhr.setRequestHeader(name, value);
    xhr.responseType = "json";
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    };
    xhr.onload = () => {
      const body = xhr.response as unknown;
      if (xhr.status >= 200 && xhr.status < 300 && body) {
        onProgress(1);
        resolve(body as IngestResponse);
        return;
      }
      const error = new ApiError(messageFrom(xhr.status, `upload failed`, body, xhr.getResponseHeader("Retry-After")), xhr.status);
      reject(xhr.status === 401 && auth ? refused(auth, error) : error);
    };
    xhr.onerror = () => reject(unreachable());
    xhr.onabort = () => reject(new DOMException("aborted", "AbortError"));
    signal?.addEventListener("abort", () => xhr.abort());
    xhr.send(form);
  });
}
