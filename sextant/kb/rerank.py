"""Cross-encoder reranking, optional and never fatal.

``SEXTANT_RERANKER`` names a sentence-transformers CrossEncoder folder (or hub name). When the folder
holds an ONNX export in the precision asked for (``SEXTANT_RERANK_PRECISION``: ``onnx/model.onnx``
for fp32, ``onnx/model_qint8.onnx`` for int8, both written by ``sextant-train-reranker``), that is
what runs, under onnxruntime; otherwise the CrossEncoder runs under torch. fp32 is the default: int8
is faster but cost the trained six-layer model about 0.02 nDCG@10 (learning/reranker.md).

A configured cross-encoder that cannot be loaded is reported once on stderr and in ``kb_stats``;
search then keeps the fusion order. An ONNX file that cannot be loaded is reported the same way and
the folder's torch weights are used instead: the state says which one runs.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np
import numpy.typing as npt

log = logging.getLogger(__name__)

ONNX_FP32 = Path("onnx") / "model.onnx"
ONNX_INT8 = Path("onnx") / "model_qint8.onnx"
ONNX_FILES = {"fp32": ONNX_FP32, "int8": ONNX_INT8}


@dataclass(frozen=True, slots=True)
class RerankerState:
    """What ``kb_stats`` reports: which model, and whether it is in use."""

    name: str | None
    active: bool
    detail: str


class _Backend(Protocol):
    def logits(self, pairs: list[tuple[str, str]]) -> npt.NDArray[np.float32]: ...


class Reranker:
    """A cross-encoder scoring (query, passage) pairs as probabilities."""

    def __init__(self, name: str | None, *, threads: int = 1, precision: Literal["fp32", "int8"] = "fp32") -> None:
        self.name = name
        self._backend: _Backend | None = None
        if not name:
            self.state = RerankerState(None, False, "not configured (SEXTANT_RERANKER unset): ordered by fusion")
            return
        local = Path(name).expanduser()
        runs = "torch"
        if (local / ONNX_FILES[precision]).is_file():
            try:
                self._backend = OnnxCrossEncoder(local, ONNX_FILES[precision], threads=threads)
                runs = f"onnx {precision}"
            except Exception as exc:  # the folder's torch weights can still serve
                log.warning(
                    "reranker %r: its ONNX model could not be loaded (%s: %s); using torch",
                    name,
                    type(exc).__name__,
                    exc,
                )
                runs = f"torch (its ONNX model could not be loaded: {type(exc).__name__})"
        if self._backend is None:
            try:
                self._backend = TorchCrossEncoder(str(local) if local.is_dir() else name, threads=threads)
            except Exception as exc:  # any load failure must leave search working, by fusion
                detail = f"could not be loaded ({type(exc).__name__}: {exc}); ordered by fusion instead"
                log.warning("reranker %r %s", name, detail)
                self.state = RerankerState(name, False, detail)
                return
        self.state = RerankerState(name, True, f"in use ({runs}): top fused candidates are re-scored")

    @property
    def active(self) -> bool:
        return self._backend is not None

    def score(self, query: str, passages: Sequence[str]) -> npt.NDArray[np.float32]:
        """Relevance probabilities in [0, 1], one per passage (a sigmoid over the model's logit)."""
        if self._backend is None:
            raise RuntimeError("no reranker is loaded; check .active first")
        if not passages:
            return np.zeros(0, np.float32)
        logits = self._backend.logits([(query, p) for p in passages])
        return (1.0 / (1.0 + np.exp(-logits))).astype(np.float32)


class TorchCrossEncoder:
    """A sentence-transformers CrossEncoder on the CPU."""

    def __init__(self, name: str, *, threads: int = 1, max_length: int | None = None) -> None:
        import torch
        from sentence_transformers import CrossEncoder

        torch.set_num_threads(threads)
        self.model = CrossEncoder(name, device="cpu", max_length=max_length)

    def logits(self, pairs: list[tuple[str, str]]) -> npt.NDArray[np.float32]:
        import torch

        raw = self.model.predict(pairs, activation_fn=torch.nn.Identity(), show_progress_bar=False, batch_size=64)
        return np.asarray(raw, dtype=np.float32).reshape(-1)


class OnnxCrossEncoder:
    """One of the folder's ONNX models under onnxruntime, tokenised with the folder's own tokenizer.

    Pairs are cut to the length the model was trained at (the tokenizer's ``model_max_length``),
    longest side first, as the torch path does.
    """

    def __init__(self, folder: Path, file: Path, *, threads: int = 1, max_length: int | None = None) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(folder / file), options, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.max_length = max_length or _trained_length(folder)
        tokenizer: Any = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tokenizer.enable_truncation(self.max_length, strategy="longest_first")
        tokenizer.enable_padding(pad_id=tokenizer.token_to_id("[PAD]") or 0, pad_token="[PAD]")
        self.tokenizer = tokenizer

    def logits(self, pairs: list[tuple[str, str]]) -> npt.NDArray[np.float32]:
        encodings = self.tokenizer.encode_batch(pairs)
        feed = {
            "input_ids": np.asarray([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.asarray([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.asarray([e.type_ids for e in encodings], dtype=np.int64),
        }
        (out,) = self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})
        return np.asarray(out, dtype=np.float32).reshape(-1)


def _trained_length(folder: Path) -> int:
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    return int(config.get("model_max_length") or 512)
