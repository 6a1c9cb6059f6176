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

STATEMENTS = {
    "type": "object",
    "properties": {
        "statements": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "text": {"type": "string"},
                    "evidence": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "passage": {"type": "integer", "enum": [1, 2, 3]},
                                "quote": {"type": "string", "maxLength": 120},
                            },
                            "required": ["passage", "quote"],
                        },
                    },
                },
                "required": ["text", "evidence"],
            },
        }
    },
    "required": ["statements"],
}
# Words no model would choose unprompted: most of their tokens are ones the grammar must force.
UNLIKELY = {
    "type": "object",
    "properties": {"animal": {"type": "string", "enum": ["xylophone-quokka", "zebra 42"]}},
    "required": ["animal"],
}
PASSAGES = (
    "[1] Descale the espresso machine every two months if the water is hard. [2] A sourdough loaf needs 75 percent "
    "hydration. [3] Aquarium filters are rinsed in tank water once a month."
)
QUESTIONS = ("How often is the espresso machine descaled?", "How wet is sourdough dough?", "Who won the 1998 cup?")


@pytest.fixture(scope="module")
def runtimes(smollm2: Path) -> Iterator[dict[str, Llama]]:
    with loaded(Llama, smollm2) as chain, loaded(GreedyLlama, smollm2) as greedy:
        yield {"chain": chain, "greedy": greedy}


def reply(llama: Llama, question: str, schema: dict[str, Any] | None, **options: Any) -> str:
    response_format: Any = {"type": "json_object", "schema": schema} if schema is not None else None
    completion: Any = llama.create_chat_completion(
        messages=[
            {"role": "system", "content": "Answer from the passages, in JSON."},
            {"role": "user", "content": f"{PASSAGES}\n\nQuestion: {question}"},
        ],
        response_format=response_format,
        max_tokens=96,
        **({"temperature": 0.0} | options),
    )
    return str(completion["choices"][0]["message"]["content"])


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
