"""The Gemini adapter: the chat-model protocol over ``google-genai``'s async client.

What it owes the loop: MCP tools declared with their published JSON schema unchanged
(``parameters_json_schema``); Google Search as a second tier when asked; the model's own ``Content`` echoed
back verbatim on the next turn (it carries thought signatures, which the API checks); grounding ranges
converted from UTF-8 byte offsets to character offsets; thinking given its own budget on top of the
answer's; and every failure turned into a ``ModelError`` that says whether waiting may help.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from typing import Any, cast

import httpx
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from sextant.llm.chat import (
    ChatEvent,
    ChatRequest,
    GroundingSupport,
    Message,
    ModelError,
    ModelTurn,
    StatementDone,
    TextDelta,
    ToolCall,
    ToolResult,
    ToolResults,
    ToolSpec,
    TurnEnd,
    Usage,
    UserText,
    WebSource,
)
from sextant.llm.pricing import priced_usage
from sextant.llm.settings import ModelSettings
from sextant.llm.statements import StatementParser, statements_schema

log = logging.getLogger(__name__)

# Pinned because google-genai 3.x defaults the Developer API to v1, while the reference this adapter is
# written (and tested) against, with thinking, Google Search and server-side tool invocations, is v1beta.
API_VERSION = "v1beta"
# A thinking model can take a while before its first token; a dead connection must still end.
TIMEOUT_MS = 120_000
# Ids this adapter invents for calls the API sent without one; they are never sent back.
LOCAL_CALL_ID = "sextant-call-"
RETRYABLE_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
FINISH_REASONS = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "MALFORMED_FUNCTION_CALL": "malformed_tool_call",
}


class GeminiModel:
    """A Gemini model behind the ``ChatModel`` protocol; it decides on its own when to search."""

    calls_tools_itself = True
    priced = True

    def __init__(
        self,
        *,
        api_key: str,
        model: str = "gemini-3.1-flash-lite",
        base_url: str | None = None,
        thinking_budget: int = 512,
        max_output_tokens: int = 1024,
    ) -> None:
        self.name = model
        self.thinking_budget = thinking_budget
        self.max_output_tokens = max_output_tokens
        self._base_url = base_url or "https://generativelanguage.googleapis.com"
        # Set once the API has said this model takes no thinking config; later requests leave it out.
        self._thinking_rejected = False
        # Our own httpx client: otherwise the SDK picks aiohttp whenever it happens to be installed, and
        # google-genai 3.6 subclasses aiohttp.ClientSession, which aiohttp 3.14 deprecates with a warning.
        self._http = httpx.AsyncClient()
        self._client = genai.Client(
            api_key=api_key,
            vertexai=False,  # whatever GOOGLE_GENAI_USE_VERTEXAI says: this adapter speaks the Developer API
            http_options=types.HttpOptions(
                base_url=base_url,
                api_version=API_VERSION,
                timeout=TIMEOUT_MS,
                # One attempt: the loop decides whether to retry, from ModelError.retryable.
                retry_options=types.HttpRetryOptions(attempts=1),
                httpx_async_client=self._http,
            ),
        )

    @classmethod
    def from_settings(cls, settings: ModelSettings) -> GeminiModel:
        """The configured model.

        Raises:
            ValueError: GEMINI_API_KEY is not set.
        """
        if settings.gemini_api_key is None:
            raise ValueError("GEMINI_API_KEY is not set: the Gemini model needs an API key")
        return cls(
            api_key=settings.gemini_api_key.get_secret_value(),
            model=settings.model,
            base_url=settings.gemini_url,
            thinking_budget=settings.thinking_budget,
            max_output_tokens=settings.max_output_tokens,
        )

    async def stream(self, request: ChatRequest) -> AsyncIterator[ChatEvent]:
        """Run one turn: text deltas (or statements) as chunks arrive, then ``TurnEnd``.

        Raises:
            ModelError: the API refused the request or could not be reached.
            ValueError: ``request.tool_choice`` names a tool the request does not offer.
        """
        contents = to_contents(request.messages)
        turn = _TurnBuilder(request.answer_format == "statements")
        try:
            first, chunks = await self._open_stream(contents, request)
            async with contextlib.aclosing(chunks):
                if first is not None:
                    for event in turn.add(first):
                        yield event
                async for chunk in chunks:
                    for event in turn.add(chunk):
                        yield event
        except genai_errors.APIError as exc:
            raise self._api_error(exc) from exc
        except httpx.TransportError as exc:
            raise self._network_error(exc) from exc
        yield turn.end(self.name)

    async def complete_json(self, system: str, prompt: str, schema: dict[str, Any]) -> tuple[dict[str, Any], Usage]:
        """One JSON reply shaped by ``schema``, with no tools.

        Raises:
            ModelError: the API failed, or the reply was not a JSON object.
        """
        contents = [types.Content(role="user", parts=[types.Part(text=prompt)])]
        while True:
            config = types.GenerateContentConfig(
                system_instruction=system or None,
                response_mime_type="application/json",
                response_json_schema=schema,
                automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
                **self._output_budget(self.max_output_tokens),
            )
            try:
                reply = await self._client.aio.models.generate_content(
                    model=self.name, contents=contents, config=config
                )
                break
            except genai_errors.APIError as exc:
                if not self._drop_thinking_if_rejected(exc):
                    raise self._api_error(exc) from exc
            except httpx.TransportError as exc:
                raise self._network_error(exc) from exc
        turn = _TurnBuilder(statements=False)
        turn.add(reply)
        end = turn.end(self.name)
        try:
            parsed = json.loads(end.turn.text)
        except json.JSONDecodeError as exc:
            raise ModelError(
                f"Gemini's JSON reply could not be parsed ({exc}); finish reason {end.finish_reason}"
            ) from exc
        if not isinstance(parsed, dict):
            raise ModelError(f"Gemini's JSON reply was a {type(parsed).__name__}, not an object")
        return parsed, end.usage

    async def aclose(self) -> None:
        await self._client.aio.aclose()
        await self._http.aclose()  # the SDK leaves a client it was handed to its owner

    async def _open_stream(
        self, contents: list[types.Content], request: ChatRequest
    ) -> tuple[types.GenerateContentResponse | None, AsyncGenerator[types.GenerateContentResponse, None]]:
        """Start the stream and read its first chunk, where a refused request shows up."""
        while True:
            chunks = cast(
                AsyncGenerator[types.GenerateContentResponse, None],
                await self._client.aio.models.generate_content_stream(
                    model=self.name, contents=contents, config=self._config(request)
                ),
            )
            try:
                return await anext(chunks), chunks
            except StopAsyncIteration:
                return None, chunks
            except genai_errors.APIError as exc:
                await chunks.aclose()
                if not self._drop_thinking_if_rejected(exc):
                    raise

    def _config(self, request: ChatRequest) -> types.GenerateContentConfig:
        tools: list[types.Tool] = []
        if request.tools:
            tools.append(types.Tool(function_declarations=[_declaration(spec) for spec in request.tools]))
        if request.web_search:
            tools.append(types.Tool(google_search=types.GoogleSearch()))
        tool_config = None
        if tools:
            tool_config = types.ToolConfig(
                function_calling_config=_calling_config(request.tool_choice, request.tools) if request.tools else None,
                # Lets the model search and call our functions in one turn; the search parts come back in
                # the Content, which is echoed verbatim.
                include_server_side_tool_invocations=True if request.web_search else None,
            )
        config = types.GenerateContentConfig(
            system_instruction=request.system or None,
            tools=tools or None,
            tool_config=tool_config,
            # The loop runs the tools; the SDK must only report the calls.
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
            **self._output_budget(request.max_output_tokens),
        )
        if request.answer_format == "statements":
            config.response_mime_type = "application/json"
            config.response_json_schema = statements_schema(request.citable)
        return config

    def _output_budget(self, answer_tokens: int) -> dict[str, Any]:
        """The output cap counts thinking tokens too, so thinking gets its budget on top of the answer's."""
        if self._thinking_rejected:
            return {"max_output_tokens": answer_tokens}
        return {
            "max_output_tokens": answer_tokens + self.thinking_budget,
            "thinking_config": types.ThinkingConfig(thinking_budget=self.thinking_budget),
        }

    def _drop_thinking_if_rejected(self, exc: genai_errors.APIError) -> bool:
        """True when the API refused the thinking config (a model without thinking): ask again without it."""
        if self._thinking_rejected or exc.code != 400 or "thinking" not in (exc.message or "").lower():
            return False
        log.warning("%s refuses a thinking budget (%s); asking without one from now on", self.name, exc.message)
        self._thinking_rejected = True
        return True

    def _api_error(self, exc: genai_errors.APIError) -> ModelError:
        code = exc.code
        detail = f"{code} {exc.status or ''}: {exc.message or ''}".replace("  ", " ").strip()
        if code == 400 and "api key" in (exc.message or "").lower():
            hint = "Gemini rejected the API key; check GEMINI_API_KEY"
        elif code in (401, 403):
            hint = f"Gemini refused access to {self.name}; check that GEMINI_API_KEY is valid and allowed this model"
        elif code == 404:
            hint = f"Gemini has no model {self.name!r}; check SEXTANT_MODEL"
        elif code == 429:
            hint = "Gemini's rate limit or quota is exhausted; wait and try again, or raise the project's quota"
        elif code >= 500:
            hint = "Gemini failed on its side; try again shortly"
        else:
            hint = "Gemini refused the request"
        return ModelError(f"{hint} ({detail})", retryable=code in RETRYABLE_STATUSES, status=code)

    def _network_error(self, exc: httpx.TransportError) -> ModelError:
        return ModelError(
            f"Gemini could not be reached at {self._base_url} ({type(exc).__name__}: {exc}); "
            "check the network, or SEXTANT_GEMINI_URL if it is set",
            retryable=True,
        )


def _declaration(spec: ToolSpec) -> types.FunctionDeclaration:
    return types.FunctionDeclaration(
        name=spec.name, description=spec.description, parameters_json_schema=spec.input_schema
    )


def _calling_config(tool_choice: str, tools: Sequence[ToolSpec]) -> types.FunctionCallingConfig:
    if tool_choice == "auto":
        return types.FunctionCallingConfig(mode=types.FunctionCallingConfigMode.AUTO)
    if tool_choice == "none":
        return types.FunctionCallingConfig(mode=types.FunctionCallingConfigMode.NONE)
    if tool_choice not in {spec.name for spec in tools}:
        raise ValueError(f"tool_choice {tool_choice!r} names no offered tool")
    return types.FunctionCallingConfig(mode=types.FunctionCallingConfigMode.ANY, allowed_function_names=[tool_choice])


def to_contents(messages: Sequence[Message]) -> list[types.Content]:
    """The transcript as Gemini ``Content``; a turn this adapter produced is sent back as it came."""
    contents: list[types.Content] = []
    for message in messages:
        if isinstance(message, UserText):
            contents.append(types.Content(role="user", parts=[types.Part(text=message.text)]))
        elif isinstance(message, ModelTurn):
            content = _model_content(message)
            if content.parts:
                contents.append(content)
        elif isinstance(message, ToolResults):
            contents.append(types.Content(role="user", parts=[_function_response(r) for r in message.results]))
    return contents


def _model_content(turn: ModelTurn) -> types.Content:
    state = turn.provider_state
    if isinstance(state, types.Content):
        content = state.model_copy(deep=True)
    else:  # a turn from another adapter or a restored transcript
        content = types.Content(role="model", parts=[types.Part(text=turn.text)] if turn.text else [])
    parts = content.parts if content.parts is not None else []
    if not any(part.function_call for part in parts):
        # Calls the loop added itself (it may force a search after a turn that made none).
        parts.extend(
            types.Part(function_call=types.FunctionCall(id=_wire_id(c.id), name=c.name, args=c.arguments))
            for c in turn.tool_calls
        )
    content.parts = parts
    return content


def _function_response(result: ToolResult) -> types.Part:
    # "output" and "error" are the keys the API documents for a function's result.
    key = "error" if result.is_error else "output"
    return types.Part(
        function_response=types.FunctionResponse(
            id=_wire_id(result.call_id), name=result.name, response={key: result.content}
        )
    )


def _wire_id(call_id: str) -> str | None:
    return None if call_id.startswith(LOCAL_CALL_ID) else call_id


class _TurnBuilder:
    """Accumulates the chunks of one turn into the events the loop reads and the Content to echo back."""

    def __init__(self, statements: bool) -> None:
        self.parts: list[types.Part] = []
        self.text: list[str] = []
        self.calls: list[ToolCall] = []
        self.parser = StatementParser() if statements else None
        self.finish_reason = "stop"
        self.usage: types.GenerateContentResponseUsageMetadata | None = None
        self.grounding: types.GroundingMetadata | None = None

    def add(self, chunk: types.GenerateContentResponse) -> list[ChatEvent]:
        if chunk.usage_metadata is not None:  # cumulative: the last one counts
            self.usage = chunk.usage_metadata
        if chunk.prompt_feedback is not None and chunk.prompt_feedback.block_reason is not None:
            self.finish_reason = "content_filter"
        if not chunk.candidates:
            return []
        candidate = chunk.candidates[0]
        if candidate.finish_reason is not None:
            reason = str(candidate.finish_reason.value)
            self.finish_reason = FINISH_REASONS.get(reason, reason.lower())
        if candidate.grounding_metadata is not None:
            self.grounding = candidate.grounding_metadata
        events: list[ChatEvent] = []
        for part in (candidate.content.parts if candidate.content else None) or []:
            self._keep(part)
            if part.function_call is not None:
                call = part.function_call
                call_id = call.id or f"{LOCAL_CALL_ID}{len(self.calls)}"
                self.calls.append(ToolCall(call_id, call.name or "", dict(call.args or {})))
            elif part.text and not part.thought:
                self.text.append(part.text)
                if self.parser is None:
                    events.append(TextDelta(part.text))
                else:
                    events.extend(StatementDone(s) for s in self.parser.feed(part.text))
        return events

    def _keep(self, part: types.Part) -> None:
        """Merge streamed text pieces into whole parts; a signature closes its part, as in an unstreamed reply."""
        last = self.parts[-1] if self.parts else None
        if (
            last is not None
            and last.text is not None
            and part.text is not None
            and bool(last.thought) == bool(part.thought)
            and last.thought_signature is None
        ):
            last.text += part.text
            last.thought_signature = part.thought_signature
        else:
            self.parts.append(part.model_copy(deep=True))

    def end(self, model: str) -> TurnEnd:
        text = "".join(self.text)
        statements = self.parser.statements if self.parser is not None else ()
        web_sources, grounding = _grounding(self.grounding, text)
        meta = self.usage or types.GenerateContentResponseUsageMetadata()
        usage = priced_usage(
            model,
            # Search results the model read are billed as input.
            (meta.prompt_token_count or 0) + (meta.tool_use_prompt_token_count or 0),
            meta.candidates_token_count or 0,
            meta.thoughts_token_count or 0,
        )
        # A structured turn reads as its statements, as from the other adapters; the JSON stays in the Content.
        said = " ".join(s.text for s in statements) if self.parser is not None else text
        return TurnEnd(
            turn=ModelTurn(said, tuple(self.calls), types.Content(role="model", parts=self.parts)),
            usage=usage,
            finish_reason=self.finish_reason,
            web_sources=web_sources,
            grounding=grounding,
            statements=statements,
        )


def _grounding(
    meta: types.GroundingMetadata | None, text: str
) -> tuple[tuple[WebSource, ...], tuple[GroundingSupport, ...]]:
    """Web pages and supported spans, with the API's UTF-8 byte offsets turned into offsets into ``text``."""
    if meta is None:
        return (), ()
    sources: list[WebSource] = []
    renumber: dict[int, int] = {}  # grounding chunk index -> index into sources (web chunks only)
    for i, chunk in enumerate(meta.grounding_chunks or []):
        if chunk.web is not None and chunk.web.uri:
            renumber[i] = len(sources)
            sources.append(WebSource(chunk.web.uri, chunk.web.title or chunk.web.domain or chunk.web.uri))
    encoded = text.encode("utf-8")
    supports: list[GroundingSupport] = []
    for support in meta.grounding_supports or []:
        indices = tuple(renumber[i] for i in support.grounding_chunk_indices or [] if i in renumber)
        if support.segment is None or not indices:
            continue
        start = _char_offset(encoded, support.segment.start_index or 0)
        end = _char_offset(encoded, support.segment.end_index or 0)
        if end > start:
            supports.append(GroundingSupport(start, end, indices))
    return tuple(sources), tuple(supports)


def _char_offset(encoded: bytes, byte_offset: int) -> int:
    # A cut inside a multi-byte character counts up to the character before it.
    return len(encoded[:byte_offset].decode("utf-8", errors="ignore"))
