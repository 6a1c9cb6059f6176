/**
 * Server-sent events over fetch: EventSource cannot POST, so the stream is read as bytes and split
 * here by the WHATWG rules (lines end in LF, CR or CRLF; a blank line dispatches; `data` lines join
 * with LF; a leading space after the colon is dropped; lines starting with `:` are comments).
 */
import { type AgentEvent, EVENT_NAMES, type EventName } from "./types";

export interface SseFrame {
  event: string;
  data: string;
  id?: string;
}

export class SseParser {
  private buffer = "";
  private event = "";
  private data: string[] = [];
  private id: string | undefined;

  /** Feed decoded text; returns every frame completed by it. */
  push(chunk: string): SseFrame[] {
    this.buffer += chunk;
    const frames: SseFrame[] = [];
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const c = this.buffer[i];
      if (c !== "\n" && c !== "\r") continue;
      if (c === "\r" && i === this.buffer.length - 1) break; // may be the first half of CRLF
      const line = this.buffer.slice(start, i);
      if (c === "\r" && this.buffer[i + 1] === "\n") i++;
      start = i + 1;
      const frame = this.line(line);
      if (frame) frames.push(frame);
    }
    this.buffer = this.buffer.slice(start);
    return frames;
  }

  /** The stream ended: per the spec an unterminated frame is dropped. */
  end(): SseFrame[] {
    this.buffer = "";
    this.event = "";
    this.data = [];
    return [];
  }

  private line(line: string): SseFrame | null {
    if (line === "") {
      if (this.data.length === 0) {
        this.event = "";
        return null;
      }
      const frame: SseFrame = { event: this.event || "message", data: this.data.join("\n") };
      if (this.id !== undefined) frame.id = this.id;
      this.event = "";
      this.data = [];
      return frame;
    }
    if (line.startsWith(":")) return null;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.event = value;
    else if (field === "data") this.data.push(value);
    else if (field === "id") this.id = value;
    return null;
  }
}

/** A frame as one of the agent's typed events; frames of other names or bad JSON are skipped (null). */
export function toAgentEvent(frame: SseFrame): AgentEvent | null {
  if (!EVENT_NAMES.includes(frame.event as EventName)) return null;
  try {
    const data = JSON.parse(frame.data) as Record<string, unknown>;
    return { ...data, event: frame.event } as AgentEvent;
  } catch {
    return null;
  }
}

/** Read a response body to the end, calling `onEvent` for each agent event as it arrives. */
export async function readAgentEvents(body: ReadableStream<Uint8Array>, onEvent: (event: AgentEvent) => void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      for (const frame of parser.push(decoder.decode(value, { stream: true }))) {
        const event = toAgentEvent(frame);
        if (event) onEvent(event);
      }
    }
    for (const frame of parser.push(decoder.decode())) {
      const event = toAgentEvent(frame);
      if (event) onEvent(event);
    }
  } finally {
    parser.end();
    reader.releaseLock();
  }
}
