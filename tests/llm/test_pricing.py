"""What a Gemini turn costs: the table's rates, thinking billed as output, an unknown model at the dearest."""

from __future__ import annotations

import pytest

from sextant.llm.pricing import PRICES, UNKNOWN_MODEL_PRICE, price_of, priced_usage


def test_a_turn_is_priced_per_million_tokens_with_thinking_at_the_output_rate() -> None:
    usage = priced_usage("gemini-2.5-flash", input_tokens=1_000_000, output_tokens=200_000, thinking_tokens=800_000)
    assert (usage.input_tokens, usage.output_tokens, usage.thinking_tokens) == (1_000_000, 200_000, 800_000)
    # 1M input tokens at $0.30, then 0.2M + 0.8M tokens at the output rate, $2.50
    assert usage.cost_usd == pytest.approx(0.30 + 2.50)


def test_the_api_s_models_prefix_names_the_same_model() -> None:
    assert price_of("models/gemini-3.1-flash-lite") == PRICES["gemini-3.1-flash-lite"]


def test_an_unknown_model_is_charged_no_less_than_any_known_one() -> None:
    assert price_of("gemini-99-ultra") == UNKNOWN_MODEL_PRICE
    assert all(UNKNOWN_MODEL_PRICE.input_per_million >= p.input_per_million for p in PRICES.values())
    assert all(UNKNOWN_MODEL_PRICE.output_per_million >= p.output_per_million for p in PRICES.values())
