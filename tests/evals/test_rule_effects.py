"""Each check's effect on recorded answers: which rule decided each statement, and whether it was right."""

from __future__ import annotations

from typing import Any

import anyio

from sextant.agent.answer_check import AnswerCheck
from sextant.agent.events import Verdict
from sextant.agent.statement_checks import StatementChecks, replay
from sextant.evals.golden import Question, Target
from sextant.evals.rule_effects import effects, kept_by, removed_by
from sextant.llm.chat import Quote, Statement
from sextant.llm.scripted import ScriptedYesNo

BREW = "Brew espresso with water at 93 degrees Celsius."
DOSE = "A double shot uses 18 grams of coffee."
PASSAGES = {1: f"{BREW} {DOSE}", 2: "Descale the machine every eight weeks."}
HOW_HOT = Question("q1", "How hot should the water be?", True, (Target("guide", None, None, "93 degrees"),), "fact")
BRAND = Question("q2", "Which descaler brand is best?", False, (), "near-miss")
QUESTIONS = {q.id: q for q in (HOW_HOT, BRAND)}


def recorded(question: Question, text: str, quotes: list[tuple[int, str]], p_yes: float = 1.0) -> dict[str, Any]:
    """The statement as sextant-eval-agent records it, checked now by the product's own checks."""
    statement = Statement(text, tuple(Quote(label, words) for label, words in quotes))
    checks = StatementChecks(answer_check=AnswerCheck(ScriptedYesNo([p_yes])))
    result = anyio.run(replay, question.text, PASSAGES, statement, checks)
    if result.kept:
        evidence = [{"label": 1, "quote": BREW, "start": 0, "end": len(BREW)}] if "93" in text else []
        return {"kept": {"text": text, "evidence": evidence, "trail": [v.model_dump() for v in result.trail]}}
    written = [{"label": label, "quote": words} for label, words in quotes]
    check = "answer" if result.trail[-1].rule.startswith("answer") else "quote"
    return {
        "removed": {"text": text, "quotes": written, "check": check, "trail": [v.model_dump() for v in result.trail]}
    }


def row(question: Question, *statements: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": question.id,
        "mode": "model",
        "passages": {str(k): v for k, v in PASSAGES.items()},
        "statements": [s["kept"] for s in statements if "kept" in s],
        "removed": [s["removed"] for s in statements if "removed" in s],
    }


def test_each_statement_is_counted_under_the_rule_that_decided_it_right_or_wrong() -> None:
    rows = [
        row(
            HOW_HOT,
            recorded(HOW_HOT, "Brew at 93 degrees.", [(1, BREW)]),  # kept exactly, on the snippet
            recorded(HOW_HOT, "Brew at 93 degrees.", [(1, BREW)], p_yes=0.1),  # the checker removed one on the snippet
            recorded(HOW_HOT, "Brew at 95 degrees.", [(1, BREW)]),  # found, but the sentence says 93
            recorded(HOW_HOT, "Descale the machine.", [(2, "Descale the machine")]),  # no number: answer_kind
        ),
        row(BRAND, recorded(BRAND, "Use citric acid.", [(2, "not in the passage")])),  # nothing found
    ]
    table = effects(rows, QUESTIONS).as_json()
    assert table["statements"] == 5
    assert table["kept_by"]["exact"] == {"on_snippet": 1, "elsewhere": 0}
    assert table["removed_by"]["answer_check"] == {"on_snippet": 1, "elsewhere": 0}
    assert table["removed_by"]["says"] == {"on_snippet": 1, "elsewhere": 0}  # the right place, the wrong figure
    assert table["removed_by"]["answer_kind"] == {"on_snippet": 0, "elsewhere": 1}
    assert table["removed_by"]["quote"] == {"on_snippet": 0, "elsewhere": 1}


def test_a_row_recorded_before_the_trail_is_replayed_with_the_checker_s_recorded_outcome() -> None:
    old = row(HOW_HOT)
    old["removed"] = [{"text": "Brew at 93 degrees.", "quotes": [{"label": 1, "quote": BREW}], "check": "answer"}]
    old["statements"] = [
        {"text": "Brew at 93 degrees.", "evidence": [{"label": 1, "quote": BREW, "start": 0, "end": len(BREW)}]}
    ]
    table = effects([old, {**old, "mode": "excerpts"}, {**old, "id": "unknown"}], QUESTIONS).as_json()
    assert table["statements"] == 2  # excerpts and questions of no set are not counted
    assert table["removed_by"]["answer_check"] == {"on_snippet": 1, "elsewhere": 0}
    assert table["kept_by"]["exact"] == {"on_snippet": 1, "elsewhere": 0}


def test_a_kept_statement_is_the_tolerance_s_that_gave_its_evidence() -> None:
    changed = recorded(HOW_HOT, "93 degrees.", [(1, "Brew espresso with water at 93 degrees Celsius in a cup")])
    own = recorded(HOW_HOT, "Brew espresso with water at 93 degrees Celsius.", [(2, "nowhere")])
    fact = recorded(HOW_HOT, "93.", [(2, "Descale the machine every eight weeks.")])
    assert [kept_by(_trail(s["kept"])) for s in (changed, own, fact)] == ["found_by_run", "own_words", "fact_sentence"]
    assert removed_by([]) == "quote"


def _trail(statement: dict[str, Any]) -> list[Verdict]:
    return [Verdict.model_validate(v) for v in statement["trail"]]
