/** The agent's HTTP API, typed by the generated schema. Errors carry the server's own message. */
import { apiBase } from "./config";
import type { DocumentEntry, DocumentsResponse, Health, IngestResponse, PageText } from "./types";

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** The message a failed response carries: FastAPI's `detail` (a string or validation list), else the status. */
export async function errorFrom(response: Response): Promise<ApiError> {
  let message = `${response.status} ${response.statusText}`.trim();
  try {
    const body = (await response.json()) as { detail?: unknown };
    if (typeof body.detail === "string") message = body.detail;
    else if (Array.isArray(body.detail))
      message = body.detail.map((d: { msg?: string }) => d.msg ?? JSON.stringify(d)).join("; ");
  } catch {
    /* not JSON: keep the status line */
  }
  if (response.status === 429) {
    const retry = response.headers.get("Retry-After");
    if (retry) message += ` (try again in ${retry} s)`;
  }
  return new ApiError(message, response.status);
}

async function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`${apiBase()}${path}`, { signal });
  } catch (error) {
    if ((error as Error).name === "AbortError") throw error;
    throw new ApiError(`cannot reach the agent at ${apiBase()}`, 0);
  }
  if (!response.ok) throw await errorFrom(response);
  return (await response.json()) as T;
}

export const getHealth = (signal?: AbortSignal) => getJson<Health>("/health", signal);

export async function getDocuments(signal?: AbortSignal): Promise<DocumentEntry[]> {
  return (await getJson<DocumentsResponse>("/documents", signal)).documents;
}

export const getPage = (documentId: string, page: number, signal?: AbortSignal) =>
  getJson<PageText>(`/documents/${encodeURIComponent(documentId)}/pages/${page}`, signal);

/** POST /upload with upload progress (fetch cannot report it; XMLHttpRequest can). */
export function uploadFiles(
  files: File[],
  onProgress: (fraction: number) => void,
  signal?: AbortSignal,
): Promise<IngestResponse> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    const form = new FormData();
    for (const file of files) form.append("files", file, file.name);
    xhr.open("POST", `${apiBase()}/upload`);
    xhr.responseType = "json";
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    };
    xhr.onload = () => {
      const body = xhr.response as { detail?: unknown } | null;
      if (xhr.status >= 200 && xhr.status < 300 && body) {
        onProgress(1);
        resolve(body as IngestResponse);
      } else {
        const detail = body && typeof body.detail === "string" ? body.detail : `upload failed (${xhr.status})`;
        reject(new ApiError(detail, xhr.status));
      }
    };
    xhr.onerror = () => reject(new ApiError(`cannot reach the agent at ${apiBase()}`, 0));
    xhr.onabort = () => reject(new DOMException("aborted", "AbortError"));
    signal?.addEventListener("abort", () => xhr.abort());
    xhr.send(form);
  });
}
