"""A test double at the network boundary: a real local HTTP server speaking the Gemini REST protocol.

The Gemini API cannot be reached from CI, so the adapter's real ``google-genai`` code path is pointed at
this server instead (``HttpOptions(base_url=...)``). It serves

    POST /v1beta/models/{model}:generateContent
    POST /v1beta/models/{model}:streamGenerateContent?alt=sse   (frames ``data: {json}\\r\\n\\r\\n``)

checks the ``x-goog-api-key`` header, records every request body for assertions, and replays queued
scripted replies. The helpers below emit the JSON shapes of the public API reference, camelCase as on the
wire: ``GenerateContentResponse`` -> ``candidates[].content.parts[]`` (``text``, ``thought``,
``thoughtSignature``, ``functionCall{name,args,id}``, ``toolCall``/``toolResponse``), ``finishReason``,
``groundingMetadata`` (``webSearchQueries``, ``groundingChunks[].web{uri,title}``,
``groundingSupports[].segment{startIndex,endIndex,text}`` in UTF-8 bytes, ``groundingChunkIndices``),
``usageMetadata``, and the error body ``{"error": {"code", "message", "status"}}``.
"""

from __future__ import annotations

import base64
import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

API_VERSION = "v1beta"

# How long a gated stream waits for the test before sending the rest anyway: a broken adapter then fails
# its assertion instead of hanging the suite.
GATE_PATIENCE_S = 10.0


# ---- the documented JSON shapes --------------------------------------------------------------------------


def text_part(text: str, *, thought: bool = False, signature: bytes | None = None) -> dict[str, Any]:
    part: dict[str, Any] = {"text": text}
    if thought:
        part["thought"] = True
    if signature is not None:
        part["thoughtSignature"] = encode_signature(signature)
    return part


def function_call_part(
    name: str, args: dict[str, Any], *, call_id: str | None = None, signature: bytes | None = None
) -> dict[str, Any]:
    call: dict[str, Any] = {"name": name, "args": args}
    if call_id is not None:
        call["id"] = call_id
    part: dict[str, Any] = {"functionCall": call}
    if signature is not None:
        part["thoughtSignature"] = encode_signature(signature)
    return part


def search_call_parts(call_id: str, queries: list[str], result: dict[str, Any]) -> list[dict[str, Any]]:
    """A server-side Google Search invocation, as returned with ``includeServerSideToolInvocations``."""
    return [
        {"toolCall": {"id": call_id, "toolType": "GOOGLE_SEARCH_WEB", "args": {"queries": queries}}},
        {"toolResponse": {"id": call_id, "toolType": "GOOGLE_SEARCH_WEB", "response": result}},
    ]


def encode_signature(signature: bytes) -> str:
    """Standard base64, as the API's JSON encodes ``bytes`` fields."""
    return base64.b64encode(signature).decode("ascii")


def usage(prompt: int, candidates: int, *, thoughts: int = 0, tool_use_prompt: int = 0) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": candidates,
        "totalTokenCount": prompt + candidates + thoughts + tool_use_prompt,
    }
    if thoughts:
        meta["thoughtsTokenCount"] = thoughts
    if tool_use_prompt:
        meta["toolUsePromptTokenCount"] = tool_use_prompt
    return meta


def byte_span(text: str, fragment: str) -> tuple[int, int]:
    """Where ``fragment`` lies in ``text`` in UTF-8 bytes: the unit of the API's segment offsets."""
    start = text.index(fragment)
    begin = len(text[:start].encode("utf-8"))
    return begin, begin + len(fragment.encode("utf-8"))


def grounding(
    text: str,
    pages: list[tuple[str, str]],
    supports: list[tuple[str, list[int]]],
    *,
    queries: list[str] | None = None,
) -> dict[str, Any]:
    """``groundingMetadata`` for ``text``: each support is (a fragment of the text, indices into ``pages``)."""
    support_json = []
    for fragment, indices in supports:
        start, end = byte_span(text, fragment)
        segment: dict[str, Any] = {"endIndex": end, "text": fragment}
        if start:  # proto3 JSON omits zero values, and the API does
            segment["startIndex"] = start
        support_json.append({"segment": segment, "groundingChunkIndices": indices})
    return {
        "webSearchQueries": queries or [],
        "searchEntryPoint": {"renderedContent": "<div>search chips</div>"},
        "groundingChunks": [{"web": {"uri": uri, "title": title}} for uri, title in pages],
        "groundingSupports": support_json,
    }


def response(
    *parts: dict[str, Any],
    finish_reason: str | None = None,
    usage_metadata: dict[str, Any] | None = None,
    grounding_metadata: dict[str, Any] | None = None,
    model_version: str = "gemini-3.1-flash-lite",
) -> dict[str, Any]:
    """One ``GenerateContentResponse``: a whole reply, or one chunk of a streamed one."""
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    if finish_reason is not None:
        candidate["finishReason"] = finish_reason
    if grounding_metadata is not None:
        candidate["groundingMetadata"] = grounding_metadata
    body: dict[str, Any] = {"candidates": [candidate], "modelVersion": model_version, "responseId": "resp-1"}
    if usage_metadata is not None:
        body["usageMetadata"] = usage_metadata
    return body


def error_body(code: int, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": _STATUS_NAMES.get(code, "UNKNOWN")}}


_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


# ---- the server ------------------------------------------------------------------------------------------


@dataclass
class Reply:
    """A scripted answer: response frames (one for ``generateContent``), or an HTTP error."""

    frames: list[dict[str, Any]] = field(default_factory=list)
    status: int = 200
    error: dict[str, Any] | None = None
    # Streams only: after this many frames, wait until the test calls ``release()``.
    gate_after: int | None = None


@dataclass(frozen=True)
class RecordedRequest:
    model: str
    method: str  # "generateContent" or "streamGenerateContent"
    query: str
    headers: dict[str, str]
    body: dict[str, Any]


class GeminiProtocolServer:
    """Runs on 127.0.0.1 on a free port in a thread; ``base_url`` is what the SDK is given."""

    def __init__(self, api_key: str = "test-key") -> None:
        self.api_key = api_key
        self.requests: list[RecordedRequest] = []
        self.frames_sent = 0
        self._replies: deque[Reply] = deque()
        self._gate = threading.Event()
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        # A short poll keeps shutdown, and so each test's teardown, quick.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, name="gemini-protocol-server", daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> GeminiProtocolServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._gate.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()

    def enqueue(self, *frames: dict[str, Any], gate_after: int | None = None) -> None:
        self._replies.append(Reply(list(frames), gate_after=gate_after))

    def enqueue_error(self, code: int, message: str) -> None:
        self._replies.append(Reply(status=code, error=error_body(code, message)))

    def release(self) -> None:
        """Let a gated stream send its remaining frames."""
        self._gate.set()

    def last_body(self) -> dict[str, Any]:
        return self.requests[-1].body

    def _next_reply(self) -> Reply:
        with self._lock:
            if not self._replies:
                return Reply(status=500, error=error_body(500, "the protocol server has no scripted reply left"))
            return self._replies.popleft()


def _handler_for(server: GeminiProtocolServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            path, _, query = self.path.partition("?")
            prefix = f"/{API_VERSION}/models/"
            model, _, method = path.removeprefix(prefix).partition(":")
            if not path.startswith(prefix) or method not in ("generateContent", "streamGenerateContent"):
                self._send_json(404, error_body(404, f"Method not found: {self.path}"))
                return
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            server.requests.append(RecordedRequest(model, method, query, dict(self.headers.items()), body))
            if self.headers.get("x-goog-api-key") != server.api_key:
                # What the real API answers for a wrong key.
                self._send_json(400, error_body(400, "API key not valid. Please pass a valid API key."))
                return
            reply = server._next_reply()
            if reply.error is not None:
                self._send_json(reply.status, reply.error)
            elif method == "generateContent":
                assert len(reply.frames) == 1, "generateContent answers with exactly one response"
                self._send_json(200, reply.frames[0])
            else:
                self._send_stream(reply)

        def _send_json(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode("utf-8")
            self.send_response(status, HTTPStatus(status).phrase)
            self.send_header("Content-Type", "application/json; charset=UTF-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _send_stream(self, reply: Reply) -> None:
            frames = [f"data: {json.dumps(frame)}\r\n\r\n".encode() for frame in reply.frames]
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(sum(len(f) for f in frames)))
            self.end_headers()
            for i, frame in enumerate(frames):
                if reply.gate_after is not None and i == reply.gate_after:
                    server._gate.wait(GATE_PATIENCE_S)
                server.frames_sent += 1  # counted first, so a client that has read the frame sees it counted
                self.wfile.write(frame)
                self.wfile.flush()

        def log_message(self, format: str, *args: Any) -> None:
            return None  # keep pytest's output to the assertions

    return Handler
