"""Writes that survive a crash: a file replaced whole or not at all, and the fsyncs a rename relies on."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from sextant.kb import durable
from sextant.kb.durable import fsync_dir, fsync_tree, replace_atomically, write_json


def test_a_file_is_replaced_whole_private_and_without_leftovers(tmp_path: Path) -> None:
    target = tmp_path / "tokens.json"
    target.write_bytes(b"old")
    replace_atomically(target, b"new content", prefix=".tokens-")
    assert target.read_bytes() == b"new content"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["tokens.json"]


def test_a_failed_replace_keeps_the_old_file_and_removes_the_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "cache.json"
    target.write_bytes(b"old")

    def disk_full(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(durable.os, "replace", disk_full)
    with pytest.raises(OSError, match="No space"):
        replace_atomically(target, b"new", prefix=".cache-")
    monkeypatch.undo()
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["cache.json"]


def test_json_is_written_as_utf8_and_a_tree_and_a_folder_can_be_fsynced(tmp_path: Path) -> None:
    (tmp_path / "seg").mkdir()
    write_json(tmp_path / "seg" / "ids.json", ["thé", "c1"])
    fsync_tree(tmp_path / "seg")
    fsync_tree(tmp_path / "seg" / "ids.json")
    fsync_dir(tmp_path)
    fsync_dir(tmp_path / "missing")  # a folder that cannot be opened is no error
    assert json.loads((tmp_path / "seg" / "ids.json").read_text(encoding="utf-8")) == ["thé", "c1"]
    assert os.path.getsize(tmp_path / "seg" / "ids.json") == len('["thé", "c1"]'.encode())
