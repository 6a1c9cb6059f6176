"""The structured-answer parser: statements appear as each closes; a cut-off reply keeps what it completed."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from sextant.agent.chat import Statement
from sextant.agent.models.statements import MAX_STATEMENTS, StatementParser, parse_statements

ANSWER = (
    '{"statements": [{"text": "Descale every 3 months.", "sources": [1]}, '
    '{"text": "Monthly with \\"hard\\" water {or} [soft].", "sources": [1, 2]}]}'
)


def test_each_statement_is_returned_when_its_closing_brace_arrives() -> None:
    parser = StatementParser()
    first_close = ANSWER.index("}")
    seen = [(i, parser.feed(char)) for i, char in enumerate(ANSWER)]
    emitted = [(i, found) for i, found in seen if found]
    assert emitted == [
        (first_close, [Statement("Descale every 3 months.", (1,))]),
        (len(ANSWER) - 3, [Statement('Monthly with "hard" water {or} [soft].', (1, 2))]),
    ]
    assert parser.statements == parse_statements(ANSWER)


def test_a_truncated_tail_is_dropped() -> None:
    cut = ANSWER[: ANSWER.index("Monthly") + 5]
    assert parse_statements(cut) == (Statement("Descale every 3 months.", (1,)),)


def test_text_around_the_json_is_ignored() -> None:
    reply = f'```json\n{ANSWER}\n```\nanything after the array {{"text": "x", "sources": []}}'
    assert [s.text for s in parse_statements(reply)] == [
        "Descale every 3 months.",
        'Monthly with "hard" water {or} [soft].',
    ]


def test_malformed_items_are_skipped_and_sources_cleaned() -> None:
    items = [
        {"text": "  padded  ", "sources": [2, 2, 0, -1, True, "3", 4]},
        {"text": "", "sources": [1]},
        {"sources": [1]},
        "a bare string",
        {"text": "no sources key"},
        {"text": "padded", "sources": [5]},  # the same sentence again
    ]
    assert parse_statements(json.dumps({"statements": items})) == (
        Statement("padded", (2, 4)),
        Statement("no sources key", ()),
    )


def test_at_most_max_statements_are_kept() -> None:
    items = [{"text": f"claim {i}", "sources": [1]} for i in range(MAX_STATEMENTS + 3)]
    assert len(parse_statements(json.dumps({"statements": items}))) == MAX_STATEMENTS


def test_nothing_before_the_statements_key() -> None:
    parser = StatementParser()
    assert parser.feed('{"statem') == []
    assert parser.feed('ents": [{"text": "a", "sources": []}') == [Statement("a", ())]


texts = st.text(min_size=1, max_size=40).map(str.strip).filter(bool)
statements = st.lists(
    st.builds(Statement, texts, st.lists(st.integers(1, 50), max_size=4, unique=True).map(tuple)),
    max_size=MAX_STATEMENTS,
    unique_by=lambda s: s.text,
)


def _render(answer: list[Statement], indent: int | None, ascii_only: bool) -> str:
    body = {"statements": [{"text": s.text, "sources": list(s.sources)} for s in answer]}
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
