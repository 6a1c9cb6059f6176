"""The worker's side of the loaders' sandbox, in this process: what each request is answered with.

The whole round trip, a real worker under its limits, is in ``test_loader_sandbox.py``.
"""

from __future__ import annotations

from typing import Any

from sextant.kb.documents import LoadError
from sextant.kb.loader_sandbox import document_from_json, too_many_chars_reason
from sextant.kb.loader_worker import _answer, _ocr_options, _parse_one
from sextant.kb.loaders import ocr


def _raises(exc: BaseException) -> Any:
    def work() -> dict[str, Any]:
        raise exc

    return work


def _out_of_memory_inside_a_loader() -> dict[str, Any]:
    try:
        raise MemoryError
    except MemoryError as exc:
        raise LoadError("big.pdf", "the parser failed") from exc


def test_a_parsed_file_comes_back_as_its_document() -> None:
    reply = _parse_one(b"Brew at 93 degrees.", {"name": "tea.txt", "max_pdf_pages": 10, "max_chars": 100})
    assert document_from_json(reply["document"]).text == "Brew at 93 degrees."


def test_a_text_over_the_character_limit_is_refused_with_the_limit_named() -> None:
    reply = _parse_one(b"Brew at 93 degrees.", {"name": "tea.txt", "max_pdf_pages": 10, "max_chars": 5})
    assert reply == {"refused": too_many_chars_reason(19, 5)}


def test_what_stopped_the_work_is_told_apart_memory_refusal_or_crash() -> None:
    assert _answer(lambda: {"pdf": "JVBER"}) == {"pdf": "JVBER"}
    assert _answer(_raises(MemoryError())) == {"memory": True}
    assert _answer(_out_of_memory_inside_a_loader) == {"memory": True}
    assert _answer(_raises(LoadError("a.pdf", "encrypted"))) == {"refused": "encrypted"}
    assert _answer(_raises(RuntimeError("boom"))) == {"error": "RuntimeError: boom"}


def test_the_ocr_options_are_the_parent_s_or_the_defaults() -> None:
    assert _ocr_options({}) == ocr.OcrOptions()
    given = _ocr_options({"ocr": {"mode": "off", "lang": "deu", "timeout_s": 5}})
    assert (given.mode, given.lang, given.timeout_s) == ("off", "deu", 5.0)
