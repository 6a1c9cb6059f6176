"""Embedders behind an API: an OpenAI-compatible ``/v1/embeddings`` endpoint, or Gemini's (``embed_gemini``).

``SEXTANT_EMBEDDER=openai:<model>`` posts ``{"model", "input": [texts]}`` to ``SEXTANT_EMBEDDER_URL``/embeddings,
the protocol Ollama, llama.cpp's server, Text Embeddings Inference and vLLM all speak; ``gemini:<model>`` calls
``batchEmbedContents`` through google-genai. Either way:

- texts go in batches of ``SEXTANT_EMBEDDER_BATCH``, one request each;
- requests are spaced to ``SEXTANT_EMBEDDER_RPM`` requests and ``SEXTANT_EMBEDDER_TPM`` tokens per minute
  (``Pacer``: a virtual schedule, GCRA, so there are no bursts to trip a provider's own limiter);
- a request answered 429 or 5xx, or not answered in ``SEXTANT_EMBEDDER_TIMEOUT_S``, is retried up to
  ``SEXTANT_EMBEDDER_RETRIES`` times after exponential backoff with jitter, or after what Retry-After says;
- the name a store records is ``SEXTANT_EMBEDDER`` itself (``openai:nomic-embed-text``) and the dimension the
  endpoint answers with: the URL and the key never reach the store, so a store refuses another model but not
  the same model served from another address.

Chunks are cut with the packaged MiniLM tokenizer: the remote model's own is not at hand, so sizes in tokens
are an estimate of its count, and ``SEXTANT_EMBEDDER_WINDOW`` says how many it reads.
"""

from __future__ import annotations

import email.utils
import logging
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from sextant.kb.embeddings import EmbedderError
from sextant.settings import KbSettings

log = logging.getLogger(__name__)

QUERY, DOCUMENT = "query", "document"
# A server that asks for a longer pause than this is out of quota, not busy: say so instead of hanging.
MAX_RETRY_AFTER_S = 300.0
RETRYABLE = frozenset({408, 409, 425, 429, 500, 502, 503, 504})

Sleep = Callable[[float], None]
Clock = Callable[[], float]


@dataclass(frozen=True, slots=True)
class RemoteOptions:
    """The ``SEXTANT_EMBEDDER_*`` settings a remote embedder reads (``from_settings``)."""

    url: str | None = None
    api_key: str | None = None
    batch: int = 32
    rpm: float = 0.0
    tpm: float = 0.0
    timeout_s: float = 60.0
    retries: int = 5
    dimensions: int | None = None
    window: int = 512
    query_prefix: str = ""
    document_prefix: str = ""

    @classmethod
    def from_settings(cls, settings: KbSettings) -> RemoteOptions:
        key = settings.embedder_api_key
        return cls(
            url=settings.embedder_url,
            api_key=key.get_secret_value() if key is not None else None,
            batch=settings.embedder_batch,
            rpm=settings.embedder_rpm,
            tpm=settings.embedder_tpm,
            timeout_s=settings.embedder_timeout_s,
            retries=settings.embedder_retries,
            dimensions=settings.embedder_dimensions,
            window=settings.embedder_window,
            query_prefix=settings.embedder_query_prefix,
            document_prefix=settings.embedder_document_prefix,
        )

    def __repr__(self) -> str:  # the key must not reach a log line or a traceback through repr
        return f"RemoteOptions(url={self.url!r}, batch={self.batch}, rpm={self.rpm}, tpm={self.tpm})"


class Transient(Exception):
    """A request that may succeed if sent again: 429, 5xx, a timeout, a dropped connection."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


def retry_after_s(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks for: delta-seconds or an HTTP date (RFC 9110 §10.2.3)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


class Pacer:
    """At most ``rpm`` requests and ``tpm`` tokens per minute, spaced evenly (GCRA's virtual schedule).

    Each request reserves the next free moment and moves it on by its own cost, ``60/rpm`` s or
    ``60 * tokens / tpm`` s, whichever is longer; a request sleeps until its moment. Reservations are taken under
    a lock and slept outside it, so threads sharing one embedder share its budget.
    """

    def __init__(self, rpm: float, tpm: float, *, clock: Clock = time.monotonic, sleep: Sleep = time.sleep) -> None:
        self.rpm, self.tpm = rpm, tpm
        self._clock, self._sleep = clock, sleep
        self._free_at = float("-inf")
        self._lock = threading.Lock()

    def wait(self, tokens: int) -> float:
        """Sleep until a request of ``tokens`` tokens may go; returns the seconds slept."""
        cost = max(60.0 / self.rpm if self.rpm else 0.0, 60.0 * tokens / self.tpm if self.tpm else 0.0)
        with self._lock:
            now = self._clock()
            start = max(now, self._free_at)
            self._free_at = start + cost
        delay = start - now
        if delay > 0:
            self._sleep(delay)
        return delay


@dataclass(frozen=True, slots=True)
class Backoff:
    """Exponential backoff with jitter: ``base * 2**attempt``, at most ``cap``, times a factor in [0.5, 1)."""

    base_s: float = 0.5
    cap_s: float = 30.0

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        if retry_after is not None:
            return retry_after
        return min(self.cap_s, self.base_s * 2**attempt) * (0.5 + rng.random() / 2)


class RemoteModel:
    """What the ``Embedder`` needs of a runtime (``SentenceModel``), for a model behind an API.

    Subclasses send one batch (``_request``) and classify failures: ``Transient`` is retried, ``EmbedderError``
    is final. ``prompts`` holds the sides themselves: the subclass turns a side into a prefix or a task type.
    """

    runtime = "remote"

    def __init__(
        self,
        name: str,
        model: str,
        options: RemoteOptions,
        *,
        sleep: Sleep = time.sleep,
        clock: Clock = time.monotonic,
        rng: random.Random | None = None,
        backoff: Backoff = Backoff(),
    ) -> None:
        """Raises:
        EmbedderError: the endpoint cannot be reached or refuses the first request (made to learn the dimension).
        """
        from tokenizers import Tokenizer

        from sextant.kb.embed_onnx import TOKENIZER

        self.name, self.model, self.options = name, model, options
        self.window = options.window
        self.prompts: dict[str, str | None] = {QUERY: QUERY, DOCUMENT: DOCUMENT}
        self.tokenizer: Any = Tokenizer.from_file(str(TOKENIZER))
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()
        self.pacer = Pacer(options.rpm, options.tpm, clock=clock, sleep=sleep)
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._backoff = backoff
        self.requests = 0  # sent, retries included
        self.retries = 0
        self.dim = 0
        self.dim = len(self._send([f"{options.document_prefix}dimension probe"], DOCUMENT)[0])

    def close(self) -> None:
        """Release the connection pool."""

    def encode(self, texts: Sequence[str], prompt: str | None, batch_size: int) -> npt.NDArray[np.float32]:
        """Vectors of ``texts`` on side ``prompt``, in requests of ``SEXTANT_EMBEDDER_BATCH`` texts.

        The caller's ``batch_size`` is a local model's memory bound; an endpoint's bound is its own setting.
        """
        del batch_size
        side = prompt or DOCUMENT
        prefix = self.options.query_prefix if side == QUERY else self.options.document_prefix
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        step = self.options.batch
        for lo in range(0, len(texts), step):
            part = [prefix + t for t in texts[lo : lo + step]]
            out[lo : lo + len(part)] = self._send(part, side)
        return out

    def _send(self, texts: list[str], side: str) -> list[list[float]]:
        tokens = sum(len(e.ids) for e in self.tokenizer.encode_batch(texts)) if self.options.tpm else 0
        for attempt in range(self.options.retries + 1):
            self.pacer.wait(tokens)
            self.requests += 1
            try:
                vectors = self._request(texts, side)
            except Transient as exc:
                if attempt == self.options.retries:
                    raise EmbedderError(
                        f"embedder {self.name!r} failed {attempt + 1} times ({exc}); try again later, or raise "
                        "SEXTANT_EMBEDDER_RETRIES or SEXTANT_EMBEDDER_TIMEOUT_S"
                    ) from exc
                if exc.retry_after is not None and exc.retry_after > MAX_RETRY_AFTER_S:
                    raise EmbedderError(
                        f"embedder {self.name!r}: the endpoint asks to wait {exc.retry_after:.0f} s ({exc}); its quota "
                        "is spent: try again then, or lower SEXTANT_EMBEDDER_RPM / SEXTANT_EMBEDDER_TPM"
                    ) from exc
                delay = self._backoff.delay(attempt, exc.retry_after, self._rng)
                log.warning("embedder %s: %s; retrying in %.1f s", self.name, exc, delay)
                self.retries += 1
                self._sleep(delay)
                continue
            return self._checked(vectors, len(texts))
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _checked(self, vectors: list[list[float]], n: int) -> list[list[float]]:
        if len(vectors) != n:
            raise EmbedderError(f"embedder {self.name!r} answered {len(vectors)} vectors for {n} texts")
        if self.dim and any(len(v) != self.dim for v in vectors):
            raise EmbedderError(
                f"embedder {self.name!r} answered vectors of {sorted({len(v) for v in vectors})} dimensions where "
                f"it answered {self.dim} before; is another model now served under that name?"
            )
        return vectors

    def _request(self, texts: list[str], side: str) -> list[list[float]]:
        raise NotImplementedError


class OpenAIEmbeddings(RemoteModel):
    """``POST {url}/embeddings`` with ``{"model", "input"[, "dimensions"]}``; answers ``data[].embedding``."""

    def __init__(self, name: str, model: str, options: RemoteOptions, **kwargs: Any) -> None:
        import httpx

        if not options.url:
            raise EmbedderError(
                f"SEXTANT_EMBEDDER={name} needs SEXTANT_EMBEDDER_URL, the API's base URL: e.g. "
                "http://127.0.0.1:11434/v1 (Ollama), http://127.0.0.1:8080/v1 (llama.cpp's server, TEI, vLLM), "
                "https://api.openai.com/v1"
            )
        self.url = options.url.rstrip("/")
        headers = {"Authorization": f"Bearer {options.api_key}"} if options.api_key else {}
        self._http = httpx.Client(headers=headers, timeout=options.timeout_s)
        try:
            super().__init__(name, model, options, **kwargs)
        except BaseException:
            self._http.close()
            raise

    def close(self) -> None:
        self._http.close()

    def _request(self, texts: list[str], side: str) -> list[list[float]]:
        import httpx

        body: dict[str, Any] = {"model": self.model, "input": texts}
        if self.options.dimensions:
            body["dimensions"] = self.options.dimensions
        try:
            answer = self._http.post(f"{self.url}/embeddings", json=body)
        except httpx.TimeoutException as exc:
            raise Transient(f"no answer from {self.url} within {self.options.timeout_s:g} s") from exc
        except httpx.TransportError as exc:
            raise Transient(f"{self.url} could not be reached ({type(exc).__name__})") from exc
        status = answer.status_code
        if status in RETRYABLE or status >= 500:
            raise Transient(f"HTTP {status} from {self.url}", retry_after_of(answer.headers))
        if status in (401, 403):
            raise EmbedderError(
                f"{self.url} refused the request (HTTP {status}); check SEXTANT_EMBEDDER_API_KEY and that the key "
                f"may use model {self.model!r}"
            )
        if status == 404:
            raise EmbedderError(
                f"{self.url}/embeddings answered 404 for model {self.model!r}: check SEXTANT_EMBEDDER_URL (the base "
                "URL, ending in /v1 for most servers) and the model name (Ollama: ollama pull it first)"
            )
        if status >= 400:
            raise EmbedderError(f"{self.url} refused the request (HTTP {status}: {answer.text[:300]})")
        try:
            rows = sorted(answer.json()["data"], key=lambda row: int(row["index"]))
            return [[float(x) for x in row["embedding"]] for row in rows]
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbedderError(
                f"{self.url}/embeddings answered something that is not an embedding list ({exc})"
            ) from exc


def retry_after_of(headers: Any) -> float | None:
    # OpenAI's own API also says it in milliseconds; the standard header wins where both are sent.
    seconds = retry_after_s(headers.get("retry-after"))
    if seconds is None and (ms := headers.get("retry-after-ms")):
        try:
            seconds = max(0.0, float(ms) / 1000)
        except ValueError:
            return None
    return seconds


def remote_model(name: str, options: RemoteOptions | None = None, **kwargs: Any) -> RemoteModel:
    """The runtime for ``openai:<model>`` or ``gemini:<model>``; ``options`` default to the environment's.

    Raises:
        EmbedderError: the name is malformed, a setting it needs is missing, or the endpoint fails.
    """
    scheme, _, model = name.partition(":")
    if not model.strip():
        raise EmbedderError(f"SEXTANT_EMBEDDER={name!r} names no model: write {scheme}:<model>, e.g. openai:bge-m3")
    options = options or RemoteOptions.from_settings(KbSettings())
    if scheme == "openai":
        return OpenAIEmbeddings(name, model, options, **kwargs)
    from sextant.kb.embed_gemini import GeminiEmbeddings

    return GeminiEmbeddings(name, model, options, **kwargs)
