"""A test double at the network boundary: a real HTTP server on 127.0.0.1 speaking two embedding protocols.

No embedding API can be reached from CI, so Sextant's remote embedders are pointed at this server. It serves

    POST /v1/embeddings                                  OpenAI's protocol (Ollama, llama.cpp, TEI, vLLM speak it):
         {"model", "input": [texts], "dimensions"?} -> {"object": "list", "data": [{"index", "embedding"}], ...}
    POST /v1beta/models/{model}:batchEmbedContents       Gemini's, as google-genai sends it:
         {"requests": [{"model", "content": {"parts": [{"text"}]}, "taskType"?, "outputDimensionality"?}]}
         -> {"embeddings": [{"values"}]}

Vectors are deterministic and carry meaning: each word of a text adds a signed random vector seeded by the
word (feature hashing), so texts that share words are close. The key is checked (``Authorization: Bearer`` or
``x-goog-api-key``); every request is recorded; scripted failures (``fail``: a status, a Retry-After) and slow
answers (``stall``: past the client's timeout) are served in order before normal answers; ``latency_s`` delays
every answer, for the benchmark.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import threading
from collections import deque
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

WORD = re.compile(r"\w+")


def vector_of(text: str, dim: int) -> list[float]:
    """The double's embedding of ``text``: a sum of one seeded random vector per word (lower-cased)."""
    v = np.zeros(dim, dtype=np.float64)
    for word in WORD.findall(text.lower()):
        v += _word_vector(word, dim)
    if not v.any():
        v[0] = 1.0
    return v.tolist()


@functools.lru_cache(maxsize=1 << 16)
def _word_vector(word: str, dim: int) -> np.ndarray:
    # Cached so that the double's own cost stays small beside what the benchmark measures on the client's side.
    seed = int.from_bytes(hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest(), "little")
    return np.random.default_rng(seed).standard_normal(dim)


@dataclass(frozen=True)
class Recorded:
    protocol: str  # "openai" or "gemini"
    model: str
    texts: list[str]
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass(frozen=True)
class Scripted:
    status: int = 200
    retry_after: str | None = None
    stall_s: float = 0.0  # hold the answer this long (released early when the server stops)


class EmbeddingServerDouble:
    """Runs on a free port in a thread; ``openai_url`` and ``gemini_url`` are what the clients are given."""

    def __init__(self, *, dim: int = 64, api_key: str = "test-key", latency_s: float = 0.0) -> None:
        self.dim, self.api_key, self.latency_s = dim, api_key, latency_s
        self.dims: dict[str, int] = {}  # model -> its own dimension, where not ``dim``
        self.requests: list[Recorded] = []
        self._script: deque[Scripted] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, name="embedding-double", daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def openai_url(self) -> str:
        return f"{self.base_url}/v1"

    def start(self) -> EmbeddingServerDouble:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()

    def __enter__(self) -> EmbeddingServerDouble:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def fail(self, status: int, *, retry_after: str | None = None, times: int = 1) -> None:
        """Answer the next ``times`` requests with ``status`` (and a Retry-After header, if given)."""
        for _ in range(times):
            self._script.append(Scripted(status=status, retry_after=retry_after))

    def stall(self, seconds: float) -> None:
        """Hold the next answer ``seconds`` before sending it: a client with a shorter timeout gives up first."""
        self._script.append(Scripted(stall_s=seconds))

    def texts(self) -> list[str]:
        """Every text embedded, in the order the requests arrived."""
        return [t for r in self.requests for t in r.texts]

    def _next(self) -> Scripted:
        with self._lock:
            return self._script.popleft() if self._script else Scripted()

    def _record(self, recorded: Recorded) -> None:
        with self._lock:
            self.requests.append(recorded)

    def _dim(self, model: str, asked: int | None) -> int:
        return asked or self.dims.get(model, self.dim)


def _handler_for(server: EmbeddingServerDouble) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # stderr stays the test's
            return

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            path = self.path.partition("?")[0]
            if path == "/v1/embeddings":
                self._openai(body)
            elif path.startswith("/v1beta/models/") and path.endswith(":batchEmbedContents"):
                self._gemini(path.removeprefix("/v1beta/models/").removesuffix(":batchEmbedContents"), body)
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def _openai(self, body: dict[str, Any]) -> None:
            texts = body.get("input")
            texts = [texts] if isinstance(texts, str) else list(texts or [])
            model = str(body.get("model", ""))
            server._record(Recorded("openai", model, texts, dict(self.headers.items()), body))
            if self.headers.get("Authorization") != f"Bearer {server.api_key}":
                self._send(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}})
                return
            if self._scripted_failure():
                return
            dim = server._dim(model, body.get("dimensions"))
            data = [{"object": "embedding", "index": i, "embedding": vector_of(t, dim)} for i, t in enumerate(texts)]
            data.reverse()  # the protocol orders by ``index``, not by position: a client must sort
            used = sum(len(t.split()) for t in texts)
            self._send(200, {"object": "list", "data": data, "model": model, "usage": {"prompt_tokens": used}})

        def _gemini(self, model: str, body: dict[str, Any]) -> None:
            requests = body.get("requests", [])
            texts = [" ".join(p.get("text", "") for p in r["content"]["parts"]) for r in requests]
            server._record(Recorded("gemini", model, texts, dict(self.headers.items()), body))
            if self.headers.get("x-goog-api-key") != server.api_key:
                # What the real API answers for a wrong key.
                error = {
                    "code": 400,
                    "message": "API key not valid. Please pass a valid API key.",
                    "status": "INVALID_ARGUMENT",
                }
                self._send(400, {"error": error})
                return
            if self._scripted_failure():
                return
            embeddings = [
                {"values": vector_of(t, server._dim(model, r.get("outputDimensionality")))}
                for t, r in zip(texts, requests, strict=True)
            ]
            self._send(200, {"embeddings": embeddings})

        def _scripted_failure(self) -> bool:
            step = server._next()
            pause = step.stall_s or server.latency_s
            if pause:
                server._stopping.wait(pause)
            if step.status == 200:
                return False
            headers = {"Retry-After": step.retry_after} if step.retry_after is not None else {}
            phrase = HTTPStatus(step.status).phrase
            self._send(step.status, {"error": {"code": step.status, "message": phrase, "status": phrase}}, headers)
            return True

        def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode("utf-8")
            try:
                self.send_response(status, HTTPStatus(status).phrase)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # a client that timed out has gone; that is the case being tested

    return Handler
