"""Connecting to Chroma: a persistent folder on this machine or a server (and a database on it), and closing
the client without leaking its HTTP sessions."""

from __future__ import annotations

from pathlib import Path
from typing import Any


class StoreError(Exception):
    """The store cannot be used as configured; the message says how to fix it."""


def open_client(*, path: Path | None, url: str | None, database: str | None = None) -> Any:
    """A Chroma client on the persistent local store at ``path``, or on the server at ``url``.

    Raises:
        StoreError: the server cannot be reached, or the folder cannot be used.
    """
    import chromadb

    settings = chromadb.Settings(anonymized_telemetry=False)
    try:
        if url:
            if database:
                _ensure_database(url, database)
            client = chromadb.HttpClient(
                **_server_address(url), database=database or chromadb.DEFAULT_DATABASE, settings=settings
            )
        else:
            assert path is not None
            path.mkdir(parents=True, exist_ok=True)
            client = chromadb.PersistentClient(path=str(path), settings=settings)
    except (ValueError, ConnectionError, OSError) as exc:
        where = url or str(path)
        raise StoreError(f"cannot open the Chroma store at {where}: {exc}") from exc
    return client


def close_client(client: Any) -> None:
    """Release a client from ``open_client``: its database handles or HTTP connections."""
    _close_sessions(client, getattr(client, "_admin_client", None))
    client.close()


def drop_database(url: str, database: str) -> bool:
    """Delete a database and every collection in it from the Chroma server at ``url``; whether it existed.

    Raises:
        StoreError: the server cannot be reached or refused.
    """
    import httpx
    from chromadb.errors import ChromaError, NotFoundError

    admin = _admin(url)
    try:
        admin.delete_database(database)
    except NotFoundError:
        return False
    except (ChromaError, httpx.HTTPError) as exc:
        raise StoreError(f"cannot delete database {database!r} on the Chroma server at {url}: {exc}") from exc
    finally:
        _close_sessions(admin)
    return True


def _ensure_database(url: str, database: str) -> None:
    import httpx
    from chromadb.errors import ChromaError, NotFoundError

    admin = _admin(url)
    try:
        try:
            admin.get_database(database)
        except NotFoundError:
            try:
                admin.create_database(database)
            except ChromaError:
                # Another client (a replica) may have created it since we looked; only a missing one is an error.
                admin.get_database(database)
    except (ChromaError, httpx.HTTPError) as exc:
        raise StoreError(f"cannot create database {database!r} on the Chroma server at {url}: {exc}") from exc
    finally:
        _close_sessions(admin)


def _admin(url: str) -> Any:
    import chromadb

    address = _server_address(url)
    return chromadb.AdminClient(
        chromadb.Settings(
            anonymized_telemetry=False,
            chroma_api_impl="chromadb.api.fastapi.FastAPI",
            chroma_server_host=address["host"],
            chroma_server_http_port=address["port"],
            chroma_server_ssl_enabled=address["ssl"],
        )
    )


def _server_address(url: str) -> dict[str, Any]:
    from urllib.parse import urlparse

    parsed = urlparse(url)
    https = parsed.scheme == "https"
    return {"host": parsed.hostname or "localhost", "port": parsed.port or (443 if https else 80), "ssl": https}


def _close_sessions(*clients: Any) -> None:
    # chromadb 1.5.9's HTTP and admin clients leave their httpx sessions open on close(); close them
    # ourselves so a long-lived process does not leak connections.
    for client in clients:
        session = getattr(getattr(client, "_server", None), "_session", None)
        if session is not None:
            session.close()
