"""``sextant-kb-token``: mint prints the token once (alone on stdout), list never shows one, revoke removes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from sextant.kb.cli import token
from sextant.kb.remote.tokens import TokenStore


@pytest.fixture
def tokens_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SEXTANT_CHROMA_DIR", str(tmp_path / "store"))
    return tmp_path / "store" / "kb-tokens.json"


def _run(argv: list[str]) -> int:
    try:
        token.main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def test_mint_list_revoke(tokens_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(["mint", "alice"]) == 0
    out, err = capsys.readouterr()
    alice = out.strip()
    assert out == alice + "\n" and "shown only once" in err and str(tokens_file) in err
    assert _run(["mint", "ci", "--read-only"]) == 0
    capsys.readouterr()
    store = TokenStore(tokens_file)
    record = store.verify(alice)
    assert record is not None and record.name == "alice"

    assert _run(["list"]) == 0
    listing = capsys.readouterr().out
    assert [line.split()[:2] for line in listing.splitlines()] == [["alice", "kb:read"], ["ci", "kb:read"]]
    assert "kb:write" in listing.splitlines()[0] and "kb:write" not in listing.splitlines()[1]
    assert alice not in listing

    assert _run(["revoke", "alice"]) == 0
    assert store.verify(alice) is None


def test_mistakes_exit_1_with_the_reason(tokens_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(["revoke", "nobody"]) == 1
    assert "no token named 'nobody'" in capsys.readouterr().err
    assert _run(["mint", "a b"]) == 1
    assert "token name" in capsys.readouterr().err
    assert not tokens_file.exists()
