"""``sextant-kb --http``: MCP's Streamable HTTP transport at ``/mcp``, for remote and team use.

Layers, outermost first: a browser ``Origin`` not on the allowlist gets 403 (requests without one, from
programs rather than web pages, pass, and a loopback server accepts the machine's own pages); CORS for the
accepted origins; the bearer token, checked by the
SDK's ``BearerAuthBackend`` against our ``TokenStore``. Behind them, ``/mcp`` answers 401 with
``WWW-Authenticate: Bearer ... resource_metadata="..."`` without a valid token, and the OAuth 2.0
Protected Resource Metadata (RFC 9728) is public at ``/.well-known/oauth-protected-resource`` and its
``/mcp``-suffixed form. Sextant runs no authorization server: the document names one only when
``SEXTANT_KB_AUTHORIZATION_SERVERS`` does, and tokens come from ``sextant-kb-token``. Inside them, ``/mcp`` keeps
no session (sessionless.py): 2026-07-28 requests and 2025-era handshakes alike, any process on the store.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import socket
import sys
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.routes import build_resource_metadata_url
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, TransportSecuritySettings
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from sextant.kb.remote.access import scope_middleware
from sextant.kb.remote.sessionless import SessionlessManager
from sextant.kb.remote.tokens import KB_READ, SCOPES, TokenError, TokenStore, tokens_path
from sextant.settings import KbSettings

log = logging.getLogger(__name__)

MCP_PATH = "/mcp"
# Room for a request's JSON around a kb_upload's base64 file (name, title, _meta).
ENVELOPE_BYTES = 64 * 1024
METADATA_PATH = "/.well-known/oauth-protected-resource"
LOOPBACK_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost", "[::1]"]
# Pages this machine serves: a loopback server accepts them (the token still decides), as the MCP specification's
# DNS-rebinding guidance expects; a rebinding page arrives with its own, foreign, origin. The regular expression is
# the rule; the list says it in the SDK's Host/Origin check's own terms (":*" for any port).
LOOPBACK_ORIGIN = r"https?://(localhost|127\.0\.0\.1|\[::1\])(:[0-9]+)?"
LOOPBACK_ORIGINS = [f"{scheme}://{host}" for scheme in ("http", "https") for host in LOOPBACK_HOSTS]


@dataclass(frozen=True)
class HttpOptions:
    """Everything ``--http`` needs besides the MCP server itself."""

    host: str
    port: int
    tokens: TokenStore
    allowed_origins: tuple[str, ...] = ()
    public_url: str | None = None
    authorization_servers: tuple[str, ...] = ()
    max_body_bytes: int = DEFAULT_MAX_REQUEST_BODY_SIZE

    @classmethod
    def from_settings(cls, settings: KbSettings, *, host: str | None = None, port: int | None = None) -> HttpOptions:
        """The options in force, checked before any model is loaded.

        Raises:
            SystemExit: no token is configured, or the tokens file is unreadable: never serve without tokens.
        """
        if port is not None and not 0 <= port <= 65535:
            raise SystemExit(f"sextant-kb: --port {port}: use 0-65535 (0 picks a free port)")
        store = TokenStore(tokens_path(settings))
        try:
            minted = store.records()
        except TokenError as exc:
            raise SystemExit(f"sextant-kb: {exc}") from exc
        if not minted:
            raise SystemExit(
                f"sextant-kb: --http serves only bearer-token holders, and {store.path} holds no token. "
                "Mint one with `sextant-kb-token mint NAME` (or set SEXTANT_KB_TOKENS_FILE to a tokens file)."
            )
        return cls(
            host=host or settings.kb_http_host,
            port=settings.kb_http_port if port is None else port,
            tokens=store,
            allowed_origins=tuple(_split(settings.kb_http_origins)),
            public_url=settings.kb_public_url,
            authorization_servers=tuple(_split(settings.kb_authorization_servers)),
            # A kb_upload of the largest file parsed must fit: base64 is 4 bytes per 3.
            max_body_bytes=max(DEFAULT_MAX_REQUEST_BODY_SIZE, -(-settings.max_file_bytes // 3) * 4 + ENVELOPE_BYTES),
        )


class StoreTokenVerifier:
    """The SDK's ``TokenVerifier`` over our tokens file: the token's name is the client id."""

    def __init__(self, store: TokenStore) -> None:
        self.store = store

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            record = self.store.verify(token)
        except TokenError as exc:
            log.error("refusing every token until the tokens file is fixed: %s", exc)
            return None
        if record is None:
            return None
        # The subject tells apart tokens minted one after another under the same name.
        return AccessToken(token=token, client_id=record.name, scopes=list(record.scopes), subject=record.sha256[:12])


def build_app(server: MCPServer[Any], options: HttpOptions) -> Starlette:
    """The ASGI app serving ``server`` at ``/mcp`` behind the token, Origin and Host checks (adds the scope
    middleware to ``server``, so build one app per server)."""
    server.middleware.append(scope_middleware(server))
    # Built here rather than by server.streamable_http_app(), whose app has no authentication and whose
    # manager answers every request the same way; the low-level server is what a manager serves.
    session_manager = SessionlessManager(
        server._lowlevel_server, _transport_security(options), max_body_bytes=options.max_body_bytes
    )
    mcp = _RequireToken(session_manager.routed, options)

    async def metadata(request: Request) -> JSONResponse:
        document: dict[str, Any] = {
            "resource": _resource_url(request, options),
            "bearer_methods_supported": ["header"],
            "scopes_supported": list(SCOPES),
            "resource_name": "Sextant knowledge base",
        }
        if options.authorization_servers:
            document["authorization_servers"] = list(options.authorization_servers)
        return JSONResponse(document, headers={"Cache-Control": "public, max-age=3600"})

    return Starlette(
        routes=[
            Route(METADATA_PATH, metadata, methods=["GET"]),
            Route(METADATA_PATH + MCP_PATH, metadata, methods=["GET"]),
            Route(MCP_PATH, mcp),
        ],
        middleware=[
            Middleware(_OriginGuard, allowed=options.allowed_origins, pattern=_local_pages(options)),
            Middleware(
                CORSMiddleware,
                allow_origins=list(options.allowed_origins),
                allow_origin_regex=_local_pages(options),
                allow_methods=["GET", "POST", "DELETE"],
                allow_headers=[
                    "authorization",
                    "content-type",
                    "last-event-id",
                    "mcp-session-id",
                    "mcp-protocol-version",
                    "mcp-method",
                    "mcp-name",
                ],
                expose_headers=["mcp-session-id", "www-authenticate"],
            ),
            Middleware(AuthenticationMiddleware, backend=BearerAuthBackend(StoreTokenVerifier(options.tokens))),
            Middleware(AuthContextMiddleware),
        ],
        lifespan=lambda _: session_manager.run(),
    )


def serve(server: MCPServer[Any], options: HttpOptions) -> None:
    """Serve until interrupted; the address actually bound (``--port 0`` picks one) is said on stderr."""
    import uvicorn

    app = build_app(server, options)
    sock = _bind(options.host, options.port)
    bound_port = sock.getsockname()[1]
    if not _is_loopback(options.host):
        log.warning(
            "sextant-kb --http is listening on %s, reachable beyond this machine: put TLS in front of it "
            "(a reverse proxy) so bearer tokens never cross a network in clear",
            options.host,
        )
    host = f"[{options.host}]" if ":" in options.host else options.host
    # Said even when logging is quiet: with --port 0 this line is the only way to learn the port.
    sys.stderr.write(f"sextant-kb: MCP over HTTP at http://{host}:{bound_port}{MCP_PATH}\n")
    sys.stderr.flush()
    # log_config=None: uvicorn's lines go through Sextant's logging (stderr, SEXTANT_LOG_FORMAT).
    config = uvicorn.Config(app, log_config=None, ws="none", timeout_graceful_shutdown=5)
    uvicorn.Server(config).run(sockets=[sock])


class _RequireToken:
    """The SDK's 401/403 guard, with the metadata URL of the address the client used (or the public URL)."""

    def __init__(self, app: ASGIApp, options: HttpOptions) -> None:
        self.app = app
        self.options = options

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        resource = AnyHttpUrl(_resource_url(HTTPConnection(scope), self.options))
        guard = RequireAuthMiddleware(self.app, [KB_READ], build_resource_metadata_url(resource))
        await guard(scope, receive, send)


class _OriginGuard:
    """403 for a request from a web page whose origin is neither allowed nor matches ``pattern``; no ``Origin``
    (a program) passes."""

    def __init__(self, app: ASGIApp, allowed: tuple[str, ...], pattern: str | None) -> None:
        self.app = app
        self.allowed = {o.rstrip("/") for o in allowed}
        self.pattern = re.compile(pattern) if pattern else None

    def accepts(self, origin: str) -> bool:
        origin = origin.rstrip("/")
        return origin in self.allowed or bool(self.pattern and self.pattern.fullmatch(origin))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            origin = HTTPConnection(scope).headers.get("origin")
            if origin is not None and not self.accepts(origin):
                log.warning("refused a request from origin %r (not in SEXTANT_KB_HTTP_ORIGINS)", origin[:200])
                response = JSONResponse(
                    {"error": "forbidden_origin", "error_description": f"origin {origin[:200]!r} is not allowed"},
                    status_code=403,
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _transport_security(options: HttpOptions) -> TransportSecuritySettings:
    """The SDK's Host check against DNS rebinding, where it matters: a loopback address.

    A rebinding page reaches a loopback server under a foreign Host name; elsewhere the machine's names
    are not known here, and the token is the defence.
    """
    hosts = list(LOOPBACK_HOSTS)
    if options.public_url:
        hosts.append(urlparse(options.public_url).netloc)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=_is_loopback(options.host),
        allowed_hosts=hosts,
        allowed_origins=_accepted_origins(options),
    )


def _accepted_origins(options: HttpOptions) -> list[str]:
    """SEXTANT_KB_HTTP_ORIGINS, and on a loopback server the machine's own pages."""
    return [*options.allowed_origins, *(LOOPBACK_ORIGINS if _is_loopback(options.host) else [])]


def _local_pages(options: HttpOptions) -> str | None:
    """The machine's own pages, which a loopback server accepts; none elsewhere."""
    return LOOPBACK_ORIGIN if _is_loopback(options.host) else None


def _resource_url(conn: HTTPConnection, options: HttpOptions) -> str:
    return options.public_url or str(conn.base_url).rstrip("/") + MCP_PATH


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket; bound here rather than by uvicorn so the port is known before serving."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise SystemExit(f"sextant-kb: cannot listen on {host}:{port}: {exc.strerror}") from exc
    sock.listen(128)
    return sock


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _split(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]
