"""Any OpenAI-compatible chat endpoint (``SEXTANT_LOCAL_URL``): llama.cpp's servers, Ollama, vLLM.

Same behaviour as the in-process ``LlamaModel`` (forced calls, statements, greedy decoding) over streamed
``/chat/completions``. Servers disagree on how to ask for JSON under a schema: OpenAI's ``json_schema`` form
is tried first, and a server that refuses it by naming ``response_format`` (llama-cpp-python's own server
does, with a 500) is asked again once in the ``json_object`` + ``schema`` form, which it then keeps.

``SEXTANT_LOCAL_MODEL=auto`` (the default) chooses among packaged files for the in-process model; a server has
its own model, so here it means the first one the server lists (``GET /models``, which llama.cpp's server,
Ollama and vLLM all answer). Ollama and vLLM refuse a name they do not serve.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx

from sextant.llm.chat import ChatEvent, ChatRequest, ModelError, Usage
from sextant.llm.openai_messages import (
    ResponseFormatDialect,
    TurnAssembler,
    call_without_arguments,
    chat_body,
    forced_tool,
    json_body,
    parse_json_reply,
)
from sextant.llm.settings import ModelSettings

# Waiting may help with these; any other refusal will be repeated (local servers answer 500 to a bad request).
RETRYABLE_STATUSES = frozenset({408, 429, 502, 503, 504})
SERVED = "auto"


class OpenAICompatModel:
    """A model behind an OpenAI-compatible HTTP endpoint; see ``ChatModel``."""

    calls_tools_itself = False
    priced = False

    def __init__(
        self, base_url: str, model: str, *, max_output_tokens: int = 1024, client: httpx.AsyncClient | None = None
    ) -> None:
        self.name = model
        base = base_url.rstrip("/")
        self._url = base + "/chat/completions"
        self._models_url = base + "/models"
        self._max_output_tokens = max_output_tokens
        # Generation on a CPU can take minutes; connecting should not.
        self._client = client or httpx.AsyncClient(timeout=httpx.Timeout(600.0, connect=10.0))
        self._dialect: ResponseFormatDialect = "json_schema"

    @classmethod
    def from_settings(cls, settings: ModelSettings) -> OpenAICompatModel:
        """``SEXTANT_LOCAL_URL`` with ``SEXTANT_LOCAL_MODEL`` as the model name the server is asked for."""
        if settings.local_url is None:
            raise ModelError("SEXTANT_LOCAL_URL is not set")
        return cls(settings.local_url, settings.local_model, max_output_tokens=settings.max_output_tokens)

    async def stream(self, request: ChatRequest) -> AsyncGenerator[ChatEvent, None]:
        """One turn over a streamed response; closing the iterator closes the connection."""
        tool = forced_tool(request)
        if tool is not None and (immediate := call_without_arguments(tool)) is not None:
            yield immediate
            return
        assembler = TurnAssembler(request)
        # No quote_cap, unlike in process (llama_local): a server may use a JSON-schema backend that does not
        # enforce maxLength, so a quote near the limit was not forced there and keeps its last word.
        async with self._response(lambda dialect: chat_body(request, dialect), stream=True) as response:
            async for line in response.aiter_lines():
                if not line.startswith("data:"):
                    continue
                data = line[len("data:") :].strip()
                if data == "[DONE]":
                    break
                for event in assembler.add(_json(data)):
                    yield event
        # Servers of the llama.cpp family report no usage when streaming: count the chunks they sent.
        yield assembler.finish(Usage(output_tokens=assembler.pieces))

    async def complete_json(self, system: str, prompt: str, schema: dict[str, Any]) -> tuple[dict[str, Any], Usage]:
        """One schema-constrained completion; raises ``ModelError`` on a refusal or an invalid reply."""
        max_tokens = self._max_output_tokens
        async with self._response(lambda dialect: json_body(system, prompt, schema, dialect, max_tokens)) as response:
            text = (await response.aread()).decode("utf-8", "replace")
        reply = _json(text)
        try:
            content = reply["choices"][0]["message"]["content"] or ""
        except (KeyError, IndexError, TypeError) as error:
            raise ModelError(f"{self._url} answered without a message: {text[:200]}") from error
        usage = reply.get("usage") or {}
        tokens = Usage(input_tokens=usage.get("prompt_tokens", 0), output_tokens=usage.get("completion_tokens", 0))
        return parse_json_reply(content, schema), tokens

    async def aclose(self) -> None:
        await self._client.aclose()

    @asynccontextmanager
    async def _response(
        self, make_body: Callable[[ResponseFormatDialect], dict[str, Any]], *, stream: bool = False
    ) -> AsyncIterator[httpx.Response]:
        """The open response to a successful POST, asked again in the other JSON form if that one was refused.

        Raises:
            ModelError: the server cannot be reached or refused the request.
        """
        name = await self._served_name()
        for attempt in range(2):
            body = {"model": name, "temperature": 0.0, **make_body(self._dialect)}
            if stream:
                body.update(stream=True, stream_options={"include_usage": True})
            try:
                response = await self._client.send(
                    self._client.build_request("POST", self._url, json=body), stream=True
                )
            except httpx.TransportError as error:
                raise ModelError(f"cannot reach the model at {self._url}: {error!r}", retryable=True) from error
            try:
                if response.is_success:
                    yield response
                    return
                text = (await response.aread()).decode("utf-8", "replace")
            finally:
                await response.aclose()
            if (
                attempt == 0
                and self._dialect == "json_schema"
                and "response_format" in body
                and "response_format" in text
            ):
                self._dialect = "json_object"
                continue
            status = response.status_code
            raise ModelError(
                f"{self._url} answered {status}: {text[:300]}", retryable=status in RETRYABLE_STATUSES, status=status
            )

    async def _served_name(self) -> str:
        """The model to ask for: the one named, or for ``auto`` the first the server lists, asked once.

        Raises:
            ModelError: the server cannot be reached, or does not list a model to choose.
        """
        if self.name != SERVED:
            return self.name
        advice = "set SEXTANT_LOCAL_MODEL to the name of the model the server serves"
        try:
            response = await self._client.get(self._models_url)
        except httpx.TransportError as error:
            raise ModelError(f"cannot reach the model at {self._models_url}: {error!r}", retryable=True) from error
        listed = _json(response.text).get("data") if response.is_success else None
        ids = [m["id"] for m in listed if isinstance(m, dict) and isinstance(m.get("id"), str)] if listed else []
        if not ids:
            status = response.status_code
            raise ModelError(f"{self._models_url} answered {status} without a model to choose: {advice}", status=status)
        self.name = ids[0]
        return self.name


def _json(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise ModelError(f"the server sent something that is not JSON: {text[:200]!r}") from error
    if not isinstance(value, dict):
        raise ModelError(f"the server sent JSON that is not an object: {text[:200]!r}")
    return value
