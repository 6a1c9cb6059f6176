"""Anonymous, expiring workspaces: who holds which bearer token, until when, and what each has used.

A workspace is minted with a 256-bit random token that is shown once; only its SHA-256 is kept (a
stolen record cannot be replayed). The workspace id is separate from the token and never leaves the
server: the agent puts it in the ``_meta`` of each MCP call, where the knowledge base scopes the call.
The book is saved to disk on every change, so a restart neither forgets a workspace that must still
be deleted nor revives a deleted one.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)


class LimitReached(Exception):
    """A configured limit refused the request; ``setting`` and ``value`` name it for the person."""

    def __init__(self, setting: str, value: int, what: str) -> None:
        self.setting, self.value = setting, value
        super().__init__(f"limit reached: {what} ({setting}={value})")


@dataclass
class Workspace:
    id: str
    token_sha256: str
    created: float
    expires: float
    questions: int = 0
    closing: bool = False  # its owner asked for deletion: refused from now on, dropped when idle
    in_flight: int = field(default=0, compare=False)

    def live(self, now: float) -> bool:
        return not self.closing and now < self.expires


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class WorkspaceBook:
    """Every workspace not yet deleted from the knowledge base, by id."""

    def __init__(
        self, path: Path | None, *, ttl_s: int, max_active: int, clock: Callable[[], float] = time.time
    ) -> None:
        self.path = path
        self.ttl_s = ttl_s
        self.max_active = max_active
        self._clock = clock
        self._lock = threading.Lock()
        # Keyed by the token's digest: a request finds its workspace with one lookup.
        self._by_token: dict[str, Workspace] = {}
        self._load()

    def create(self) -> tuple[Workspace, str]:
        """A new workspace and its bearer token (the only time the token exists in clear).

        Raises:
            LimitReached: ``max_active`` live workspaces exist already.
        """
        token = secrets.token_urlsafe(32)
        now = self._clock()
        with self._lock:
            if self._live(now) >= self.max_active:
                raise LimitReached("SEXTANT_MAX_WORKSPACES", self.max_active, "too many active workspaces; try later")
            workspace = Workspace(secrets.token_hex(16), token_digest(token), now, now + self.ttl_s)
            self._by_token[workspace.token_sha256] = workspace
            self._save()
        log.info("workspace %s created, expires in %d s", workspace.id[:8], self.ttl_s)
        return workspace, token

    def resolve(self, token: str) -> Workspace | None:
        """The live workspace this token opens, or None (unknown, expired or being deleted)."""
        now = self._clock()
        with self._lock:
            workspace = self._by_token.get(token_digest(token))
        return workspace if workspace is not None and workspace.live(now) else None

    def begin(self, workspace: Workspace) -> None:
        with self._lock:
            workspace.in_flight += 1

    def end(self, workspace: Workspace) -> None:
        with self._lock:
            workspace.in_flight -= 1

    def count_question(self, workspace: Workspace, limit: int) -> None:
        """Count one question against the workspace.

        Raises:
            LimitReached: it has asked ``limit`` already.
        """
        with self._lock:
            if workspace.questions >= limit:
                raise LimitReached("SEXTANT_WORKSPACE_QUESTIONS", limit, "this workspace has asked its questions")
            workspace.questions += 1
            self._save()

    def close(self, workspace: Workspace) -> None:
        """Refuse the workspace from now on; the sweep deletes it once no request is using it."""
        with self._lock:
            workspace.closing = True
            self._save()

    def due(self) -> list[Workspace]:
        """Workspaces to delete now: expired or closing, and idle."""
        now = self._clock()
        with self._lock:
            return [w for w in self._by_token.values() if not w.live(now) and w.in_flight == 0]

    def remove(self, workspace: Workspace) -> None:
        with self._lock:
            self._by_token.pop(workspace.token_sha256, None)
            self._save()

    def active(self) -> int:
        now = self._clock()
        with self._lock:
            return self._live(now)

    def _live(self, now: float) -> int:
        return sum(w.live(now) for w in self._by_token.values())

    def _load(self) -> None:
        if self.path is None or not self.path.is_file():
            return
        try:
            saved = json.loads(self.path.read_text(encoding="utf-8"))
            for row in saved["workspaces"]:
                row.pop("in_flight", None)
                workspace = Workspace(**row)
                self._by_token[workspace.token_sha256] = workspace
        except (OSError, ValueError, KeyError, TypeError) as exc:
            # Refusing to start is better than forgetting workspaces whose documents must still be deleted.
            raise RuntimeError(f"cannot read the workspace book {self.path}: {exc}") from exc

    def _save(self) -> None:
        if self.path is None:
            return
        rows = []
        for workspace in self._by_token.values():
            row = asdict(workspace)
            del row["in_flight"]
            rows.append(row)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"format": 1, "workspaces": rows}), encoding="utf-8")
        os.chmod(tmp, 0o600)
        os.replace(tmp, self.path)
