"""The structured-answer parser: statements appear as each closes; a cut-off reply keeps what it completed."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from sextant.llm.chat import Quote, Statement
from sextant.llm.statements import (
    FORCED_TAIL_CHARS,
    MAX_QUOTE_CHARS,
    MAX_STATEMENTS,
    StatementParser,
    parse_statements,
    statements_schema,
)

ANSWER = (
    '{"statements": [{"text": "Descale every 3 months.", "evidence": [{"passage": 1, "quote": "every 3 months"}]}, '
    '{"text": "Monthly with \\"hard\\" water {or} [soft].", "evidence": [{"passage": 1, "quote": "hard {water}"}, '
    '{"passage": 2, "quote": "monthly [soft]"}]}]}'
)
DESCALE = Statement("Descale every 3 months.", (Quote(1, "every 3 months"),))
MONTHLY = Statement('Monthly with "hard" water {or} [soft].', (Quote(1, "hard {water}"), Quote(2, "monthly [soft]")))


def test_each_statement_is_returned_when_its_closing_brace_arrives() -> None:
    parser = StatementParser()
    first_close = ANSWER.index("}]}") + 2  # the first statement's own closing brace, after its evidence
    seen = [(i, parser.feed(char)) for i, char in enumerate(ANSWER)]
    emitted = [(i, found) for i, found in seen if found]
    assert emitted == [(first_close, [DESCALE]), (len(ANSWER) - 3, [MONTHLY])]
    assert parser.statements == parse_statements(ANSWER)
    assert MONTHLY.sources == (1, 2)


def test_a_truncated_tail_is_dropped() -> None:
    cut = ANSWER[: ANSWER.index("Monthly") + 5]
    assert parse_statements(cut) == (DESCALE,)
    inside_evidence = ANSWER[: ANSWER.index("monthly [soft]") + 3]
    assert parse_statements(inside_evidence) == (DESCALE,)


def test_text_around_the_json_is_ignored() -> None:
    reply = f'```json\n{ANSWER}\n```\nanything after the array {{"text": "x", "evidence": []}}'
    assert [s.text for s in parse_statements(reply)] == [
        "Descale every 3 months.",
        'Monthly with "hard" water {or} [soft].',
    ]


def test_malformed_items_are_skipped_and_quotes_cleaned() -> None:
    evidence = [
        {"passage": 2, "quote": "  two  "},
        {"passage": 2, "quote": "two"},  # the same quote again
        {"passage": 0, "quote": "zero"},
        {"passage": -1, "quote": "negative"},
        {"passage": True, "quote": "a boolean"},
        {"passage": "3", "quote": "a string label"},
        {"passage": 4, "quote": "   "},
        {"passage": 4},
        "a bare string",
        {"passage": 4, "quote": "four"},
    ]
    items = [
        {"text": "  padded  ", "evidence": evidence},
        {"text": "", "evidence": [{"passage": 1, "quote": "one"}]},
        {"evidence": [{"passage": 1, "quote": "one"}]},
        "a bare string",
        {"text": "no evidence key"},
        {"text": "evidence not a list", "evidence": {"passage": 1, "quote": "one"}},
        {"text": "padded", "evidence": [{"passage": 5, "quote": "five"}]},  # the same sentence again
    ]
    assert parse_statements(json.dumps({"statements": items})) == (
        Statement("padded", (Quote(2, "two"), Quote(4, "four"))),
        Statement("no evidence key", ()),
        Statement("evidence not a list", ()),
    )
    assert parse_statements(json.dumps({"statements": items}))[0].sources == (2, 4)


def test_the_old_sources_shape_carries_no_quotes() -> None:
    assert parse_statements('{"statements": [{"text": "Descale.", "sources": [1, 2]}]}') == (Statement("Descale.", ()),)


def test_at_most_max_statements_are_kept() -> None:
    items = [{"text": f"claim {i}", "evidence": [{"passage": 1, "quote": "q"}]} for i in range(MAX_STATEMENTS + 3)]
    assert len(parse_statements(json.dumps({"statements": items}))) == MAX_STATEMENTS


def test_nothing_before_the_statements_key() -> None:
    parser = StatementParser()
    assert parser.feed('{"statem') == []
    assert parser.feed('ents": [{"text": "a", "evidence": []}') == [Statement("a", ())]


def test_the_schema_allows_only_the_citable_labels() -> None:
    def label_schema(schema: dict[str, object]) -> object:
        item = schema["properties"]["statements"]["items"]  # type: ignore[index]
        assert item["required"] == ["text", "evidence"]
        return item["properties"]["evidence"]["items"]["properties"]["passage"]

    assert label_schema(statements_schema((3, 1, 3))) == {"type": "integer", "enum": [1, 3]}
    assert label_schema(statements_schema()) == {"type": "integer", "minimum": 1}


def test_under_a_cap_a_quote_that_ended_near_it_loses_its_last_word() -> None:
    # Qwen2.5-0.5B under a 60-character cap; the passage says "about 9.5 millimetres".
    near = "A mouse guard is a metal strip with holes of about 9.5 mill."
    far = "Use filtered water."  # ended by the model's own choice: any token still fitted
    one_word_left = "Descaling " + "x" * 45  # the one word that would stay stands anywhere
    assert len(far) <= 60 - FORCED_TAIL_CHARS < len(one_word_left) <= len(near) == 60
    reply = json.dumps(
        {"statements": [{"text": "t", "evidence": [{"passage": 1, "quote": q} for q in (near, far, one_word_left)]}]}
    )
    [statement] = StatementParser(quote_cap=60).feed(reply)
    assert [q.text for q in statement.quotes] == ["A mouse guard is a metal strip with holes of about 9.5", far]
    assert [q.text for q in parse_statements(reply)[0].quotes] == [near, far, one_word_left]  # no cap, no cut


def test_quotes_keep_the_long_limit_unless_the_caller_caps_them() -> None:
    def quote_schema(schema: dict[str, Any]) -> Any:
        evidence = schema["properties"]["statements"]["items"]["properties"]["evidence"]
        return evidence["items"]["properties"]["quote"]

    assert quote_schema(statements_schema()) == {"type": "string", "minLength": 1, "maxLength": MAX_QUOTE_CHARS}
    assert quote_schema(statements_schema((1,), max_quote_chars=60))["maxLength"] == 60


texts = st.text(min_size=1, max_size=40).map(str.strip).filter(bool)
quotes = st.builds(Quote, st.integers(1, 50), texts)
statements = st.lists(
    st.builds(Statement, texts, st.lists(quotes, max_size=4, unique=True).map(tuple)),
    max_size=MAX_STATEMENTS,
    unique_by=lambda s: s.text,
)


def _render(answer: list[Statement], indent: int | None, ascii_only: bool) -> str:
    body = {
        "statements": [
            {"text": s.text, "evidence": [{"passage": q.label, "quote": q.text} for q in s.quotes]} for s in answer
        ]
    }
    return json.dumps(body, indent=indent, ensure_ascii=ascii_only)


@given(statements, st.sampled_from([None, 0, 2]), st.booleans(), st.data())
def test_any_prefix_parses_to_a_prefix_of_the_statements(
    answer: list[Statement], indent: int | None, ascii_only: bool, data: st.DataObject
) -> None:
    text = _render(answer, indent, ascii_only)
    assert parse_statements(text) == tuple(answer)
    cut = data.draw(st.integers(0, len(text)))
    parsed = parse_statements(text[:cut])
    assert parsed == tuple(answer[: len(parsed)])


@given(statements, st.data())
def test_any_split_into_pieces_gives_the_same_statements(answer: list[Statement], data: st.DataObject) -> None:
    text = _render(answer, None, False)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=8)))
    parser = StatementParser()
    streamed = [s for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True) for s in parser.feed(text[a:b])]
    assert tuple(streamed) == parser.statements == tuple(answer)
