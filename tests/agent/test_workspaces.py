"""The workspace book on its own: tokens kept only as hashes, expiry, busy workspaces, limits, restarts."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from sextant.agent.workspaces import LimitReached, WorkspaceBook, token_digest


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_a_token_opens_its_workspace_and_only_its_hash_is_stored(tmp_path: Path) -> None:
    path = tmp_path / "workspaces.json"
    book = WorkspaceBook(path, ttl_s=3600, max_active=5)
    first, token = book.create()
    second, other = book.create()
    assert book.resolve(token) is first and book.resolve(other) is second
    assert book.resolve("not-a-token") is None and book.resolve("") is None
    assert first.id != second.id and len(token) >= 43  # 32 random bytes, URL-safe base64
    saved = path.read_text(encoding="utf-8")
    assert token not in saved and token_digest(token) in saved
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_expired_and_closed_workspaces_stop_opening_and_become_due_when_idle() -> None:
    clock = Clock()
    book = WorkspaceBook(None, ttl_s=60, max_active=5, clock=clock)
    expiring, expiring_token = book.create()
    closed, closed_token = book.create()
    kept, kept_token = book.create()
    book.close(closed)
    assert book.resolve(closed_token) is None
    assert book.due() == [closed]

    clock.now += 30
    kept.expires = clock.now + 3600
    book.begin(expiring)  # a request is running in it
    clock.now += 31
    assert book.resolve(expiring_token) is None  # expired: refused at once...
    assert expiring not in book.due()  # ...but not deleted under the running request
    book.end(expiring)
    assert {w.id for w in book.due()} == {expiring.id, closed.id}
    assert book.resolve(kept_token) is kept


def test_limits_name_their_setting_and_value() -> None:
    book = WorkspaceBook(None, ttl_s=60, max_active=1)
    workspace, _ = book.create()
    with pytest.raises(LimitReached, match=r"SEXTANT_MAX_WORKSPACES=1"):
        book.create()
    book.count_question(workspace, limit=2)
    book.count_question(workspace, limit=2)
    with pytest.raises(LimitReached, match=r"SEXTANT_WORKSPACE_QUESTIONS=2"):
        book.count_question(workspace, limit=2)
    book.close(workspace)
    book.remove(workspace)
    book.create()  # a deleted workspace frees its place


def test_a_restart_keeps_every_workspace_still_to_be_deleted(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "workspaces.json"
    book = WorkspaceBook(path, ttl_s=60, max_active=5, clock=clock)
    live, token = book.create()
    closed, _ = book.create()
    book.count_question(live, limit=10)
    book.close(closed)

    again = WorkspaceBook(path, ttl_s=60, max_active=5, clock=clock)
    reopened = again.resolve(token)
    assert reopened is not None and reopened.id == live.id and reopened.questions == 1
    assert [w.id for w in again.due()] == [closed.id]


def test_an_unreadable_book_refuses_to_start_rather_than_forget(tmp_path: Path) -> None:
    path = tmp_path / "workspaces.json"
    path.write_text(json.dumps({"format": 1, "workspaces": [{"id": "x"}]}), encoding="utf-8")
    with pytest.raises(RuntimeError, match="cannot read the workspace book"):
        WorkspaceBook(path, ttl_s=60, max_active=5)
