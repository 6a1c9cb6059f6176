"""Log lines on stderr (stdout belongs to the MCP protocol), as text or one JSON object a line.

Each line carries the request id of the HTTP request (or MCP call) it belongs to, when there is one, and
the W3C trace id that the agent took from the request's ``traceparent`` (or minted) and that the MCP SDK carries
to the knowledge base in each call's ``_meta``: the same trace id on the agent's and the server's lines.
"""

from __future__ import annotations

import json
import logging
import sys
from contextvars import ContextVar
from typing import Literal

from opentelemetry import trace

# For the log lines only: what a call may touch, and the id it sends the knowledge base, are passed explicitly
# (``sextant.agent.kb_client.KbScope``).
request_id: ContextVar[str | None] = ContextVar("sextant_request_id", default=None)


class _RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.get()
        record.trace_id = current_trace_id()
        return True


def current_trace_id() -> str | None:
    """The trace id of the OpenTelemetry context in force (32 hex digits), if it holds a valid one."""
    span = trace.get_current_span().get_span_context()
    return trace.format_trace_id(span.trace_id) if span.is_valid else None


class _JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message, request_id and trace_id (when set), exception."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": self.formatTime(record),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in ("request_id", "trace_id"):
            if value := getattr(record, name, None):
                line[name] = value
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line)


class _TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        rid, tid = getattr(record, "request_id", None), getattr(record, "trace_id", None)
        context = ", ".join(part for part in (rid and f"request {rid}", tid and f"trace {tid}") if part)
        return f"{text} [{context}]" if context else text


def configure_logging(level: str, fmt: Literal["text", "json"]) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(_RequestIdFilter())
    if fmt == "json":
        handler.setFormatter(_JsonFormatter())
    else:
        handler.setFormatter(_TextFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler], force=True)
    # httpx logs each request at INFO; what a fetch or a model call did is logged by its caller, in its words.
    logging.getLogger("httpx").setLevel(logging.WARNING)
