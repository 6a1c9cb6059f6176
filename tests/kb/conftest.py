"""A second real embedder, for moving a store from one embedder to another (``sextant-kb-migrate``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sextant.kb.embeddings import Embedder, load_embedder, resolve_model_path


def build_other_embedder(folder: Path) -> Path:
    """The packaged all-MiniLM-L6-v2 followed by a seeded 384 -> 128 projection, saved as a model folder: another
    sentence-transformers configuration (other vectors, another dimension) that loads offline like the first."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Dense

    model = SentenceTransformer(resolve_model_path("all-MiniLM-L6-v2"), device="cpu")
    torch.manual_seed(0)
    model.append(Dense(384, 128, activation_function=torch.nn.Identity()))
    model.save(str(folder))
    return folder


@pytest.fixture(scope="session")
def other_embedder(tmp_path_factory: pytest.TempPathFactory) -> Embedder:
    return load_embedder(str(build_other_embedder(tmp_path_factory.mktemp("embedder") / "minilm-128")))
