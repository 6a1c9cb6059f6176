"""The local open-weights model in process, through llama.cpp (``llama-cpp-python``).

llama.cpp is synchronous: each turn runs in the model's one worker thread, which hands stream chunks to the
event loop as they come; closing the stream sets a flag the worker checks after every token, and the close
waits for the worker, so generation has stopped when ``aclose()`` returns. Decoding is greedy: the same
question over the same passages gets the same answer, and small models wander less. llama.cpp is reached
through ``llama_runtime`` alone, which decodes with the strategies ``product_strategies`` composes.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncGenerator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, cast

from sextant.llm.chat import ChatEvent, ChatRequest, ModelError, Usage
from sextant.llm.llama_runtime import Compose, LlamaRuntime, Strategies
from sextant.llm.llama_strategies import GreedyDecoding, PromptLookupDrafting, SystemTurnPrefix
from sextant.llm.model_files import model_name, resolve, verify
from sextant.llm.openai_messages import (
    TurnAssembler,
    call_without_arguments,
    carries_tokens,
    chat_body,
    forced_tool,
    json_body,
    parse_json_reply,
)
from sextant.llm.settings import ModelSettings
from sextant.llm.statements import MAX_QUOTE_CHARS
from sextant.llm.writer_choice import writer

log = logging.getLogger(__name__)

# Generating a token is a small step that one thread does as fast as two that must wait for each other at
# every operation (25 against 19 tokens/s idle, 25 against 21 beside a busy process: learning/local-threads.md);
# reading the prompt, a batch, still uses every thread of the setting.
DECODE_THREADS = 1
# How long the grammar lets a quote run; the parser drops a last word the grammar may have forced near it.
# A 60-character cap (run 6) made the 0.5B model's first statement come 1.36x sooner (4.34 against 5.90 s),
# but 15 answers of 30 stood on their labelled evidence against 17 with the full length, and the README's
# own question lost its answer (learning/agent.md, run 7): quotes keep the full length.
QUOTE_MAX_CHARS = MAX_QUOTE_CHARS
# Attention computed in tiles: the 1.5B writer's grounded turn 1.13x faster alone, 1.51x with drafts against
# 1.26x without it; 1 reply of 10 changed (learning/agent.md, run 23). The answer check, reading in a context
# copied from the writer's, reads with it too.
FLASH_ATTENTION = True
# Room for the system prompt, a few rounds of five passages and the answer; the models allow more, but the
# KV cache grows with it.
CONTEXT_TOKENS = 8192


class LlamaModel:
    """A GGUF model run by llama.cpp in this process; see ``ChatModel``."""

    calls_tools_itself = False
    priced = False

    def __init__(self, llama: LlamaRuntime, name: str, max_output_tokens: int = 1024) -> None:
        self.name = name
        self.tokens_generated = 0  # since load, counted by the worker: what a closed stream cost
        self._llama = llama
        self._max_output_tokens = max_output_tokens
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="llama")

    @classmethod
    def from_settings(cls, settings: ModelSettings, *, checker: str | None = None) -> LlamaModel:
        """Resolve ``SEXTANT_LOCAL_MODEL``, verify a known model's sha256, and load it; ``checker`` is the model the
        answer check will load beside it, if any (``auto`` takes it into account).

        Raises:
            ModelFileError: the file is missing (the message names the ``sextant-models fetch`` command) or
                does not match its pinned hash.
            ModelError: llama.cpp could not load the file.
        """
        chosen = writer(settings, checker)
        llama, name = load_gguf(chosen.model, settings.model_files_dir(), settings.threads)
        log.info("the local model is %s (%s)", name, chosen.reason)
        return cls(llama, name, settings.max_output_tokens)

    @property
    def llama(self) -> LlamaRuntime:
        """The loaded llama.cpp model: another reader of the same file shares its weights (the answer check)."""
        return self._llama

    async def stream(self, request: ChatRequest) -> AsyncGenerator[ChatEvent, None]:
        """One turn; close the iterator (``aclose``) to stop generation at once."""
        tool = forced_tool(request)
        if tool is not None and (immediate := call_without_arguments(tool)) is not None:
            yield immediate
            return
        body = chat_body(request, "json_object", max_quote_chars=QUOTE_MAX_CHARS)
        assembler = TurnAssembler(request, quote_cap=QUOTE_MAX_CHARS)
        loop = asyncio.get_running_loop()
        chunks: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        stop = threading.Event()

        def emit(chunk: dict[str, Any] | None) -> None:
            loop.call_soon_threadsafe(chunks.put_nowait, chunk)

        job = loop.run_in_executor(self._worker, self._generate, body, emit, stop)
        try:
            while (chunk := await chunks.get()) is not None:
                for event in assembler.add(chunk):
                    yield event
            context_tokens, output_tokens = await job
        finally:
            stop.set()
            # Wait for the worker even when cancelled: the next turn must not find llama.cpp mid-generation.
            await asyncio.shield(_settled(job))
        yield assembler.finish(Usage(input_tokens=max(context_tokens - output_tokens, 0), output_tokens=output_tokens))

    async def complete_json(self, system: str, prompt: str, schema: dict[str, Any]) -> tuple[dict[str, Any], Usage]:
        """One schema-constrained completion; raises ``ModelError`` on a reply that is cut off or invalid."""
        body = json_body(system, prompt, schema, "json_object", self._max_output_tokens)
        loop = asyncio.get_running_loop()
        reply = await loop.run_in_executor(self._worker, self._complete, body)
        usage = reply["usage"]
        parsed = parse_json_reply(reply["choices"][0]["message"]["content"] or "", schema)
        return parsed, Usage(input_tokens=usage["prompt_tokens"], output_tokens=usage["completion_tokens"])

    async def aclose(self) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self._worker.shutdown)
        self._llama.close()

    def _generate(
        self, body: dict[str, Any], emit: Callable[[dict[str, Any] | None], None], stop: threading.Event
    ) -> tuple[int, int]:
        """Worker thread: stream one completion into ``emit``; returns (tokens in context, tokens generated)."""
        generated = 0
        try:
            stream = cast(
                Iterator[dict[str, Any]],
                self._llama.create_chat_completion(**body, stream=True, temperature=0.0),
            )
            for chunk in stream:
                if carries_tokens(chunk):
                    generated += 1
                    self.tokens_generated += 1
                if stop.is_set():
                    break
                emit(chunk)
            return self._llama.n_tokens, generated
        except ValueError as error:  # llama.cpp's word for a prompt longer than the context
            raise ModelError(f"{self.name}: {error}") from error
        finally:
            emit(None)

    def _complete(self, body: dict[str, Any]) -> dict[str, Any]:
        try:
            reply = cast(dict[str, Any], self._llama.create_chat_completion(**body, temperature=0.0))
        except ValueError as error:
            raise ModelError(f"{self.name}: {error}") from error
        self.tokens_generated += reply["usage"]["completion_tokens"]
        return reply


def product_strategies(runtime: LlamaRuntime) -> Strategies:
    """Greedy steps that ask the grammar about one token where they can, a reply that depends on the prompt alone,
    not on the prompts before it (the cache keeps the system turn), and words copied from the prompt checked several
    tokens to a pass; ``bench/grounded_replay.py`` composes fewer of them for reference."""
    return Strategies(GreedyDecoding(), SystemTurnPrefix.of(runtime), PromptLookupDrafting())


def load_gguf(
    model: str, models_dir: Path, threads: int, context: int = CONTEXT_TOKENS, compose: Compose = product_strategies
) -> tuple[LlamaRuntime, str]:
    """A known model name or a .gguf path, resolved, its sha256 verified when it is known, loaded with the
    strategies ``compose`` gives it; and its name.

    Raises:
        ModelFileError: the file is missing (the message names the ``sextant-models fetch`` command) or does
            not match its pinned hash.
        ModelError: llama.cpp could not load the file, or the installed llama-cpp-python is not the pinned one
            (``LlamaVersionError``).
    """
    path, spec = resolve(model, models_dir)
    if spec is not None:
        verify(path, spec.sha256)
    else:
        log.warning("%s is not a known model: loading it without a pinned sha256", path)
    try:
        llama = LlamaRuntime(
            model_path=str(path),
            compose=compose,
            n_ctx=context,
            n_threads=DECODE_THREADS,
            n_threads_batch=threads,
            flash_attn=FLASH_ATTENTION,
            verbose=False,
        )
    except ValueError as error:
        raise ModelError(f"llama.cpp could not load {path}: {error}") from error
    return llama, model_name(path, spec)


async def _settled(job: asyncio.Future[Any]) -> None:
    try:
        await job
    except Exception:  # already raised to the reader, or nobody is reading any more
        return
