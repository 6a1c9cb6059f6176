from __future__ import annotations

from sextant.kb.indexing import index_text


def test_context_puts_title_and_section_above_the_chunk() -> None:
    meta = {"title": "Espresso care", "section": "Descaling"}
    assert index_text("Every two months.", meta, context=True) == "Espresso care\nDescaling\nEvery two months."
    assert index_text("Every two months.", meta, context=False) == "Every two months."


def test_context_is_not_repeated() -> None:
    # A chunk that starts with its own heading, or a section named like the document, is not doubled.
    assert index_text("Descaling\nEvery two months.", {"title": "T", "section": "Descaling"}, True) == (
        "T\nDescaling\nEvery two months."
    )
    assert index_text("Body.", {"title": "Same", "section": "Same"}, True) == "Same\nBody."
    assert index_text("Body.", {}, True) == "Body."
