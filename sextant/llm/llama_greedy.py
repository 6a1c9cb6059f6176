"""Greedy decoding under a grammar that is asked about the model's own choice first.

llama.cpp's sampler chain runs the grammar over the whole vocabulary (151,936 tokens for Qwen2.5) before it
takes the most likely token, and for the 0.5B model that cost about as much per token as the forward pass
(learning/agent.md, run 8). Greedy decoding needs only the most likely *allowed* token: when the model's top
token is allowed, which it is for most tokens of a reply written in the grammar's shape, it is the answer,
and the grammar judges that one token. Only a rejected choice sends the whole vocabulary through the
grammar. The tokens are the chain's, one for one (``tests/llm/test_llama_greedy.py``).

This replaces ``Llama._init_sampler``, a private method of the pinned ``llama-cpp-python``; any other
sampling (a temperature, penalties, logits processors) keeps the library's chain.
"""

from __future__ import annotations

import ctypes
from typing import Any

import llama_cpp
import numpy as np
from llama_cpp import Llama, LlamaGrammar

_REJECTED = -np.inf


class GreedyGrammarSampler:
    """The most likely token the grammar allows, with the grammar's state advanced by it."""

    def __init__(self, vocab: Any, n_vocab: int, grammar: LlamaGrammar | None) -> None:
        self._n_vocab = n_vocab
        self._grammar = (
            llama_cpp.llama_sampler_init_grammar(vocab, grammar._grammar.encode(), grammar._root.encode())
            if grammar is not None
            else None
        )
        self._one = (llama_cpp.llama_token_data * 1)()
        self._one_array = llama_cpp.llama_token_data_array(data=self._one, size=1, selected=-1, sorted=False)
        self._every: ctypes.Array[llama_cpp.llama_token_data] | None = None  # built on the first rejection

    def sample(self, ctx: llama_cpp._internals.LlamaContext, idx: int = -1) -> int:
        logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(ctx.ctx, idx), shape=(self._n_vocab,))
        token = int(np.argmax(logits))
        if self._grammar is None:
            return token
        if not self._allows(token, float(logits[token])):
            token = self._best_allowed(logits)
        llama_cpp.llama_sampler_accept(self._grammar, token)
        return token

    def _allows(self, token: int, logit: float) -> bool:
        self._one[0] = llama_cpp.llama_token_data(token, logit, 0.0)
        self._one_array.size, self._one_array.selected = 1, -1
        llama_cpp.llama_sampler_apply(self._grammar, ctypes.byref(self._one_array))
        return bool(self._one[0].logit != _REJECTED)

    def _best_allowed(self, logits: np.ndarray[Any, np.dtype[np.float32]]) -> int:
        if self._every is None:
            self._every = (llama_cpp.llama_token_data * self._n_vocab)()
        table = np.ctypeslib.as_array(self._every)
        table["id"], table["logit"], table["p"] = np.arange(self._n_vocab), logits, 0.0
        every = llama_cpp.llama_token_data_array(data=self._every, size=self._n_vocab, selected=-1, sorted=False)
        llama_cpp.llama_sampler_apply(self._grammar, ctypes.byref(every))
        return int(table["id"][np.argmax(table["logit"])])

    def close(self) -> None:
        if self._grammar is not None:
            llama_cpp.llama_sampler_free(self._grammar)
            self._grammar = None

    def __del__(self) -> None:
        self.close()


class GreedyLlama(Llama):
    """``Llama`` whose greedy, penalty-free sampling asks the grammar about one token where it can."""

    def _init_sampler(self, *args: Any, **options: Any) -> Any:
        neutral = (
            not args  # the library passes its options by name
            and options.get("temp") == 0.0
            and options.get("repeat_penalty", 1.0) == 1.0
            and options.get("frequency_penalty", 0.0) == 0.0
            and options.get("presence_penalty", 0.0) == 0.0
            and options.get("logits_processor") is None
        )
        if not neutral:
            return super()._init_sampler(*args, **options)
        return GreedyGrammarSampler(self._model.vocab, self._n_vocab, options.get("grammar"))
