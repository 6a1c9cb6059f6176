/** Plain HTTP to the agent, no workspace: its address, each request's trace context, and its refusals in its own words (`detail` names the limit or the fault). */
import { apiBase } from "./config";

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** The message for a refused request: `detail` (a string or a validation list), else the status line; a 429 says when to retry. */
export function messageFrom(status: number, statusText: string, body: unknown, retryAfter: string | null): string {
  let message = `${status} ${statusText}`.trim();
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (typeof detail === "string") message = detail;
  else if (Array.isArray(detail)) message = detail.map((d: { msg?: string }) => d.msg ?? JSON.stringify(d)).join("; ");
  if ((status === 429 || status === 503) && retryAfter) message += ` (try again in ${retryAfter} s)`;
  return message;
}

export async function errorFrom(response: Response): Promise<ApiError> {
  let body: unknown = null;
  try {
    body = await response.json();
  } catch {
    /* not JSON: the status line will do */
  }
  return new ApiError(messageFrom(response.status, response.statusText, body, response.headers.get("Retry-After")), response.status);
}

/** A new W3C trace context (version 00, sampled): the agent carries it to the knowledge base, so one trace id
 * names the browser's request on every log line it causes. */
export function newTraceparent(): string {
  const hex = (bytes: number) => Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, "0")).join("");
  let trace = hex(16);
  while (/^0+$/.test(trace)) trace = hex(16); // all zeros is the invalid trace id
  let span = hex(8);
  while (/^0+$/.test(span)) span = hex(8);
  return `00-${trace}-${span}-01`;
}

/** fetch against the agent's address, with a trace context of its own; a network failure becomes an ApiError that names the address. */
export async function request(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (!headers.has("traceparent")) headers.set("traceparent", newTraceparent());
  try {
    return await fetch(`${apiBase()}${path}`, { ...init, headers });
  } catch (error) {
    if ((error as Error).name === "AbortError") throw error;
    throw unreachable();
  }
}

export const unreachable = () => new ApiError(`cannot reach the agent at ${apiBase()}`, 0);
