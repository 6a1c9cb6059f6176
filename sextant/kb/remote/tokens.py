"""Bearer tokens for ``sextant-kb --http``: minted once, kept only as SHA-256 hashes.

A token is 256 random bits (``secrets.token_urlsafe(32)``) behind an ``skb_`` prefix that secret
scanners can match. Only its SHA-256 is stored: at that entropy a slow password hash adds nothing, and a
stolen file holds nothing a client could present. Digests are compared with ``hmac.compare_digest``.

The file is JSON (``{"version": 1, "tokens": [...]}``), replaced atomically and created with mode 0600;
a running server re-reads it when it changes, so a revoked token stops working at its next request.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from sextant.kb.durable import replace_atomically
from sextant.settings import KbSettings

KB_READ = "kb:read"
KB_WRITE = "kb:write"
SCOPES = (KB_READ, KB_WRITE)
FORMAT_VERSION = 1
TOKEN_PREFIX = "skb_"
TOKENS_FILE = "kb-tokens.json"
TOKEN_NAME = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class TokenError(Exception):
    """A token operation that cannot be done: a bad or taken name, an unknown token, an unreadable file."""


@dataclass(frozen=True)
class TokenRecord:
    """One stored token: never the token itself, only its digest."""

    name: str
    sha256: str
    scopes: tuple[str, ...]
    created: str

    @property
    def read_only(self) -> bool:
        return KB_WRITE not in self.scopes


def tokens_path(settings: KbSettings) -> Path:
    """``SEXTANT_KB_TOKENS_FILE``, else ``kb-tokens.json`` beside the store."""
    if settings.kb_tokens_file is not None:
        return settings.kb_tokens_file.expanduser()
    return settings.store_dir() / TOKENS_FILE


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class TokenStore:
    """The tokens file; read again whenever it has changed on disk."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._seen: tuple[int, int, int] | None = None
        self._records: tuple[TokenRecord, ...] = ()

    def records(self) -> tuple[TokenRecord, ...]:
        """Every stored token, oldest first.

        Raises:
            TokenError: the file exists but is not a tokens file.
        """
        try:
            st = self.path.stat()
        except FileNotFoundError:
            self._seen, self._records = None, ()
            return ()
        stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        if stamp != self._seen:
            self._records = self._read()
            self._seen = stamp
        return self._records

    def mint(self, name: str, *, read_only: bool = False) -> str:
        """Store a new token's digest under ``name`` and return the token: the only time it is seen.

        Raises:
            TokenError: the name is malformed or already taken.
        """
        if not TOKEN_NAME.fullmatch(name):
            raise TokenError(f"token name {name!r}: use 1-64 letters, digits, '.', '_' or '-'")
        records = self.records()
        if any(r.name == name for r in records):
            raise TokenError(f"a token named {name!r} exists; revoke it first or choose another name")
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        scopes = (KB_READ,) if read_only else SCOPES
        created = datetime.now(UTC).isoformat(timespec="seconds")
        self._write((*records, TokenRecord(name=name, sha256=digest(token), scopes=scopes, created=created)))
        return token

    def revoke(self, name: str) -> None:
        """Delete the token stored under ``name``.

        Raises:
            TokenError: no token has that name.
        """
        records = self.records()
        kept = tuple(r for r in records if r.name != name)
        if len(kept) == len(records):
            raise TokenError(f"no token named {name!r} (sextant-kb-token list shows them)")
        self._write(kept)

    def verify(self, token: str) -> TokenRecord | None:
        """The record whose digest matches ``token``, or None.

        Raises:
            TokenError: the file exists but is not a tokens file.
        """
        presented = digest(token)
        found = None
        # Every record is compared, so the time taken does not say how far a guess got.
        for record in self.records():
            if hmac.compare_digest(presented, record.sha256):
                found = record
        return found

    def _read(self) -> tuple[TokenRecord, ...]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if data.get("version") != FORMAT_VERSION:
                raise ValueError(f"version {data.get('version')!r}, expected {FORMAT_VERSION}")
            return tuple(
                TokenRecord(
                    name=str(t["name"]),
                    sha256=str(t["sha256"]),
                    scopes=tuple(str(s) for s in t["scopes"]),
                    created=str(t["created"]),
                )
                for t in data["tokens"]
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise TokenError(f"{self.path} is not a readable tokens file ({exc}); fix or delete it") from exc

    def _write(self, records: tuple[TokenRecord, ...]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        body = json.dumps(
            {"version": FORMAT_VERSION, "tokens": [asdict(r) | {"scopes": list(r.scopes)} for r in records]}, indent=2
        )
        # Private (0600) and swapped in whole, so a reader never sees half a file.
        replace_atomically(self.path, (body + "\n").encode("utf-8"), prefix=".kb-tokens-")
        self._seen, self._records = None, ()
