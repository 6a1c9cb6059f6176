"""The four real PDFs of the shared data: hits must cite the right physical page and printed label.

The oracle is independent of our loader: PyMuPDF's own page text and `get_label()`. A sentence is
taken from a page, asked as a query, and the hit that contains it must name that page and label.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pymupdf
import pytest

from sextant.kb.document_ids import document_id_for
from sextant.kb.embeddings import Embedder
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.loaders import load_file
from sextant.settings import KbSettings
from tests.conftest import require_data

pytestmark = pytest.mark.slow

PDFS = ("R-intro.pdf", "sample-sigconf.pdf", "pmlr-sample.pdf", "elstest-5p.pdf")


@pytest.fixture(scope="module")
def pdf_dir() -> Path:
    return require_data("pdfs")


@pytest.fixture(scope="module")
def kb(pdf_dir: Path, embedder: Embedder, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    settings = KbSettings(chroma_dir=tmp_path_factory.mktemp("pdf-store"), _env_file=None)  # type: ignore[call-arg]
    with KnowledgeBase.open(settings, embedder=embedder) as opened:
        for name in PDFS:
            opened.ingest(document_id_for(Path(name)), load_file(pdf_dir / name), source=name)
        yield opened


def _probes(path: Path, every: int) -> list[tuple[int, str, str]]:
    """(physical page, printed label, a distinctive line of its text) for every `every`-th page."""
    probes = []
    with pymupdf.open(path) as doc:
        for index in range(0, doc.page_count, every):
            page = doc[index]
            lines = [" ".join(line.split()) for line in page.get_text().splitlines()]
            # A long prose line: enough words to identify the page, no ligatures or code symbols.
            prose = [ln for ln in lines if len(ln.split()) >= 8 and re.fullmatch(r"[A-Za-z ,.;:()'-]+", ln)]
            if prose:
                probes.append((index + 1, page.get_label() or str(index + 1), max(prose, key=len)))
    return probes


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())


@pytest.mark.parametrize(
    ("name", "every"), [("R-intro.pdf", 9), ("sample-sigconf.pdf", 1), ("pmlr-sample.pdf", 1), ("elstest-5p.pdf", 1)]
)
def test_hits_cite_the_physical_page_and_its_printed_label(
    kb: KnowledgeBase, pdf_dir: Path, name: str, every: int
) -> None:
    doc_id = document_id_for(Path(name))
    probes = _probes(pdf_dir / name, every)
    assert len(probes) >= 3
    for number, label, line in probes:
        hits = kb.search(line, k=20, doc_ids=[doc_id], detail="full", abstain=False).hits
        wanted = _words(line)
        # A passage holding the start or the end of the probe line (a chunk boundary may fall inside
        # it); words are compared so hyphenation and ligatures do not matter.
        windows = (" ".join(wanted[:6]), " ".join(wanted[-6:]))
        holding = [h for h in hits if any(w in " ".join(_words(h.text or "")) for w in windows)]
        assert holding, f"{name} p.{number}: no hit holds {line!r}"
        assert (holding[0].page, holding[0].page_label) == (number, label), f"{name}: {line!r}"


def test_r_intro_front_matter_labels_differ_from_page_numbers(kb: KnowledgeBase) -> None:
    record = kb.document("R-intro")
    labels = {p.number: p.label for p in record.pages}
    assert labels[1] == "T-1"
    assert any(label == "i" for label in labels.values())
    first_arabic = min(n for n, label in labels.items() if label == "1")
    assert first_arabic > 1  # printed page 1 is not the first physical page
