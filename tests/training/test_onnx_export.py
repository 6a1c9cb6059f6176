"""The ONNX export of a CrossEncoder folder: fp32 and int8 files where the reranker looks, scoring as the torch
weights do on batches and lengths other than the export's example."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sextant.kb.embeddings import resolve_model_path
from sextant.kb.rerank import ONNX_FP32, ONNX_INT8, OnnxCrossEncoder, TorchCrossEncoder
from sextant.training.onnx_export import export_onnx

pytestmark = pytest.mark.slow

PAIRS = [
    ("descale", "Descale every eight weeks."),
    ("when do bees swarm", "Swarm control for bee colonies starts in May, and a queen leaves with half the bees."),
    ("grind", "Grind finer when the shot runs fast and coarser when it runs slow."),
]


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A two-layer, randomly initialised BERT scorer with MiniLM's tokenizer: exports in seconds."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    tokenizer = AutoTokenizer.from_pretrained(resolve_model_path("all-MiniLM-L6-v2"))
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
    )
    config.num_labels = 1
    config.initializer_range = 0.5  # weights wide enough that pairs score far apart
    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_both_precisions_are_written_where_the_reranker_looks_and_score_like_torch(tiny_cross_encoder: Path) -> None:
    fp32, int8 = export_onnx(tiny_cross_encoder)
    assert (fp32, int8) == (tiny_cross_encoder / ONNX_FP32, tiny_cross_encoder / ONNX_INT8)
    assert int8.stat().st_size < fp32.stat().st_size  # int8 weights
    # Three pairs of different lengths: batch and token axes are dynamic, not the export's 2 x 16.
    torch_logits = TorchCrossEncoder(str(tiny_cross_encoder)).logits(PAIRS)
    assert np.allclose(OnnxCrossEncoder(tiny_cross_encoder, ONNX_FP32).logits(PAIRS), torch_logits, atol=1e-4)
    # int8 weights move the logits; a reranker needs the order kept.
    int8_logits = OnnxCrossEncoder(tiny_cross_encoder, ONNX_INT8).logits(PAIRS)
    assert np.argsort(int8_logits).tolist() == np.argsort(torch_logits).tolist()


def test_exporting_again_replaces_the_files(tiny_cross_encoder: Path) -> None:
    fp32, _ = export_onnx(tiny_cross_encoder)
    fp32.write_bytes(b"stale")
    export_onnx(tiny_cross_encoder)
    assert OnnxCrossEncoder(tiny_cross_encoder, ONNX_FP32).logits(PAIRS[:1]).shape == (1,)
