"""Gemini's embedding models through google-genai (``SEXTANT_EMBEDDER=gemini:gemini-embedding-001``).

One ``models.embed_content`` call per batch, which the SDK sends as ``batchEmbedContents``; questions are
embedded with task type ``RETRIEVAL_QUERY`` and passages with ``RETRIEVAL_DOCUMENT``, as the model card asks.
The SDK's own retries are off: ``RemoteModel`` retries, paces and counts, the same for every remote embedder.
google-genai comes with the ``app`` extra; a plain install is told so.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from sextant.kb.embed_remote import QUERY, RETRYABLE, RemoteModel, RemoteOptions, Transient, retry_after_of
from sextant.kb.embeddings import EmbedderError

TASK_TYPES = {QUERY: "RETRIEVAL_QUERY"}
DOCUMENT_TASK = "RETRIEVAL_DOCUMENT"
API_VERSION = "v1beta"
DEFAULT_URL = "https://generativelanguage.googleapis.com"


class GeminiEmbeddings(RemoteModel):
    """``batchEmbedContents`` on the Gemini Developer API (or a server speaking it at SEXTANT_EMBEDDER_URL)."""

    def __init__(self, name: str, model: str, options: RemoteOptions, **kwargs: Any) -> None:
        """Raises:
        EmbedderError: google-genai is not installed, no key is set, or the API refuses the first request.
        """
        if importlib.util.find_spec("google.genai") is None:
            raise EmbedderError(
                f"SEXTANT_EMBEDDER={name} needs google-genai, which this install lacks: pip install 'sextant-kb[app]' "
                "(or pip install google-genai)"
            )
        if not options.api_key:
            raise EmbedderError(f"SEXTANT_EMBEDDER={name} needs SEXTANT_EMBEDDER_API_KEY, a Gemini API key")
        import httpx
        from google import genai
        from google.genai import types

        self.url = options.url or DEFAULT_URL
        # Our own httpx client: otherwise the SDK may pick aiohttp, and its pool is ours to close.
        self._http = httpx.Client(timeout=options.timeout_s)
        self._client = genai.Client(
            api_key=options.api_key,
            vertexai=False,  # whatever GOOGLE_GENAI_USE_VERTEXAI says: this speaks the Developer API
            http_options=types.HttpOptions(
                base_url=options.url,
                api_version=API_VERSION,
                timeout=int(options.timeout_s * 1000),
                retry_options=types.HttpRetryOptions(attempts=1),
                httpx_client=self._http,
            ),
        )
        try:
            super().__init__(name, model, options, **kwargs)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        self._client.close()
        self._http.close()

    def _request(self, texts: list[str], side: str) -> list[list[float]]:
        import httpx
        from google.genai import errors, types

        config = types.EmbedContentConfig(
            task_type=TASK_TYPES.get(side, DOCUMENT_TASK), output_dimensionality=self.options.dimensions
        )
        # One Content per text: a list of bare strings is one multi-part content to the multimodal models.
        contents: Any = [types.Content(parts=[types.Part(text=t)]) for t in texts]
        try:
            answer = self._client.models.embed_content(model=self.model, contents=contents, config=config)
        except httpx.TimeoutException as exc:
            raise Transient(f"no answer from Gemini within {self.options.timeout_s:g} s") from exc
        except httpx.TransportError as exc:
            raise Transient(f"Gemini could not be reached at {self.url} ({type(exc).__name__})") from exc
        except errors.APIError as exc:
            code = int(exc.code or 0)
            headers = getattr(getattr(exc, "response", None), "headers", None)
            if code in RETRYABLE or code >= 500:
                raise Transient(f"Gemini answered {code} {exc.status}", retry_after_of(headers or {})) from exc
            if code in (400, 401, 403) and "key" in str(exc.message or "").lower():
                raise EmbedderError("Gemini rejected the API key; check SEXTANT_EMBEDDER_API_KEY") from exc
            if code == 404:
                raise EmbedderError(f"Gemini has no embedding model {self.model!r}; check SEXTANT_EMBEDDER") from exc
            raise EmbedderError(f"Gemini refused the request ({code} {exc.status}: {exc.message})") from exc
        return [list(e.values or []) for e in answer.embeddings or []]
