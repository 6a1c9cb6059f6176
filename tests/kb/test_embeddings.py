from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from sextant.kb.embeddings import (
    Embedder,
    EmbedderError,
    QueryEncoderRecord,
    load_query_encoder,
    resolve_model_path,
    write_query_encoder_record,
)


def test_the_default_name_resolves_to_the_packaged_copy() -> None:
    path = Path(resolve_model_path("all-MiniLM-L6-v2"))
    assert path.is_dir() and (path / "modules.json").is_file()
    assert resolve_model_path("sentence-transformers/all-MiniLM-L6-v2") == str(path)
    assert resolve_model_path("some-org/other-model") == "some-org/other-model"


def test_vectors_are_unit_length_and_similar_texts_are_close(embedder: Embedder) -> None:
    v = embedder.embed(["Descale the espresso machine.", "Remove limescale from the coffee maker.", "Bees swarm."])
    assert v.shape == (3, embedder.dim) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2]
    assert embedder.embed([]).shape == (0, embedder.dim)


def test_token_spans_are_exact_offsets_without_truncation(embedder: Embedder) -> None:
    text = "Café owners descale machines; " * 100  # far past the 256-token window
    spans = embedder.token_spans(text)
    assert len(spans) == embedder.count_tokens(text) > 256
    assert text[spans.starts[0] : spans.ends[0]] == "Café"  # offsets point into the original text
    assert all(0 <= s < e <= len(text) for s, e in zip(spans.starts, spans.ends, strict=True))
    assert embedder.max_tokens == 254  # the model's 256 less [CLS] and [SEP]


def test_an_unloadable_embedder_says_what_to_configure(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")
    with pytest.raises(EmbedderError, match="SEXTANT_EMBEDDER"):
        Embedder(str(tmp_path))


def test_a_model_s_query_and_document_prompts_are_each_used_on_their_side(tmp_path: Path, embedder: Embedder) -> None:
    folder = _copy_of_the_packaged_model(tmp_path / "prompted")
    config = folder / "config_sentence_transformers.json"
    declared = json.loads(config.read_text(encoding="utf-8"))
    config.unlink()  # a symlink into the package: replaced, never written through
    declared["prompts"] = {"query": "query: ", "document": "passage: "}
    config.write_text(json.dumps(declared), encoding="utf-8")
    prompted = Embedder(str(folder))
    np.testing.assert_allclose(prompted.embed_query("descaling"), embedder.embed(["query: descaling"])[0], atol=1e-6)
    np.testing.assert_allclose(prompted.embed(["descaling"]), embedder.embed(["passage: descaling"]), atol=1e-6)
    # A model without prompts embeds a question as it embeds a passage.
    np.testing.assert_allclose(embedder.embed_query("descaling"), embedder.embed(["descaling"])[0], atol=1e-6)


def test_bf16_weights_give_unit_float32_vectors_close_to_fp32(embedder: Embedder) -> None:
    texts = ["Descale the espresso machine every two months.", "Bees swarm in spring."]
    half = Embedder("all-MiniLM-L6-v2", precision="bf16")
    v = half.embed(texts)
    assert v.dtype == np.float32 and half.precision == "bf16"
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert np.all(np.sum(v * embedder.embed(texts), axis=1) > 0.99)


def _copy_of_the_packaged_model(folder: Path) -> Path:
    shutil.copytree(resolve_model_path("all-MiniLM-L6-v2"), folder, copy_function=os.symlink)
    return folder


def test_a_query_encoder_for_the_store_s_embedder_embeds_questions(tmp_path: Path, embedder: Embedder) -> None:
    folder = _copy_of_the_packaged_model(tmp_path / "query")
    write_query_encoder_record(folder, QueryEncoderRecord(document_embedder=embedder.name, dim=embedder.dim))
    encoder = load_query_encoder(str(folder), embedder)
    assert encoder.name == str(folder)
    np.testing.assert_allclose(encoder.embed(["descaling"]), embedder.embed(["descaling"]), atol=1e-6)


def test_a_folder_that_is_not_a_query_encoder_is_refused(tmp_path: Path, embedder: Embedder) -> None:
    folder = _copy_of_the_packaged_model(tmp_path / "plain")
    with pytest.raises(EmbedderError, match=r"is not a query encoder.*sextant-train-query-encoder"):
        load_query_encoder(str(folder), embedder)


def test_a_query_encoder_trained_against_another_embedder_is_refused(tmp_path: Path, embedder: Embedder) -> None:
    folder = _copy_of_the_packaged_model(tmp_path / "other")
    write_query_encoder_record(folder, QueryEncoderRecord(document_embedder="models/embedder-nfcorpus", dim=384))
    with pytest.raises(EmbedderError, match="trained against embedder 'models/embedder-nfcorpus'"):
        load_query_encoder(str(folder), embedder)
