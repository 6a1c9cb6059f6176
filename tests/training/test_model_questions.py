"""The local model's questions about stored chunks: real llama.cpp on SmolLM2-135M, cached and resumed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from llama_cpp import Llama

from sextant.training.adapt import ChunkText
from sextant.training.model_questions import _question, asking, model_questions, prompt
from tests.llm.conftest import loaded

CHUNKS = [
    ChunkText(f"c{i}", f"d{i}", title, "", text)
    for i, (title, text) in enumerate(
        [
            ("Rose pruning", "Roses are pruned in late winter, before the buds begin to swell on the canes."),
            ("Bee swarms", "A swarm leaves the hive in late spring; a beekeeper can collect it in a box."),
            ("Bread proofing", "Dough proofs best in a warm kitchen until it has doubled in size, about an hour."),
            ("Bicycle chains", "A chain is cleaned with degreaser and oiled lightly after a wet ride."),
        ]
    )
]


class Asked:
    """The real model as the command asks it, counting what it is asked."""

    def __init__(self, llama: Llama) -> None:
        self.ask = asking(llama)
        self.prompts: list[str] = []

    def __call__(self, system: str, text: str) -> str:
        self.prompts.append(text)
        return self.ask(system, text)


@pytest.fixture(scope="module")
def llama(smollm2: Path) -> Iterator[Llama]:
    with loaded(Llama, smollm2) as model:
        yield model


def test_each_chunk_asked_is_cached_and_a_rerun_asks_only_the_rest(llama: Llama, tmp_path: Path) -> None:
    cache = tmp_path / "model-questions.jsonl"
    first = Asked(llama)
    questions = model_questions(CHUNKS, first, cache, count=2, seed=1)
    rows = [json.loads(line) for line in cache.read_text().splitlines()]
    assert len(first.prompts) == len(rows) >= 2  # a reply that is no question asks one chunk more
    assert {q.positives for q in questions} <= {(row["chunk"],) for row in rows if row["question"]}
    assert all(q.text.endswith("?") and q.source == "model" for q in questions)

    again = Asked(llama)
    assert model_questions(CHUNKS, again, cache, count=2, seed=1) == questions
    assert again.prompts == []  # all from the cache

    more = Asked(llama)
    model_questions(CHUNKS, more, cache, count=len(CHUNKS), seed=1)
    assert len(more.prompts) == len(CHUNKS) - len(rows)  # only the chunks not yet asked
    assert len(cache.read_text().splitlines()) == len(CHUNKS)


def test_a_line_cut_short_by_an_interruption_is_asked_again(llama: Llama, tmp_path: Path) -> None:
    cache = tmp_path / "model-questions.jsonl"
    model_questions(CHUNKS, Asked(llama), cache, count=len(CHUNKS), seed=1)
    lines = cache.read_text().splitlines()
    cache.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2])
    resumed = Asked(llama)
    model_questions(CHUNKS, resumed, cache, count=len(CHUNKS), seed=1)
    assert len(resumed.prompts) == 1
    finished = Asked(llama)
    model_questions(CHUNKS, finished, cache, count=len(CHUNKS), seed=1)
    assert finished.prompts == []  # the answer written after the cut line was read back


def test_only_a_question_of_a_question_s_length_counts() -> None:
    assert _question("Question: When are roses pruned?\nThey are pruned in winter.") == "When are roses pruned?"
    assert _question('"How long does dough proof in a warm kitchen?"') == "How long does dough proof in a warm kitchen?"
    assert _question("Roses are pruned in late winter.") is None
    assert _question("Why?") is None
    assert _question("") is None


def test_the_prompt_names_the_chunk_s_place_and_keeps_its_start() -> None:
    chunk = ChunkText("c", "d", "Rose pruning", "Winter", "word " * 1000)
    text = prompt(chunk)
    assert text.startswith("Passage (Rose pruning, Winter):\nword word")
    assert len(text) < 1300 and text.endswith("Write one question this passage answers.")
