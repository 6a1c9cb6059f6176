"""OpenAI chat-completions shapes shared by the in-process llama.cpp adapter and the OpenAI-compatible one.

``llama-cpp-python``'s ``create_chat_completion`` takes and streams the same shapes as an OpenAI-compatible
server, so both adapters build one request body here and turn the same stream chunks into our events.

Small models do not call tools by themselves: the loop forces a call by naming the tool, and the request then
offers only that tool, with a *generation schema* (its required properties, bounded) that the server turns
into a grammar. Measured on Qwen2.5-0.5B: offered the full ``kb_search`` schema it filled ``document_ids``
with invented ids (``["kb_list"]``) that would filter out every passage; with the required ``query`` alone
it wrote the question as the query. The arguments are then checked against the tool's real schema.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any, Literal

from jsonschema import validators

from sextant.llm.chat import (
    ChatEvent,
    ChatRequest,
    Message,
    ModelError,
    ModelTurn,
    StatementDone,
    TextDelta,
    ToolCall,
    ToolResults,
    ToolSpec,
    TurnEnd,
    Usage,
    UserText,
)
from sextant.llm.statements import MAX_QUOTE_CHARS, StatementParser, statements_schema

# llama.cpp's JSON-schema-to-grammar nests one optional rule per allowed character: a maxLength of 2000 (the
# kb_search query's) crashed the process, 600 ran as fast as none. Tool arguments get a tighter bound: a
# query is short, and the bound stops a small model from writing its answer into the query.
ANSWER_MAX_CHARS = 600
ARGUMENT_MAX_CHARS = 200
_GRAMMAR_MAX_ITEMS = 16

# Chat templates without tool support (SmolLM2's) show the model no tool at all: say what to write.
FORCED_CALL_INSTRUCTION = (
    "Call {name} now. Write its arguments only: a short search query for the user's latest question, "
    "standing on its own (name what words like 'it' refer to)."
)

# "json_schema" is OpenAI's own form (vLLM, Ollama, llama.cpp's C++ server); "json_object" with a "schema"
# key is the form llama-cpp-python takes, in process and in its server.
ResponseFormatDialect = Literal["json_schema", "json_object"]


def to_openai_messages(system: str, messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Our neutral transcript as OpenAI chat messages, the system prompt first."""
    converted: list[dict[str, Any]] = [{"role": "system", "content": system}]
    for message in messages:
        if isinstance(message, UserText):
            converted.append({"role": "user", "content": message.text})
        elif isinstance(message, ModelTurn):
            # An empty string, not None: chat templates render content unconditionally.
            assistant: dict[str, Any] = {"role": "assistant", "content": message.text}
            if message.tool_calls:
                assistant["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                    }
                    for call in message.tool_calls
                ]
            converted.append(assistant)
        elif isinstance(message, ToolResults):
            converted += [
                {
                    "role": "tool",
                    "tool_call_id": result.call_id,
                    "content": f"Error: {result.content}" if result.is_error else result.content,
                }
                for result in message.results
            ]
    return converted


def grammar_safe(schema: Any, max_chars: int) -> Any:
    """A copy of ``schema`` whose string and array bounds llama.cpp's grammar converter can handle."""
    if isinstance(schema, list):
        return [grammar_safe(item, max_chars) for item in schema]
    if not isinstance(schema, dict):
        return schema
    safe = {key: grammar_safe(value, max_chars) for key, value in schema.items()}
    if safe.get("type") == "string" and "enum" not in safe:
        safe["maxLength"] = min(int(safe.get("maxLength", max_chars)), max_chars)
    if "maxItems" in safe:
        safe["maxItems"] = min(int(safe["maxItems"]), _GRAMMAR_MAX_ITEMS)
    return safe


def generation_schema(tool: ToolSpec) -> dict[str, Any]:
    """The tool's schema reduced to its required properties, bounded for a grammar."""
    schema = tool.input_schema
    required = [name for name in schema.get("required", []) if name in schema.get("properties", {})]
    reduced = {
        "type": "object",
        "properties": {name: schema["properties"][name] for name in required},
        "required": required,
    }
    if "$defs" in schema:
        reduced["$defs"] = schema["$defs"]
    return grammar_safe(reduced, ARGUMENT_MAX_CHARS)


def response_format(schema: dict[str, Any], dialect: ResponseFormatDialect) -> dict[str, Any]:
    if dialect == "json_object":
        return {"type": "json_object", "schema": schema}
    return {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema, "strict": True}}


def forced_tool(request: ChatRequest) -> ToolSpec | None:
    """The tool the loop forces, or None when the model may answer.

    Raises:
        ModelError: the forced tool is not among the request's tools.
    """
    if request.tool_choice in ("auto", "none"):
        return None
    for tool in request.tools:
        if tool.name == request.tool_choice:
            return tool
    raise ModelError(f"tool_choice names {request.tool_choice!r}, which is not among the offered tools")


def call_without_arguments(tool: ToolSpec) -> TurnEnd | None:
    """A forced call of a tool that requires nothing (``kb_list``) needs no generation: its arguments are ``{}``."""
    if tool.input_schema.get("required"):
        return None
    call = ToolCall(_call_id(), tool.name, {})
    return TurnEnd(turn=ModelTurn(text="", tool_calls=(call,)), usage=Usage(), finish_reason="tool_calls")


def chat_body(
    request: ChatRequest, dialect: ResponseFormatDialect, *, max_quote_chars: int = MAX_QUOTE_CHARS
) -> dict[str, Any]:
    """The chat-completions body (without ``model`` and ``stream``) for one turn of ``request``; a statements
    answer's quotes are bounded by ``max_quote_chars``."""
    tool = forced_tool(request)
    system = request.system
    if tool is not None:
        system = f"{system}\n\n{FORCED_CALL_INSTRUCTION.format(name=tool.name)}"
    body: dict[str, Any] = {
        "messages": to_openai_messages(system, request.messages),
        "max_tokens": request.max_output_tokens,
    }
    if tool is not None:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": generation_schema(tool),
                },
            }
        ]
        body["tool_choice"] = {"type": "function", "function": {"name": tool.name}}
    elif request.answer_format == "statements":
        schema = statements_schema(request.citable, max_quote_chars=max_quote_chars)
        body["response_format"] = response_format(grammar_safe(schema, ANSWER_MAX_CHARS), dialect)
    return body


def json_body(
    system: str, prompt: str, schema: dict[str, Any], dialect: ResponseFormatDialect, max_tokens: int
) -> dict[str, Any]:
    """The body of one schema-constrained completion (``complete_json``)."""
    return {
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": prompt}],
        "max_tokens": max_tokens,
        "response_format": response_format(grammar_safe(schema, ANSWER_MAX_CHARS), dialect),
    }


def parse_json_reply(text: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The object a schema-constrained reply holds, checked against the schema.

    Raises:
        ModelError: not a JSON object, cut off, or not valid against ``schema``.
    """
    try:
        value = json.loads(text, strict=False)
    except json.JSONDecodeError as error:
        raise ModelError(f"the model's reply is not complete JSON ({error.msg}): {text[:200]!r}") from error
    if not isinstance(value, dict):
        raise ModelError(f"the model's reply is not a JSON object: {text[:200]!r}")
    problem = _first_violation(value, schema)
    if problem is not None:
        raise ModelError(f"the model's reply does not match the schema: {problem}")
    return value


class TurnAssembler:
    """Turns streamed chat-completion chunks into our events, and the whole turn into a ``TurnEnd``."""

    def __init__(self, request: ChatRequest, *, quote_cap: int | None = None) -> None:
        """``quote_cap``: the ``max_quote_chars`` the request body was built with, when a grammar enforces it."""
        self._tool = forced_tool(request)
        answers = request.answer_format == "statements" and not self._tool
        self._statements = StatementParser(quote_cap=quote_cap) if answers else None
        self._text: list[str] = []
        self._calls: dict[int, dict[str, str]] = {}
        self._finish_reason = "stop"
        self.usage: Usage | None = None
        self.pieces = 0  # chunks that carried tokens: the output count when a server reports no usage

    @property
    def text(self) -> str:
        return "".join(self._text)

    def add(self, chunk: dict[str, Any]) -> list[ChatEvent]:
        self.pieces += carries_tokens(chunk)
        if chunk.get("usage"):
            usage = chunk["usage"]
            self.usage = Usage(
                input_tokens=usage.get("prompt_tokens", 0), output_tokens=usage.get("completion_tokens", 0)
            )
        events: list[ChatEvent] = []
        for choice in chunk.get("choices") or ():
            if choice.get("finish_reason"):
                self._finish_reason = choice["finish_reason"]
            delta = choice.get("delta") or {}
            for call in delta.get("tool_calls") or ():
                slot = self._calls.setdefault(call.get("index", 0), {"id": "", "name": "", "arguments": ""})
                function = call.get("function") or {}
                slot["id"] = call.get("id") or slot["id"]
                slot["name"] = function.get("name") or slot["name"]
                slot["arguments"] += function.get("arguments") or ""
            content = delta.get("content")
            if content:
                self._text.append(content)
                if self._statements is not None:
                    events += [StatementDone(s) for s in self._statements.feed(content)]
                elif self._tool is None:
                    events.append(TextDelta(content))
        return events

    def finish(self, usage: Usage) -> TurnEnd:
        """The last event of the turn, with ``usage`` unless the server reported its own.

        Raises:
            ModelError: a forced call came back without valid arguments.
        """
        usage = self.usage or usage
        if self._tool is not None:
            call = ToolCall(self._forced_call_id(), self._tool.name, self._forced_arguments(self._tool))
            return TurnEnd(turn=ModelTurn(text="", tool_calls=(call,)), usage=usage, finish_reason="tool_calls")
        if self._statements is not None:
            statements = self._statements.statements
            text = " ".join(s.text for s in statements)
            return TurnEnd(
                turn=ModelTurn(text=text), usage=usage, finish_reason=self._finish_reason, statements=statements
            )
        return TurnEnd(turn=ModelTurn(text=self.text), usage=usage, finish_reason=self._finish_reason)

    def _forced_call_id(self) -> str:
        return next((slot["id"] for slot in self._calls.values() if slot["id"]), "") or _call_id()

    def _forced_arguments(self, tool: ToolSpec) -> dict[str, Any]:
        slot = next((s for s in self._calls.values() if s["name"] in ("", tool.name)), None)
        # A server that ignores tool_choice may still honour the grammar and put the arguments in the content.
        raw = slot["arguments"] if slot is not None else self.text
        try:
            return parse_json_reply(raw, tool.input_schema)
        except ModelError as error:
            # Not retryable: decoding is greedy, so asking again gives the same arguments.
            raise ModelError(f"forced call of {tool.name}: {error}") from error


def carries_tokens(chunk: dict[str, Any]) -> bool:
    """Whether a stream chunk holds generated text or call arguments (one token each from llama.cpp)."""
    return any(
        (choice.get("delta") or {}).get("content") or (choice.get("delta") or {}).get("tool_calls")
        for choice in chunk.get("choices") or ()
    )


def _first_violation(value: Any, schema: dict[str, Any]) -> str | None:
    validator = validators.validator_for(schema)(schema)
    error = next(iter(validator.iter_errors(value)), None)
    return None if error is None else error.message


def _call_id() -> str:
    return f"call-{uuid.uuid4().hex[:12]}"
