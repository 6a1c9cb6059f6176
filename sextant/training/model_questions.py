"""Pseudo-questions the local model writes about stored chunks, cached so that a slow run resumes.

A title or a sentence copied from a chunk is text the stored vector already holds (``adapt``); a question
written about the chunk is not, and that is the step from a question to its passage that labelled training
teaches. On a CPU the 0.5B model takes about a second per chunk, so each answer is appended to a cache the
moment it is written: a rerun (after an interruption, or with a larger ``count``) asks only for what the
cache does not hold.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sextant.training.adapt import SOURCES, ChunkText, PseudoQuery

if TYPE_CHECKING:
    from llama_cpp import Llama

SYSTEM = "You write one question that the passage answers. Reply with the question only."
# The start of a chunk is enough to ask about, and keeps the prompt, most of the cost, short.
PASSAGE_CHARS = 1200
MIN_WORDS, MAX_WORDS = 4, 30
# A question is a line; room for a long one, not for the model to go on writing.
REPLY_TOKENS = 48

Ask = Callable[[str, str], str]  # (system, prompt) -> the model's reply


def asking(llama: Llama) -> Ask:
    """``llama``'s greedy chat reply, as ``model_questions`` asks for it."""

    def ask(system: str, prompt: str) -> str:
        messages: Any = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
        reply: Any = llama.create_chat_completion(messages=messages, temperature=0.0, max_tokens=REPLY_TOKENS)
        return str(reply["choices"][0]["message"]["content"] or "")

    return ask


def model_questions(
    chunks: Sequence[ChunkText],
    ask: Ask,
    cache: Path,
    count: int,
    seed: int,
    progress: Callable[[int, int], None] | None = None,
) -> list[PseudoQuery]:
    """Questions for up to ``count`` chunks (a seeded draw), each finding the chunk it was written about.

    A reply that is no question of a question's length is cached as none and that chunk is not asked again.
    """
    written, whole_lines = _read(cache)
    order = sorted(chunks, key=lambda c: c.id)
    random.Random(f"{seed}:model").shuffle(order)
    questions: list[PseudoQuery] = []
    cache.parent.mkdir(parents=True, exist_ok=True)
    with cache.open("a", encoding="utf-8") as out:
        if not whole_lines:
            out.write("\n")  # after a line cut short, the next answer starts a line of its own
        for chunk in order:
            if len(questions) == count:
                break
            if chunk.id not in written:
                written[chunk.id] = _question(ask(SYSTEM, prompt(chunk)))
                out.write(json.dumps({"chunk": chunk.id, "question": written[chunk.id]}) + "\n")
                out.flush()
            if written[chunk.id] is not None:
                questions.append(PseudoQuery(f"model:{chunk.id}", str(written[chunk.id]), (chunk.id,), "model"))
            if progress is not None:
                progress(len(questions), count)
    return questions


def add_source_arguments(parser: argparse.ArgumentParser) -> None:
    """``--sources`` (``adapt``'s and ``model``) and ``--model-questions``, as both question commands take them."""
    parser.add_argument(
        "--sources",
        nargs="+",
        choices=(*SOURCES, "model"),
        default=list(SOURCES),
        help="where questions come from (model: the local model writes them, one to three seconds a chunk on a CPU)",
    )
    parser.add_argument(
        "--model-questions", type=int, default=600, help="chunks the local model writes a question about (model)"
    )


def written_if_asked(chunks: Sequence[ChunkText], ns: argparse.Namespace, prog: str) -> list[PseudoQuery]:
    """The ``model`` source's pool for a command parsed with ``add_source_arguments``: none unless it is asked for.

    ``ns`` also carries ``out`` (the cache's folder), ``seed``, ``threads`` and ``log_every``.
    """
    if "model" not in ns.sources:
        return []
    return written_by_local_model(chunks, ns.out, ns.model_questions, ns.seed, ns.threads, ns.log_every, prog)


def written_by_local_model(
    chunks: Sequence[ChunkText], out: Path, count: int, seed: int, threads: int, log_every: int, prog: str
) -> list[PseudoQuery]:
    """The installed local model's questions for ``count`` chunks, resumed from ``<out>/model-questions.jsonl``."""
    from sextant.llm.chat import ModelError
    from sextant.llm.llama_local import load_gguf
    from sextant.llm.model_files import ModelFileError
    from sextant.llm.settings import ModelSettings
    from sextant.llm.writer_choice import writer
    from sextant.training.cli import exits_on, say

    settings = ModelSettings()
    with exits_on(prog, ModelFileError, ModelError):
        llama, name = load_gguf(writer(settings).model, settings.model_files_dir(), threads)
    cache = out / "model-questions.jsonl"
    say(f"asking {name} for questions about {count} chunks (cached in {cache})")
    started = time.perf_counter()

    def progress(done: int, total: int) -> None:
        if done and (done % log_every == 0 or done == total):
            say(f"  {done}/{total} questions ({time.perf_counter() - started:.0f} s)")

    try:
        return model_questions(chunks, asking(llama), cache, count, seed, progress)
    finally:
        llama.close()


def prompt(chunk: ChunkText) -> str:
    where = ", ".join(part for part in (chunk.title, chunk.section) if part)
    text = " ".join(chunk.text.split())[:PASSAGE_CHARS]
    return f"Passage{f' ({where})' if where else ''}:\n{text}\n\nWrite one question this passage answers."


def _question(reply: str) -> str | None:
    line = next((line.strip() for line in reply.splitlines() if line.strip()), "")
    line = line.removeprefix("Question:").strip().strip('"')
    return line if line.endswith("?") and MIN_WORDS <= len(line.split()) <= MAX_WORDS else None


def _read(cache: Path) -> tuple[dict[str, str | None], bool]:
    """The cache's answers, and whether it ends at a line's end.

    A last line cut short by an interruption is read as not yet asked.
    """
    text = cache.read_text(encoding="utf-8") if cache.is_file() else ""
    written: dict[str, str | None] = {}
    for line in text.splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        written[str(row["chunk"])] = row["question"]
    return written, not text or text.endswith("\n")
