"""The server's own log lines, sent to the client whose call they belong to as ``notifications/message``.

A line that ``sextant`` logs while a tool call runs (another process's writes followed before a search, an old
version's original that could not be removed) goes to stderr as always and, after the call's work and before its
result, to that call's client at the level the client asked for: on the handshake era (2025) with
``logging/setLevel``, which lasts for the connection (a stdio client's whole session; over stateless HTTP each
request is its own connection, so the default holds there), and on 2026-07-28 in each request's ``_meta``, which
the SDK checks. Lines below the server's own ``SEXTANT_LOG_LEVEL`` are never made, whatever a client asks.
"""

from __future__ import annotations

import functools
import logging
import warnings
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, Final, TypeVar, cast, get_args

from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_types import EmptyResult, LoggingLevel, SetLevelRequestParams
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

F = TypeVar("F", bound=Callable[..., Any])
ORDER: Final[tuple[LoggingLevel, ...]] = get_args(LoggingLevel)  # least severe first (RFC 5424)
# What a 2025-era client hears before it sets a level: what needs its attention, not the server's chatter.
DEFAULT_LEVEL: Final[LoggingLevel] = "warning"

_lines: ContextVar[list[tuple[LoggingLevel, str, str]] | None] = ContextVar("sextant_client_log", default=None)
_LEVEL_KEY = "sextant.client_log.level"


def mcp_level(record: logging.LogRecord) -> LoggingLevel:
    """The MCP level of a Python log record."""
    if record.levelno >= logging.CRITICAL:
        return "critical"
    if record.levelno >= logging.ERROR:
        return "error"
    if record.levelno >= logging.WARNING:
        return "warning"
    return "info" if record.levelno >= logging.INFO else "debug"


class _Collector(logging.Handler):
    """Keeps the lines logged during a tool call (in its worker thread too: the thread runs in the call's context)."""

    def emit(self, record: logging.LogRecord) -> None:
        lines = _lines.get()
        if lines is not None:
            lines.append((mcp_level(record), record.name, record.getMessage()))


_COLLECTOR = _Collector()


def install() -> None:
    """Collect ``sextant``'s log lines for the calls they belong to (once per process)."""
    logger = logging.getLogger("sextant")
    if _COLLECTOR not in logger.handlers:
        logger.addHandler(_COLLECTOR)


def forwarding(tool: F) -> F:
    """``tool``, the lines logged while it runs sent to its caller once its work is done (before its result)."""

    @functools.wraps(tool)
    async def call(*args: Any, **kwargs: Any) -> Any:
        lines: list[tuple[LoggingLevel, str, str]] = []
        token = _lines.set(lines)
        try:
            return await tool(*args, **kwargs)
        finally:
            _lines.reset(token)
            ctx = next((value for value in kwargs.values() if isinstance(value, Context)), None)
            if ctx is not None and lines:
                await _send(ctx, lines)

    return cast(F, call)


async def _send(ctx: Context, lines: list[tuple[LoggingLevel, str, str]]) -> None:
    """Send the call's lines at or above the level its connection asked for (2026-07-28: the SDK filters)."""
    chosen = _connection_state(ctx.request_context.session).get(_LEVEL_KEY, DEFAULT_LEVEL)
    floor = ORDER.index(chosen) if ctx.request_context.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS else 0
    with warnings.catch_warnings():
        # The logging capability is deprecated as of 2026-07-28 (SEP-2577), which is this module's subject:
        # the clients of both eras it serves still take log lines.
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        for level, logger, message in lines:
            if ORDER.index(level) >= floor:
                await ctx.log(level, message, logger_name=logger)


async def set_level(ctx: ServerRequestContext[Any, Any], params: SetLevelRequestParams) -> EmptyResult:
    """``logging/setLevel``: a 2025-era client's minimum level for the rest of its connection (the SDK answers
    a 2026-07-28 connection's "method not found" itself)."""
    _connection_state(ctx.session)[_LEVEL_KEY] = params.level
    return EmptyResult()


def _connection_state(session: ServerSession) -> dict[str, Any]:
    """The connection's own scratch state (``Connection.state``, kept across its requests).

    A ``ServerSession`` is made for each request, and python-sdk 2.3 gives a handler no public way to the
    connection behind it: hence its private ``_connection``, read here only.
    """
    state: dict[str, Any] = session._connection.state
    return state
