"""The chat-model protocol's own behaviour: usage adds up across turns, a statement's sources, a model error."""

from __future__ import annotations

from sextant.llm.chat import ModelError, Quote, Statement, Usage


def test_usage_adds_each_count_and_the_cost() -> None:
    total = Usage(100, 20, 5, 0.25) + Usage(10, 2, 0, 0.5)
    assert total == Usage(input_tokens=110, output_tokens=22, thinking_tokens=5, cost_usd=0.75)
    assert Usage() + Usage() == Usage()


def test_a_statements_sources_are_its_quoted_labels_in_first_quoted_order_once_each() -> None:
    statement = Statement("Descale monthly.", (Quote(3, "every month"), Quote(1, "hard water"), Quote(3, "monthly")))
    assert statement.sources == (3, 1)
    assert Statement("Nothing quoted.").sources == ()


def test_a_model_error_is_not_retryable_unless_said() -> None:
    error = ModelError("the model refused the request")
    assert (str(error), error.retryable, error.status) == ("the model refused the request", False, None)
    busy = ModelError("rate limited", retryable=True, status=429)
    assert (busy.retryable, busy.status) == (True, 429)
