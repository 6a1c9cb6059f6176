/**
 * The one owner of the answer stream: POSTs /query/stream, parses the SSE frames and hands each
 * typed event to the caller. One stream at a time; `stop()` aborts it.
 */
import { useCallback, useEffect, useRef, useState } from "react";
import { send } from "@/api/client";
import { readAgentEvents } from "@/api/sse";
import type { AgentEvent, QueryRequest } from "@/api/types";

export type StreamOutcome = "done" | "stopped" | "failed";

export function useAgentStream() {
  const [streaming, setStreaming] = useState(false);
  const controller = useRef<AbortController | null>(null);

  useEffect(() => () => controller.current?.abort(), []);

  const ask = useCallback(async (body: QueryRequest, onEvent: (event: AgentEvent) => void): Promise<StreamOutcome> => {
    controller.current?.abort();
    const abort = new AbortController();
    controller.current = abort;
    setStreaming(true);
    let sawDone = false;
    const emit = (event: AgentEvent) => {
      if (event.event === "done") sawDone = true;
      onEvent(event);
    };
    try {
      const response = await send(
        "/query/stream",
        {
          method: "POST",
          headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
          body: JSON.stringify(body),
          signal: abort.signal,
        },
        "act",
      );
      if (!response.body) throw new Error("the agent sent an empty answer stream");
      await readAgentEvents(response.body, emit);
      if (!sawDone) emit({ event: "done", request_id: response.headers.get("X-Request-ID") ?? "", elapsed_ms: 0 });
      return "done";
    } catch (error) {
      if ((error as Error).name === "AbortError") return "stopped";
      emit({ event: "error", message: (error as Error).message, status: (error as { status?: number }).status ?? 500 });
      emit({ event: "done", request_id: "", elapsed_ms: 0 });
      return "failed";
    } finally {
      if (controller.current === abort) {
        controller.current = null;
        setStreaming(false);
      }
    }
  }, []);

  const stop = useCallback(() => controller.current?.abort(), []);

  return { ask, stop, streaming };
}
