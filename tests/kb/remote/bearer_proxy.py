"""A loopback reverse proxy that adds a bearer token to every request: how a client that cannot send one
(the official conformance suite has no header option) reaches ``sextant-kb --http``.

Test tooling at the network boundary, never part of the product. Everything else passes through unchanged, the
``Host`` and ``Origin`` headers included, so the server's own checks see what the client sent; responses are
streamed back as they come (SSE).

    python tests/kb/remote/bearer_proxy.py --upstream http://127.0.0.1:8765 --token TOKEN --port 0
"""

from __future__ import annotations

import argparse
import socket
import sys
from collections.abc import AsyncIterator

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

# Connection-level headers are the proxy's own on each side; content-length is recomputed.
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "content-length"}


def app(upstream: str, token: str) -> Starlette:
    client = httpx.AsyncClient(base_url=upstream, timeout=None)

    async def forward(request: Request) -> StreamingResponse:
        headers = [(k, v) for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP | {"authorization"}]
        headers.append(("authorization", f"Bearer {token}"))
        sent = client.build_request(
            request.method, request.url.path, params=request.query_params, headers=headers, content=request.stream()
        )
        answer = await client.send(sent, stream=True)

        async def body() -> AsyncIterator[bytes]:
            async for chunk in answer.aiter_raw():
                yield chunk

        kept = {k: v for k, v in answer.headers.items() if k.lower() not in HOP_BY_HOP}
        return StreamingResponse(body(), answer.status_code, kept, background=BackgroundTask(answer.aclose))

    methods = ["GET", "POST", "DELETE", "OPTIONS"]
    return Starlette(routes=[Route("/{path:path}", forward, methods=methods)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(64)
    sys.stderr.write(f"bearer proxy at http://127.0.0.1:{sock.getsockname()[1]}\n")
    sys.stderr.flush()
    config = uvicorn.Config(app(args.upstream, args.token), log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
