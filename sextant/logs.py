"""Log lines on stderr (stdout belongs to the MCP protocol), as text or one JSON object a line.

Each line carries the request id of the HTTP request (or MCP call) it belongs to, when there is one.
"""

from __future__ import annotations

import json
import logging
import sys
from contextvars import ContextVar
from typing import Literal

request_id: ContextVar[str | None] = ContextVar("sextant_request_id", default=None)


class _RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.get()
        return True


class _JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message, request_id (when set), exception."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": self.formatTime(record),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        rid = getattr(record, "request_id", None)
        if rid:
            line["request_id"] = rid
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line)


class _TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        rid = getattr(record, "request_id", None)
        return f"{text} [request {rid}]" if rid else text


def configure_logging(level: str, fmt: Literal["text", "json"]) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(_RequestIdFilter())
    if fmt == "json":
        handler.setFormatter(_JsonFormatter())
    else:
        handler.setFormatter(_TextFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler], force=True)
