"""The table of formats: every suffix goes to a loader module that exists, and the browser offers exactly these."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from sextant.kb.documents import LoadError
from sextant.kb.loaders import CONTAINER_SUFFIXES, SUPPORTED_SUFFIXES, load_bytes

REPO = Path(__file__).resolve().parents[3]
FILE_TYPES = REPO / "frontend" / "src" / "features" / "documents" / "fileTypes.ts"


def test_every_suffix_has_a_loader_and_every_container_is_also_a_document() -> None:
    from sextant.kb.loaders import _FORMATS

    for module in set(_FORMATS.values()):
        assert callable(importlib.import_module(f"sextant.kb.loaders.{module}").load)
    assert set(CONTAINER_SUFFIXES) <= set(SUPPORTED_SUFFIXES)


def test_the_browser_offers_exactly_the_types_the_loaders_read() -> None:
    listed = re.search(r"READABLE_SUFFIXES = \[(.*?)\] as const", FILE_TYPES.read_text(encoding="utf-8"), re.S)
    assert listed is not None, f"no READABLE_SUFFIXES list in {FILE_TYPES}"
    assert re.findall(r'"(\.[a-z]+)"', listed.group(1)) == list(SUPPORTED_SUFFIXES)


def test_a_type_no_loader_reads_is_refused_naming_the_ones_it_could() -> None:
    with pytest.raises(LoadError, match=r"unsupported file type '\.key'; supported: \.pdf, \.docx"):
        load_bytes(b"\x00", "deck.key")
