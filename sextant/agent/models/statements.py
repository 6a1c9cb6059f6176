"""Structured answers: the JSON schema every adapter asks for, and a parser that finds statements as they stream.

The model answers ``{"statements": [{"text": ..., "sources": [3, 5]}, ...]}``; the backend, not the model,
writes the ``[n]`` markers. ``StatementParser`` yields each statement as soon as its closing brace arrives,
so the first claim reaches the browser before the last is written, and a reply cut off by the token limit
still keeps every statement it completed (the unfinished tail is dropped, never an error).

Use::

    parser = StatementParser()
    for piece in stream:
        for statement in parser.feed(piece):
            ...  # a complete Statement
    everything = parser.statements

or ``parse_statements(text)`` on a whole reply. Ask for ``STATEMENTS_SCHEMA``, or ``statements_schema(citable)``
to allow only the labels of the passages shown.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from sextant.agent.chat import Statement

MAX_STATEMENTS = 8
MAX_SOURCES = 6
MAX_TEXT_CHARS = 600


def statements_schema(citable: Sequence[int] = ()) -> dict[str, Any]:
    """The answer's JSON schema; with ``citable``, a source must be one of those labels."""
    label: dict[str, Any] = (
        {"type": "integer", "enum": sorted(set(citable))} if citable else {"type": "integer", "minimum": 1}
    )
    return {
        "type": "object",
        "properties": {
            "statements": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_STATEMENTS,
                "items": {
                    "type": "object",
                    "properties": {
                        "text": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT_CHARS},
                        "sources": {"type": "array", "maxItems": MAX_SOURCES, "items": label},
                    },
                    "required": ["text", "sources"],
                },
            }
        },
        "required": ["statements"],
    }


STATEMENTS_SCHEMA = statements_schema()

STATEMENTS_INSTRUCTION = (
    'Answer with JSON only: {"statements": [{"text": "<one short sentence>", "sources": [<passage numbers>]}]}. '
    "Each statement answers the question from the passages; its sources are the numbers of the passages that "
    "say it. If the passages do not answer the question, give one statement saying so, with no sources."
)

_ARRAY_START = re.compile(r'"statements"\s*:\s*\[')


class StatementParser:
    """Feed streamed JSON text; each call returns the statements completed by that piece.

    At most ``MAX_STATEMENTS`` are returned; items that are not ``{"text": str, "sources": [int]}`` are
    skipped, and so is a text already stated (small models repeat a sentence with other sources); sources
    are deduplicated and kept only when positive.
    """

    def __init__(self) -> None:
        self._buffer = ""
        self._pos = -1  # scan position once the statements array has begun
        self._depth = 0  # bracket depth inside the array
        self._object_start = 0
        self._in_string = False
        self._escaped = False
        self._closed = False
        self._done: list[Statement] = []

    @property
    def statements(self) -> tuple[Statement, ...]:
        """Every statement completed so far."""
        return tuple(self._done)

    def feed(self, text: str) -> list[Statement]:
        self._buffer += text
        if self._pos < 0:
            match = _ARRAY_START.search(self._buffer)
            if match is None:
                return []
            self._pos = match.end()
        new: list[Statement] = []
        while self._pos < len(self._buffer) and not self._closed:
            char = self._buffer[self._pos]
            if self._in_string:
                if self._escaped:
                    self._escaped = False
                elif char == "\\":
                    self._escaped = True
                elif char == '"':
                    self._in_string = False
            elif char == '"':
                self._in_string = True
            elif char in "{[":
                if self._depth == 0:
                    self._object_start = self._pos
                self._depth += 1
            elif char in "}]":
                self._depth -= 1
                if self._depth < 0:  # the statements array itself closed
                    self._closed = True
                elif self._depth == 0 and char == "}":
                    statement = _statement(self._buffer[self._object_start : self._pos + 1])
                    if statement is not None and self._is_new(statement):
                        self._done.append(statement)
                        new.append(statement)
            self._pos += 1
        return new

    def _is_new(self, statement: Statement) -> bool:
        return len(self._done) < MAX_STATEMENTS and all(statement.text != done.text for done in self._done)


def parse_statements(text: str) -> tuple[Statement, ...]:
    """Every complete statement in a whole reply; a truncated or malformed tail is dropped."""
    parser = StatementParser()
    parser.feed(text)
    return parser.statements


def _statement(raw: str) -> Statement | None:
    try:
        item = json.loads(raw)
    except json.JSONDecodeError:
        return None
    text = item.get("text") if isinstance(item, dict) else None
    if not isinstance(text, str) or not text.strip():
        return None
    sources = item.get("sources")
    labels = (
        [s for s in sources if isinstance(s, int) and not isinstance(s, bool) and s > 0]
        if isinstance(sources, list)
        else []
    )
    return Statement(text.strip(), tuple(dict.fromkeys(labels)))
