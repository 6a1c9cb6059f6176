"""The one place that reaches into llama-cpp-python; how the local model decodes is told to it as strategies.

The library's ``Llama`` completes a chat, but what the local model needs below that is private: choosing a
token without the library's sampler chain, deciding what the KV cache keeps between prompts, asking for logits
at a draft's positions, a second context over weights already loaded. Those private parts change between
releases, so they are used here only, against the pinned version, which a runtime checks before it loads
anything (``check_version``). The strategies (``sextant.llm.llama_strategies``) use only this module's
interface, and ``llama_local`` composes them.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import version
from typing import Any, Protocol

# llama.cpp's threads meet at an OpenMP barrier after every operation, and libgomp's waiting threads spin by
# default: when anything else holds a core, the spinners starve the one thread with work left, and the 0.5B
# model fell from 15 to 0.2 tokens/s on a busy 2-core machine (learning/local-threads.md). Sleeping waits
# halve two threads' idle speed, which is why one thread generates (``llama_local.DECODE_THREADS``). libgomp
# reads this once, as it loads with llama_cpp; a value the user set wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import llama_cpp
import numpy as np
from llama_cpp import Llama, LlamaGrammar, llama_context_params
from llama_cpp._internals import LlamaBatch, LlamaContext
from llama_cpp.llama_speculative import LlamaDraftModel

from sextant.llm.chat import ModelError

# pyproject.toml's pin of the [local] extra (tests/llm/test_llama_runtime.py keeps the two the same).
PINNED_VERSION = "0.3.36"
_REJECTED = -np.inf


class LlamaVersionError(ModelError):
    """The installed llama-cpp-python is not the version this module was written against."""


def check_version() -> None:
    """Raise ``LlamaVersionError`` unless the installed llama-cpp-python is ``PINNED_VERSION``."""
    installed = version("llama-cpp-python")
    if installed != PINNED_VERSION:
        raise LlamaVersionError(
            f"the local model's runtime is written against llama-cpp-python {PINNED_VERSION}, whose private parts "
            f"it uses, and {installed} is installed: install llama-cpp-python=={PINNED_VERSION} (the [local] extra)"
        )


class Decoding(Protocol):
    """How the next token is chosen: ``None`` leaves it to the library's sampler chain."""

    def sampler(self, runtime: LlamaRuntime, options: Mapping[str, Any]) -> GreedyStep | None:
        """``options`` are the library's sampling options, by name, for one generation."""
        ...


class Prefix(Protocol):
    """What the KV cache holds before the library matches a prompt against it."""

    def prepare(self, runtime: LlamaRuntime, prompt: Sequence[int]) -> None: ...


class Drafting(Protocol):
    """Tokens guessed ahead, which the library's generation loop checks in one pass."""

    @property
    def drafter(self) -> LlamaDraftModel:
        """What the library's loop calls with the tokens so far for the next draft."""
        ...

    def reads_every_position(self, batch: int) -> bool:
        """Whether a batch of ``batch`` tokens is a draft, whose every position needs the model's choice."""
        ...


@dataclass(frozen=True)
class Strategies:
    """A runtime's strategies; with none, it decodes exactly as the library's ``Llama`` does."""

    decoding: Decoding | None = None
    prefix: Prefix | None = None
    drafting: Drafting | None = None


Compose = Callable[["LlamaRuntime"], Strategies]


class GreedyStep:
    """The most likely token the grammar allows, with the grammar's state advanced by it.

    The grammar judges the model's top token alone where it can, the whole vocabulary only when it refuses
    it (``sextant.llm.llama_strategies.GreedyDecoding`` says why).
    """

    def __init__(self, runtime: LlamaRuntime, grammar: LlamaGrammar | None) -> None:
        self._n_vocab = runtime.n_vocab()
        vocab = runtime._model.vocab
        self._grammar = (
            llama_cpp.llama_sampler_init_grammar(vocab, grammar._grammar.encode(), grammar._root.encode())
            if grammar is not None
            else None
        )
        self._one = (llama_cpp.llama_token_data * 1)()
        self._one_array = llama_cpp.llama_token_data_array(data=self._one, size=1, selected=-1, sorted=False)
        self._every: ctypes.Array[llama_cpp.llama_token_data] | None = None  # built on the first rejection

    def choose(self, logits: np.ndarray[Any, np.dtype[np.float32]]) -> int:
        """The token for ``logits`` (one position's, over the vocabulary)."""
        token = int(np.argmax(logits))
        if self._grammar is None:
            return token
        if not self._allows(token, float(logits[token])):
            token = self._best_allowed(logits)
        llama_cpp.llama_sampler_accept(self._grammar, token)
        return token

    def sample(self, ctx: LlamaContext, idx: int = -1) -> int:
        """The library's call to its sampler, once a token: ``idx`` counts from the end of the last batch."""
        return self.choose(_logits(ctx, idx, self._n_vocab))

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


class PromptReader:
    """Reads a whole prompt from an empty cache and gives the logits after its last token; generates nothing."""

    def __init__(self, runtime: LlamaRuntime, context: LlamaContext, batch: LlamaBatch, *, own: bool) -> None:
        self._runtime = runtime
        self._context, self._batch = context, batch
        self._own = own  # the runtime's own context, which generation also uses, rather than one of the reader's

    def last_logits(self, tokens: Sequence[int]) -> np.ndarray[Any, np.dtype[np.float32]]:
        if self._own:
            self._runtime.reset()  # the cache is about to hold other tokens than the runtime read
        self._context.kv_cache_clear()
        size = self._runtime.n_batch
        for start in range(0, len(tokens), size):
            self._batch.set_batch(tokens[start : start + size], n_past=start, logits_all=False)
            self._context.decode(self._batch)
        return np.ctypeslib.as_array(
            llama_cpp.llama_get_logits(self._context.ctx), shape=(self._runtime.n_vocab(),)
        ).copy()

    def close(self) -> None:
        """Free a context of the reader's own; the runtime's stays with the runtime."""
        if not self._own:
            self._batch.close()
            self._context.close()


class LlamaRuntime(Llama):
    """``Llama`` whose generation defers to its ``Strategies`` at the three points they need.

    Subclassed because ``create_chat_completion`` reaches those points only through methods of its own
    instance (``_init_sampler``, ``generate``, ``eval``); with no strategies, each is the library's.
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> LlamaRuntime:
        # Checked before the instance exists: ``Llama.__del__`` fails on one whose constructor never ran.
        check_version()
        return super().__new__(cls)

    def __init__(self, *args: Any, compose: Compose | None = None, **kwargs: Any) -> None:
        """The library's arguments, and ``compose``, which gives the loaded runtime its strategies."""
        super().__init__(*args, **kwargs)
        self.strategies = compose(self) if compose is not None else Strategies()
        if self.strategies.drafting is not None:
            # Set after the library's constructor: given there, it keeps logits at every position of every prompt.
            self.draft_model = self.strategies.drafting.drafter

    def greedy_step(self, grammar: LlamaGrammar | None) -> GreedyStep:
        """A greedy step under ``grammar`` (none: the top token), for one generation: it keeps the grammar's state."""
        return GreedyStep(self, grammar)

    def logits_at(self, idx: int = -1) -> np.ndarray[Any, np.dtype[np.float32]]:
        """A copy of the logits at position ``idx`` of the last batch read (counted from its end when negative)."""
        return _logits(self._ctx, idx, self._n_vocab).copy()

    def cached_tokens(self) -> list[int]:
        """The tokens the KV cache holds, in order."""
        return self.input_ids[: self.n_tokens].tolist()

    def keep_cached(self, tokens: int) -> bool:
        """Drop all but the first ``tokens`` tokens from the cache; ``False``, and nothing dropped, where it can't."""
        if not self._ctx.kv_cache_seq_rm(-1, tokens, -1):
            return False
        self.n_tokens = tokens
        return True

    def evaluate(self, tokens: Sequence[int], *, every_position: bool = False) -> None:
        """Read ``tokens`` after the cached ones, with logits at the last position of each batch or at every one."""
        self._ctx.kv_cache_seq_rm(-1, self.n_tokens, -1)
        for start in range(0, len(tokens), self.n_batch):
            batch = tokens[start : start + self.n_batch]
            self._batch.set_batch(batch=batch, n_past=self.n_tokens, logits_all=every_position)
            self._ctx.decode(self._batch)
            self.input_ids[self.n_tokens : self.n_tokens + len(batch)] = batch
            self.n_tokens += len(batch)
            self._requires_eval = False

    def reader(self) -> PromptReader:
        """A prompt reader in this runtime's own context: what it reads replaces what the cache held."""
        return PromptReader(self, self._ctx, self._batch, own=True)

    def shared_reader(self, context_tokens: int) -> PromptReader:
        """A prompt reader in a context of its own, of ``context_tokens``, over these weights; close it when done."""
        params = llama_context_params.from_buffer_copy(self.context_params)
        params.n_ctx = context_tokens
        context = LlamaContext(model=self._model, params=params, verbose=False)
        batch = LlamaBatch(n_tokens=self.n_batch, embd=0, n_seq_max=1, verbose=False)
        return PromptReader(self, context, batch, own=False)

    # The three hooks ``create_chat_completion`` reaches through ``generate``.

    def _init_sampler(self, *args: Any, **options: Any) -> Any:
        # ``generate`` builds its sampler with this private method and calls the result's ``sample(ctx, idx)`` for
        # every token: the one point where a token can be chosen without the library's chain.
        decoding = self.strategies.decoding
        step = decoding.sampler(self, options) if decoding is not None and not args else None  # options come by name
        return step if step is not None else super()._init_sampler(*args, **options)

    def generate(self, tokens: Sequence[int], *args: Any, **kwargs: Any) -> Generator[int, Sequence[int] | None, None]:
        # The library reuses the longest prefix a prompt shares with the cache; the prefix strategy decides what the
        # cache holds before it looks.
        if self.strategies.prefix is not None:
            self.strategies.prefix.prepare(self, tokens)
        yield from super().generate(tokens, *args, **kwargs)

    def eval(self, tokens: Sequence[int]) -> None:
        # The library's generation loop reads each draft through ``eval``, which asks for the last position's logits
        # only, where checking a draft needs every position's.
        drafting = self.strategies.drafting
        if drafting is not None and drafting.reads_every_position(len(tokens)):
            self.evaluate(tokens, every_position=True)
        else:
            super().eval(tokens)


def _logits(ctx: LlamaContext, idx: int, n_vocab: int) -> np.ndarray[Any, np.dtype[np.float32]]:
    """A view of llama.cpp's logits at ``idx``: valid until the context reads again."""
    return np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(ctx.ctx, idx), shape=(n_vocab,))
