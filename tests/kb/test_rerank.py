"""Cross-encoder plumbing and cost, not quality.

No trained cross-encoder can be had offline here, so these tests build one of exactly
ms-marco-MiniLM-L-6-v2's shape from the packaged MiniLM encoder plus a fresh, seeded one-logit
head. Its scores are meaningless; what is tested is that the product loads a local cross-encoder
folder, scores with it, reports it, and degrades to fusion order when one cannot be loaded.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sextant.kb.documents import LoadedDocument
from sextant.kb.embeddings import Embedder, resolve_model_path
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.lexical import LexicalIndex
from sextant.kb.rerank import Reranker
from sextant.kb.search import fused_rerank_order
from sextant.kb.store import ChunkStore
from sextant.settings import KbSettings

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def untrained_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch
    from sentence_transformers import CrossEncoder

    torch.manual_seed(0)
    model = CrossEncoder(resolve_model_path("all-MiniLM-L6-v2"), num_labels=1, device="cpu")
    folder = tmp_path_factory.mktemp("cross-encoder")
    model.save(str(folder))
    return folder


def test_plumbing_a_local_cross_encoder_scores_pairs_as_probabilities(untrained_cross_encoder: Path) -> None:
    reranker = Reranker(str(untrained_cross_encoder))
    assert reranker.active and reranker.state.active
    scores = reranker.score("descale", ["Descale every eight weeks.", "Bees swarm in May.", "x"])
    assert scores.shape == (3,) and ((scores > 0) & (scores < 1)).all()
    assert reranker.score("q", []).shape == (0,)


def test_plumbing_search_reranks_and_reports_rerank_scores(
    untrained_cross_encoder: Path, tmp_path: Path, embedder: Embedder
) -> None:
    settings = KbSettings(
        chroma_dir=tmp_path, reranker=str(untrained_cross_encoder), rerank_fusion="replace", _env_file=None
    )  # type: ignore[call-arg]
    kb = KnowledgeBase.open(settings, embedder=embedder)
    assert kb.stats().reranker.active
    kb.ingest("espresso", LoadedDocument(text="Descale the espresso machine every eight weeks.", title="Espresso"))
    kb.ingest("bees", LoadedDocument(text="Swarm control for bee colonies starts in May.", title="Bees"))
    result = kb.search("descale espresso", k=2, abstain=False)
    assert [h.scored_by for h in result.hits] == ["rerank", "rerank"]
    rerank_scores = [h.scores.rerank for h in result.hits]
    assert all(s is not None for s in rerank_scores)
    assert rerank_scores == sorted(rerank_scores, reverse=True)  # type: ignore[type-var]
    assert result.timings_ms["rerank"] > 0
    assert kb.search("descale espresso", mode="rrf", abstain=False).hits[0].scored_by == "rrf"


def test_by_default_the_rerank_is_fused_with_the_dense_and_bm25_ranks(
    untrained_cross_encoder: Path, tmp_path: Path, embedder: Embedder
) -> None:
    settings = KbSettings(chroma_dir=tmp_path, reranker=str(untrained_cross_encoder), _env_file=None)  # type: ignore[call-arg]
    kb = KnowledgeBase.open(settings, embedder=embedder)
    for i, text in enumerate(["Descale the espresso machine.", "Espresso grind size.", "Bees swarm in May."]):
        kb.ingest(f"d{i}", LoadedDocument(text=text, title=f"D{i}"))
    hits = kb.search("descale espresso", k=3, abstain=False).hits
    assert [h.scored_by for h in hits] == ["rerank"] * 3
    assert [h.chunk_id for h in hits] == [h.chunk_id for h in fused_rerank_order(hits, lambda h: h.chunk_id)]


def test_an_unloadable_reranker_is_reported_once_and_search_falls_back_to_fusion(
    tmp_path: Path, embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    missing = tmp_path / "no-such-model"
    settings = KbSettings(chroma_dir=tmp_path / "store", reranker=str(missing), _env_file=None)  # type: ignore[call-arg]
    store = ChunkStore.open(path=tmp_path / "store", url=None, embedder=embedder.name, dim=embedder.dim)
    with caplog.at_level("WARNING"):
        kb = KnowledgeBase(settings, embedder, store, LexicalIndex.open(tmp_path / "bm25"), Reranker(str(missing)))
    assert len([r for r in caplog.records if "reranker" in r.getMessage()]) == 1
    state = kb.stats().reranker
    assert not state.active and "could not be loaded" in state.detail and "fusion" in state.detail
    kb.ingest("espresso", LoadedDocument(text="Descale the espresso machine every eight weeks.", title="Espresso"))
    assert kb.search("descale espresso", k=1).hits[0].scored_by == "rrf"


@pytest.fixture(scope="module")
def cross_encoder_with_onnx(untrained_cross_encoder: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    import shutil

    from sextant.training.onnx_export import export_onnx

    folder = tmp_path_factory.mktemp("with-onnx") / "model"
    shutil.copytree(untrained_cross_encoder, folder)
    export_onnx(folder)
    return folder


PAIRS = [
    ("descale", "Descale every eight weeks."),
    ("when do bees swarm", "Swarm control for bee colonies starts in May, and a queen leaves with half the bees."),
]


def test_a_folder_with_onnx_exports_runs_the_precision_asked_for_and_scores_like_its_torch_weights(
    cross_encoder_with_onnx: Path,
) -> None:
    from sextant.kb.rerank import ONNX_FP32, ONNX_INT8, OnnxCrossEncoder, TorchCrossEncoder

    assert "onnx fp32" in Reranker(str(cross_encoder_with_onnx)).state.detail
    reranker = Reranker(str(cross_encoder_with_onnx), precision="int8")
    assert reranker.active and "onnx int8" in reranker.state.detail
    # Pairs of different lengths, so padding is exercised; int8 weights move logits a little.
    torch_ = TorchCrossEncoder(str(cross_encoder_with_onnx)).logits(PAIRS)
    assert np.allclose(OnnxCrossEncoder(cross_encoder_with_onnx, ONNX_FP32).logits(PAIRS), torch_, atol=1e-4)
    assert np.allclose(OnnxCrossEncoder(cross_encoder_with_onnx, ONNX_INT8).logits(PAIRS), torch_, atol=0.1)
    probs = reranker.score(PAIRS[0][0], [PAIRS[0][1], "unrelated"])
    assert probs.shape == (2,) and ((probs > 0) & (probs < 1)).all()


def test_a_broken_onnx_file_is_reported_and_the_torch_weights_are_used(
    cross_encoder_with_onnx: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import shutil

    from sextant.kb.rerank import ONNX_FP32

    folder = tmp_path / "model"
    shutil.copytree(cross_encoder_with_onnx, folder)
    (folder / ONNX_FP32).write_bytes(b"not an onnx model")
    with caplog.at_level("WARNING"):
        reranker = Reranker(str(folder))
    assert reranker.active and "torch (its ONNX model could not be loaded" in reranker.state.detail
    assert any("ONNX model could not be loaded" in r.getMessage() for r in caplog.records)
