"""A yes-or-no question to a local model, answered by how likely its first token is "yes" rather than "no".

The answer check (``sextant.agent.answer_check``) asks a model whether a passage's sentences answer the
question. Asked to write its verdict, even as a one-field JSON reply, Qwen2.5-Coder-1.5B said "yes" to 50 of
the 59 sentences a 0.5B model had answered from, the unanswerable ones included; the probability of its first
token told them apart (learning/agent.md, run 7). So the prompt is formatted with the model's own chat
template, read once, and the next token's distribution is taken from llama.cpp's logits: no token is
generated, and the prompt is all the cost.

Where the checker's file is the writer's (the 1.5B model writes by default where the machine holds it), the
check reads in a llama.cpp context of its own over the writer's loaded weights instead of loading the file a
second time: the same verdicts, one copy of the weights (learning/agent.md, run 15).
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

# The runtime first: it sets how llama.cpp's threads wait before llama_cpp is imported.
from sextant.llm.llama_runtime import LlamaRuntime  # isort: skip

import numpy as np
from llama_cpp.llama_chat_format import Jinja2ChatFormatter
from llama_cpp.llama_types import ChatCompletionRequestMessage

from sextant.llm.chat import ModelError
from sextant.llm.llama_local import load_gguf
from sextant.llm.model_files import model_name, resolve

# A check reads a system line, a few sentences and the question: a few hundred tokens.
CONTEXT_TOKENS = 2048
_YES = ("yes", "Yes", " yes", " Yes", "YES")
_NO = ("no", "No", " no", " No", "NO")


class LlamaYesNo:
    """A GGUF chat model in this process that only answers yes-or-no questions, with a probability."""

    def __init__(self, llama: LlamaRuntime, name: str, *, shared: bool = False) -> None:
        """``llama`` is read in its own context, or, ``shared``, in a new context over its weights (left open)."""
        self.name = name
        self.shared = shared  # reads with weights loaded by another model
        self._llama = llama
        template = llama.metadata.get("tokenizer.chat_template")
        if not template:
            raise ModelError(f"{name} has no chat template: it cannot be asked a question")
        eos = llama.detokenize([llama.token_eos()]).decode("utf-8", errors="ignore")
        self._format = Jinja2ChatFormatter(template, eos_token=eos, bos_token="")
        self._yes = _single_tokens(llama, _YES)
        self._no = _single_tokens(llama, _NO)
        if not self._yes or not self._no:
            raise ModelError(f"{name}'s vocabulary has no one-token yes or no")
        self._reader = llama.shared_reader(CONTEXT_TOKENS) if shared else llama.reader()
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="llama-yes-no")

    @classmethod
    def load(cls, model: str, models_dir: Path, threads: int, beside: LlamaRuntime | None = None) -> LlamaYesNo:
        """Resolve a known model name or a .gguf path as ``SEXTANT_LOCAL_MODEL`` does, verify it, load it.

        ``beside`` is a model already loaded in this process (the writer's); when it was loaded from the same
        file, its weights are shared and nothing is loaded.

        Raises:
            ModelFileError: the file is missing (the message names the ``sextant-models fetch`` command) or
                does not match its pinned hash.
            ModelError: llama.cpp could not load it, or it cannot answer yes or no.
        """
        path, spec = resolve(model, models_dir)
        if beside is not None and Path(beside.model_path).resolve() == path.resolve():
            return cls(beside, model_name(path, spec), shared=True)
        return cls(*load_gguf(model, models_dir, threads, CONTEXT_TOKENS))

    async def yes_probability(self, system: str, question: str) -> float:
        """P(yes) / (P(yes) + P(no)) for the model's first token of its reply to ``question``."""
        return await asyncio.get_running_loop().run_in_executor(self._worker, self._score, system, question)

    async def aclose(self) -> None:
        """Stop the worker and free what this checker holds; shared weights stay with their owner."""
        await asyncio.get_running_loop().run_in_executor(None, self._worker.shutdown)
        self._reader.close()
        if not self.shared:
            self._llama.close()

    def _score(self, system: str, question: str) -> float:
        messages: list[ChatCompletionRequestMessage] = [
            {"role": "system", "content": system},
            {"role": "user", "content": question},
        ]
        prompt = self._format(messages=messages).prompt
        tokens = self._llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
        if len(tokens) >= CONTEXT_TOKENS:
            raise ModelError(f"{self.name}: a yes-or-no question of {len(tokens)} tokens is too long to ask")
        logits = self._reader.last_logits(tokens)
        weights = np.exp(logits.astype(np.float64) - float(logits.max()))
        yes, no = float(weights[list(self._yes)].sum()), float(weights[list(self._no)].sum())
        return yes / (yes + no) if yes + no > 0 else 0.5


def _single_tokens(llama: LlamaRuntime, words: tuple[str, ...]) -> tuple[int, ...]:
    """The ids of those ``words`` that are one token each in ``llama``'s vocabulary."""
    ids = [llama.tokenize(word.encode("utf-8"), add_bos=False, special=False) for word in words]
    return tuple(sorted({tokens[0] for tokens in ids if len(tokens) == 1}))
