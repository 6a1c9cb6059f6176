"""How the local model decodes: greedy steps under the grammar, a cache kept to the system turn, drafts from the
prompt. Each is a strategy over ``LlamaRuntime``'s interface; ``llama_local`` composes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# The runtime first: it sets how llama.cpp's threads wait before llama_cpp is imported.
from sextant.llm.llama_runtime import GreedyStep, LlamaRuntime  # isort: skip

from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

_END_OF_TURN = b"<|im_end|>"
# Measured on the 1.5B writer's grounded turns (learning/agent.md, run 23): 5 tokens after a 3-token match,
# against 8, 10, 16 and 12 after a 2-token one. The lookup takes the earliest match (the instruction's JSON, the
# passage a quote copies), which read 10% fewer passes than the latest (often the statement's own paraphrase).
DRAFT_TOKENS = 5
NGRAM_TOKENS = 3


class GreedyDecoding:
    """Greedy decoding under a grammar that is asked about the model's own choice first.

    llama.cpp's sampler chain runs the grammar over the whole vocabulary (151,936 tokens for Qwen2.5) before it
    takes the most likely token, and for the 0.5B model that cost about as much per token as the forward pass
    (learning/agent.md, run 8). Greedy decoding needs only the most likely *allowed* token: when the model's top
    token is allowed, which it is for most tokens of a reply written in the grammar's shape, it is the answer,
    and the grammar judges that one token. Only a rejected choice sends the whole vocabulary through the
    grammar. The tokens are the chain's, one for one (``tests/llm/test_llama_strategies.py``). Any other
    sampling (a temperature, penalties, logits processors) keeps the library's chain.
    """

    def sampler(self, runtime: LlamaRuntime, options: Mapping[str, Any]) -> GreedyStep | None:
        neutral = (
            options.get("temp") == 0.0
            and options.get("repeat_penalty", 1.0) == 1.0
            and options.get("frequency_penalty", 0.0) == 0.0
            and options.get("presence_penalty", 0.0) == 0.0
            and options.get("logits_processor") is None
        )
        return runtime.greedy_step(options.get("grammar")) if neutral else None


class SystemTurnPrefix:
    """The same reply to the same prompt, whatever was asked before: the cache keeps the system turn only.

    llama-cpp-python reuses the longest prefix a prompt shares with the one before and reads only the rest.
    Where that split falls changes the floating-point sums, and greedy decoding follows the difference: the 0.5B
    writer, given one grounded prompt twice in a row, wrote 66 tokens the first time and 364 the second
    (learning/agent.md, run 14). So the split is fixed. The system turn, which every grounded prompt shares, is
    always read as a batch of its own, from an empty cache, and kept; everything after it is read again for each
    prompt. A prompt whose template has no ``<|im_end|>`` is read whole each time.
    """

    def __init__(self, end_of_turn: int | None) -> None:
        self.end_of_turn = end_of_turn  # the token that ends a turn, None where the vocabulary has no such one

    @classmethod
    def of(cls, runtime: LlamaRuntime) -> SystemTurnPrefix:
        marker = runtime.tokenize(_END_OF_TURN, add_bos=False, special=True)
        return cls(marker[0] if len(marker) == 1 else None)

    def prepare(self, runtime: LlamaRuntime, prompt: Sequence[int]) -> None:
        keep = self.system_turn(prompt)
        cached = runtime.cached_tokens()
        if keep and len(cached) >= keep and list(cached[:keep]) == list(prompt[:keep]) and runtime.keep_cached(keep):
            return
        runtime.reset()
        if keep:
            runtime.eval(prompt[:keep])
        # The library now finds exactly the system turn cached and reads the rest in one batch.

    def system_turn(self, tokens: Sequence[int]) -> int:
        """Tokens up to and including the first end of turn, if it leaves something after it; else 0."""
        if self.end_of_turn is None:
            return 0
        for index, token in enumerate(tokens[:-1]):
            if token == self.end_of_turn:
                return index + 1
        return 0


class PromptLookupDrafting:
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
    (the output layer over the whole prompt and about 0.4 GB copied per turn, run 8); the runtime asks for
    logits only at a draft's positions.
    """

    def __init__(self) -> None:
        self.drafter = prompt_lookup()

    def reads_every_position(self, batch: int) -> bool:
        return 1 < batch <= DRAFT_TOKENS + 1


def prompt_lookup() -> LlamaPromptLookupDecoding:
    """The tokens that followed the last ``NGRAM_TOKENS`` written where they first occurred (shorter if never)."""
    return LlamaPromptLookupDecoding(max_ngram_size=NGRAM_TOKENS, num_pred_tokens=DRAFT_TOKENS)
