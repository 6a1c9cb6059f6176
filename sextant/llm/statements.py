"""Structured answers: the JSON schema every adapter asks for, and a parser that finds statements as they stream.

The model answers ``{"statements": [{"text": ..., "evidence": [{"passage": 3, "quote": "words of passage
3"}]}]}``, or ``{"statements": []}`` when the passages do not answer. The backend, not the model, checks each
quote against its passage and writes the ``[n]`` markers (``sextant.agent.grounding``).

``StatementParser`` yields each statement as soon as its closing brace arrives, so the first claim reaches
the browser before the last is written, and a reply cut off by the token limit still keeps every statement
it completed (the unfinished tail is dropped, never an error).

Use::

    parser = StatementParser()
    for piece in stream:
        for statement in parser.feed(piece):
            ...  # a complete Statement
    everything = parser.statements

or ``parse_statements(text)`` on a whole reply. Ask for ``statements_schema(citable)`` to allow only the
labels of the passages shown. An adapter whose grammar enforces the schema may cap quotes shorter
(``max_quote_chars``) and parse with ``StatementParser(quote_cap=...)``, which drops the last word of a quote
that ended within reach of the cap: the grammar may have forced it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from sextant.llm.chat import Quote, Statement

MAX_STATEMENTS = 6
MAX_SOURCES = 6
MAX_TEXT_CHARS = 600
MAX_QUOTE_CHARS = 400
# A grammar refuses a token that would cross a quote's cap and takes one that fits, and the words it forces
# are not the passage's: Qwen2.5-0.5B under a 60-character cap ended quotes in "cannotdetect", "9.5 mill.",
# "replace the chain when ell", "keeps a" (the passage: "keeps the queen"), "remove a)". A prose token is
# shorter than this, so a quote that ended further from its cap ended by the model's own choice.
FORCED_TAIL_CHARS = 16


def statements_schema(citable: Sequence[int] = (), *, max_quote_chars: int = MAX_QUOTE_CHARS) -> dict[str, Any]:
    """The answer's JSON schema; with ``citable``, a quote must name one of those labels."""
    label: dict[str, Any] = (
        {"type": "integer", "enum": sorted(set(citable))} if citable else {"type": "integer", "minimum": 1}
    )
    evidence = {
        "type": "object",
        "properties": {"passage": label, "quote": {"type": "string", "minLength": 1, "maxLength": max_quote_chars}},
        "required": ["passage", "quote"],
    }
    item = {
        "type": "object",
        "properties": {
            "text": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT_CHARS},
            "evidence": {"type": "array", "minItems": 1, "maxItems": MAX_SOURCES, "items": evidence},
        },
        "required": ["text", "evidence"],
    }
    return {
        "type": "object",
        "properties": {"statements": {"type": "array", "maxItems": MAX_STATEMENTS, "items": item}},
        "required": ["statements"],
    }


STATEMENTS_INSTRUCTION = (
    'Answer with JSON only: {"statements": [{"text": "<one short sentence>", "evidence": [{"passage": <number>, '
    '"quote": "<the exact words of that passage that say it>"}]}]}. Each statement answers the question from '
    "the passages; each quote is copied word for word from the passage it names, and a statement cites only "
    'the passages that say it. If the passages do not answer the question, answer {"statements": []}.'
)
_ARRAY_START = re.compile(r'"statements"\s*:\s*\[')


class StatementParser:
    """Feed streamed JSON text; each call returns the statements completed by that piece.

    At most ``MAX_STATEMENTS`` are returned; items of neither shape are skipped, and so is a text already
    stated (small models repeat a sentence with other evidence); quotes are deduplicated and kept only with
    a positive label. With ``quote_cap`` (the grammar's bound on a quote), a quote that ended within
    ``FORCED_TAIL_CHARS`` of it is read without its last word, and dropped if fewer than two words stay.
    """

    def __init__(self, *, quote_cap: int | None = None) -> None:
        self._quote_cap = quote_cap
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
                    statement = _statement(self._buffer[self._object_start : self._pos + 1], self._quote_cap)
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


def _statement(raw: str, quote_cap: int | None) -> Statement | None:
    try:
        item = json.loads(raw)
    except json.JSONDecodeError:
        return None
    if not isinstance(item, dict):
        return None
    text = item.get("text")
    if not isinstance(text, str) or not text.strip():
        return None
    quotes: list[Quote] = []
    evidence = item.get("evidence")
    for entry in evidence if isinstance(evidence, list) else []:
        if not isinstance(entry, dict):
            continue
        label, words = entry.get("passage"), entry.get("quote")
        if isinstance(label, int) and not isinstance(label, bool) and label > 0 and isinstance(words, str):
            words = _unforced(words, quote_cap).strip()
            quotes.extend([Quote(label, words)] if words else [])
    return Statement(text.strip(), tuple(dict.fromkeys(quotes)))


def _unforced(words: str, quote_cap: int | None) -> str:
    """``words`` without the last word when it ended within reach of ``quote_cap``; '' if under two words stay."""
    if quote_cap is None or len(words) <= quote_cap - FORCED_TAIL_CHARS:
        return words
    head, *last = words.rstrip().rsplit(maxsplit=1)
    return head if last and len(head.split()) >= 2 else ""
