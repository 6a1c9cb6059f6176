"""The same reply to the same prompt, whatever was asked before: the cache keeps the system turn only.

llama-cpp-python reuses the longest prefix a prompt shares with the one before and reads only the rest.
Where that split falls changes the floating-point sums, and greedy decoding follows the difference: the 0.5B
writer, given one grounded prompt twice in a row, wrote 66 tokens the first time and 364 the second
(learning/agent.md, run 14). So the split is fixed. The system turn, which every grounded prompt shares, is
always read as a batch of its own, from an empty cache, and kept; everything after it is read again for each
prompt. A prompt whose template has no ``<|im_end|>`` is read whole each time.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any

from sextant.llm.llama_greedy import GreedyLlama

_END_OF_TURN = b"<|im_end|>"


class SteadyLlama(GreedyLlama):
    """``GreedyLlama`` whose reply depends on the prompt alone, not on the prompts before it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        marker = self.tokenize(_END_OF_TURN, add_bos=False, special=True)
        self._end_of_turn = marker[0] if len(marker) == 1 else None

    def generate(self, tokens: Sequence[int], *args: Any, **kwargs: Any) -> Generator[int, Sequence[int] | None, None]:
        keep = self._system_turn(tokens)
        if keep and self.n_tokens >= keep and list(self._input_ids[:keep]) == list(tokens[:keep]):
            self._ctx.kv_cache_seq_rm(-1, keep, -1)
            self.n_tokens = keep
        else:
            self.reset()
            if keep:
                self.eval(tokens[:keep])
        # The library now finds exactly the system turn cached and reads the rest in one batch.
        yield from super().generate(tokens, *args, **kwargs)

    def _system_turn(self, tokens: Sequence[int]) -> int:
        """Tokens up to and including the first end of turn, if it leaves something after it; else 0."""
        if self._end_of_turn is None:
            return 0
        for index, token in enumerate(tokens[:-1]):
            if token == self._end_of_turn:
                return index + 1
        return 0
