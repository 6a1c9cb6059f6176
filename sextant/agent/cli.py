"""``sextant-agent``: serve the agent's HTTP API (it starts the knowledge base itself)."""

from __future__ import annotations

import argparse

from sextant.agent.settings import load_agent_settings
from sextant.logs import configure_logging


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="sextant-agent",
        description="Sextant's agent server: cited answers over HTTP and SSE. Settings: SEXTANT_* (see README).",
    )
    parser.add_argument("--host", help="bind address (default SEXTANT_HOST, 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port (default SEXTANT_PORT, 8000)")
    args = parser.parse_args(argv)
    settings = load_agent_settings()
    configure_logging(settings.log_level, settings.log_format)

    import uvicorn

    from sextant.agent.app import create_app

    uvicorn.run(
        create_app(settings),
        host=args.host or settings.host,
        port=args.port or settings.port,
        log_config=None,  # our handler on the root logger: one format, request ids included
        timeout_graceful_shutdown=10,
    )


if __name__ == "__main__":
    main()
