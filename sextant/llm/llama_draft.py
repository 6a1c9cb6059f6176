"""Greedy replies drafted from the prompt: tokens a grounded answer copies are checked several at a time.

A grounded statement and its quote repeat words of the passages the prompt holds. After each token the
prompt and the reply so far are searched for the last three tokens written; the tokens that followed their
first occurrence are the draft (the library's prompt lookup), and one forward pass over the draft gives the
model's own choice at every one of its positions. The reply keeps the draft up to the first token the model
would not have chosen, and that token is the model's. Every token of the reply is still the greedy choice
under the grammar at its place: a draft only decides how many positions one pass reads. On two cores a pass
over 8 tokens of the 1.5B writer costs about two passes over one (learning/agent.md, run 23).

A batched pass does not round exactly as single-token passes do, and greedy decoding follows the difference,
so a drafted reply can differ from an undrafted one; the same prompt still gets the same reply.

Given to the library's constructor (``draft_model=``), a drafter makes it keep every prompt position's logits
(the output layer over the whole prompt and about 0.4 GB copied per turn, run 8); here logits are asked for
only at a draft's positions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

from sextant.llm.llama_prefix import SteadyLlama

# Measured on the 1.5B writer's grounded turns (learning/agent.md, run 23): 5 tokens after a 3-token match,
# against 8, 10, 16 and 12 after a 2-token one. The lookup takes the earliest match (the instruction's JSON, the
# passage a quote copies), which read 10% fewer passes than the latest (often the statement's own paraphrase).
DRAFT_TOKENS = 5
NGRAM_TOKENS = 3


def prompt_lookup() -> LlamaPromptLookupDecoding:
    """The tokens that followed the last ``NGRAM_TOKENS`` written where they first occurred (shorter if never)."""
    return LlamaPromptLookupDecoding(max_ngram_size=NGRAM_TOKENS, num_pred_tokens=DRAFT_TOKENS)


class DraftingLlama(SteadyLlama):
    """``SteadyLlama`` that checks tokens drafted from the prompt in one pass instead of one pass each."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Set after the library's constructor: given there, it would keep logits at every position of every prompt.
        self.draft_model = prompt_lookup()

    def eval(self, tokens: Sequence[int]) -> None:
        """``Llama.eval``, with logits at every position of a draft's pass (a prompt's keeps them at its end)."""
        if not 1 < len(tokens) <= DRAFT_TOKENS + 1:
            super().eval(tokens)
            return
        self._ctx.kv_cache_seq_rm(-1, self.n_tokens, -1)
        self._batch.set_batch(batch=tokens, n_past=self.n_tokens, logits_all=True)
        self._ctx.decode(self._batch)
        self.input_ids[self.n_tokens : self.n_tokens + len(tokens)] = tokens
        self.n_tokens += len(tokens)
        self._requires_eval = False
