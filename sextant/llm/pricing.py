"""What a Gemini turn costs, from the published per-million-token prices, for the daily budget.

Prices are the Gemini Developer API's paid tier, standard (not batch) rates for prompts up to 200k tokens,
as published at https://ai.google.dev/gemini-api/docs/pricing (read 2026). The agent's prompts are bounded
far below 200k tokens, so the long-context tier of the Pro models never applies. Thinking tokens are billed
at the output rate, and so are they here.
"""

from __future__ import annotations

from dataclasses import dataclass

from sextant.llm.chat import Usage


@dataclass(frozen=True)
class Price:
    input_per_million: float
    output_per_million: float


PRICES: dict[str, Price] = {
    "gemini-3.1-flash-lite": Price(0.25, 1.50),
    "gemini-3.1-flash-lite-preview": Price(0.25, 1.50),
    "gemini-3-flash-preview": Price(0.50, 3.00),
    "gemini-3.5-flash": Price(1.50, 9.00),
    "gemini-3.1-pro-preview": Price(2.00, 12.00),
    "gemini-2.5-flash-lite": Price(0.10, 0.40),
    "gemini-2.5-flash": Price(0.30, 2.50),
    "gemini-2.5-pro": Price(1.25, 10.00),
}

# A model missing from the table is charged the dearest known rates, so the daily budget can over-count
# but never under-count what was spent.
UNKNOWN_MODEL_PRICE = Price(
    max(p.input_per_million for p in PRICES.values()),
    max(p.output_per_million for p in PRICES.values()),
)


def price_of(model: str) -> Price:
    return PRICES.get(model.removeprefix("models/"), UNKNOWN_MODEL_PRICE)


def priced_usage(model: str, input_tokens: int, output_tokens: int, thinking_tokens: int) -> Usage:
    price = price_of(model)
    cost = (input_tokens * price.input_per_million + (output_tokens + thinking_tokens) * price.output_per_million) / 1e6
    return Usage(input_tokens, output_tokens, thinking_tokens, cost)
