"""The token store: only digests on disk, verification, revocation, the file's mode and format."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from sextant.kb.remote.tokens import (
    KB_READ,
    KB_WRITE,
    TOKEN_PREFIX,
    TokenError,
    TokenStore,
    digest,
    tokens_path,
)
from sextant.settings import KbSettings


def test_mint_stores_only_the_digest_and_verify_finds_the_record(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "kb" / "kb-tokens.json")
    token = store.mint("alice")
    assert token.startswith(TOKEN_PREFIX) and len(token) >= len(TOKEN_PREFIX) + 43  # 32 bytes, base64url
    on_disk = store.path.read_text(encoding="utf-8")
    assert token not in on_disk and digest(token) in on_disk
    record = store.verify(token)
    assert record is not None and (record.name, record.scopes, record.read_only) == (
        "alice",
        (KB_READ, KB_WRITE),
        False,
    )
    assert store.verify(token + "x") is None and store.verify("") is None


def test_read_only_tokens_have_only_the_read_scope(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "kb-tokens.json")
    record = store.verify(store.mint("ci", read_only=True))
    assert record is not None and record.scopes == (KB_READ,) and record.read_only


def test_file_is_private_versioned_json_and_left_no_temporary_files(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "kb-tokens.json")
    store.mint("alice")
    store.mint("bob", read_only=True)
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    data = json.loads(store.path.read_text(encoding="utf-8"))
    assert data["version"] == 1 and [t["name"] for t in data["tokens"]] == ["alice", "bob"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kb-tokens.json"]


def test_revoke_removes_the_token_for_every_reader_of_the_file(tmp_path: Path) -> None:
    writer, server = TokenStore(tmp_path / "kb-tokens.json"), TokenStore(tmp_path / "kb-tokens.json")
    alice, bob = writer.mint("alice"), writer.mint("bob")
    assert server.verify(alice) is not None  # the server has read the file once
    writer.revoke("alice")
    assert server.verify(alice) is None  # ...and notices the change without a restart
    assert server.verify(bob) is not None
    with pytest.raises(TokenError, match="no token named 'alice'"):
        writer.revoke("alice")


def test_names_must_be_well_formed_and_unique(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "kb-tokens.json")
    store.mint("alice")
    with pytest.raises(TokenError, match="exists"):
        store.mint("alice")
    for bad in ("", "a b", "x" * 65, "../etc"):
        with pytest.raises(TokenError, match="token name"):
            store.mint(bad)
    assert [r.name for r in store.records()] == ["alice"]


def test_a_damaged_file_is_refused_with_its_name(tmp_path: Path) -> None:
    path = tmp_path / "kb-tokens.json"
    path.write_text('{"version": 1, "tokens": [{"name": "x"}]}', encoding="utf-8")
    with pytest.raises(TokenError, match=r"kb-tokens\.json"):
        TokenStore(path).verify("anything")


def test_missing_file_holds_no_tokens(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "absent.json")
    assert store.records() == () and store.verify("skb_x") is None


def test_the_file_lives_beside_the_store_unless_configured(tmp_path: Path) -> None:
    beside = KbSettings(chroma_dir=tmp_path / "store", _env_file=None)  # type: ignore[call-arg]
    assert tokens_path(beside) == tmp_path / "store" / "kb-tokens.json"
    chosen = KbSettings(kb_tokens_file=tmp_path / "t.json", _env_file=None)  # type: ignore[call-arg]
    assert tokens_path(chosen) == tmp_path / "t.json"
