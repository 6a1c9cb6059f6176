"""Greedy decoding that asks the grammar about one token first, against llama.cpp's own chain, on SmolLM2-135M."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import llama_cpp
import numpy as np
import pytest
from llama_cpp import Llama, LlamaGrammar

from sextant.llm.llama_greedy import GreedyGrammarSampler, GreedyLlama
from tests.llm.conftest import loaded
from tests.llm.llama_replies import QUESTIONS, STATEMENTS, reply

# Words no model would choose unprompted: most of their tokens are ones the grammar must force.
UNLIKELY = {
    "type": "object",
    "properties": {"animal": {"type": "string", "enum": ["xylophone-quokka", "zebra 42"]}},
    "required": ["animal"],
}


@pytest.fixture(scope="module")
def runtimes(smollm2: Path) -> Iterator[dict[str, Llama]]:
    with loaded(Llama, smollm2) as chain, loaded(GreedyLlama, smollm2) as greedy:
        yield {"chain": chain, "greedy": greedy}


@pytest.mark.parametrize("question", QUESTIONS)
@pytest.mark.parametrize("schema", [STATEMENTS, UNLIKELY, None], ids=["statements", "forced-words", "no-grammar"])
def test_the_reply_is_the_chains_token_for_token(
    runtimes: dict[str, Llama], question: str, schema: dict[str, Any] | None
) -> None:
    greedy = reply(runtimes["greedy"], question, schema)
    assert greedy == reply(runtimes["chain"], question, schema)
    assert greedy.strip()


def test_a_token_the_grammar_rejects_gives_way_to_the_best_it_allows(runtimes: dict[str, Llama]) -> None:
    llama = runtimes["greedy"]
    llama.reset()
    llama.eval(llama.tokenize(b"The capital of France is"))
    logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llama.ctx, -1), shape=(llama.n_vocab(),))
    raw = int(np.argmax(logits))
    sampler = GreedyGrammarSampler(llama._model.vocab, llama.n_vocab(), LlamaGrammar.from_string('root ::= "zebra"'))
    token = sampler.sample(llama._ctx, -1)
    sampler.close()
    assert raw != token  # the model's own choice was refused ...
    assert b"zebra".startswith(llama.detokenize([token]))  # ... for the best token the grammar allows
    allowed = [t for t in range(llama.n_vocab()) if b"zebra".startswith(llama.detokenize([t]) or b"#")]
    assert token == max(allowed, key=lambda t: logits[t])


def test_sampling_with_a_temperature_keeps_the_librarys_chain(runtimes: dict[str, Llama]) -> None:
    llama = runtimes["greedy"]
    assert isinstance(llama._init_sampler(temp=0.0), GreedyGrammarSampler)
    assert not isinstance(llama._init_sampler(temp=0.7), GreedyGrammarSampler)
    assert not isinstance(llama._init_sampler(temp=0.0, repeat_penalty=1.1), GreedyGrammarSampler)
    seeded = reply(runtimes["greedy"], QUESTIONS[0], STATEMENTS, temperature=0.7, seed=5)
    assert seeded == reply(runtimes["chain"], QUESTIONS[0], STATEMENTS, temperature=0.7, seed=5)
