"""The second model pass over a drafted answer: unsupported cited statements are marked or dropped and reported."""

from __future__ import annotations

from typing import Any

from sextant.agent.passages import Passage, PassageBook
from sextant.agent.verify import MARK, verify_answer
from sextant.llm.scripted import ScriptedModel

BOOK = PassageBook(
    [
        Passage(label=1, title="Manual", text="Descale every eight weeks."),
        Passage(label=2, title="Manual", text="Use filtered water."),
        Passage(label=3, title="Brochure", text="Never shown to the checker: no statement cites it."),
    ]
)
DRAFT = "Descale every eight weeks [1]. Boil the milk [2]. Use filtered water [2]."


def checker(*replies: dict[str, Any]) -> ScriptedModel:
    return ScriptedModel([], json_replies=replies)


def second_unsupported(**extra: Any) -> dict[str, Any]:
    return {"results": [{"statement": 0, "supported": True}, {"statement": 1, "supported": False}], **extra}


async def test_the_checker_reads_the_question_the_cited_passages_and_the_numbered_statements() -> None:
    model = checker(second_unsupported(addresses_question=True))
    await verify_answer(model, "How often to descale?", DRAFT, BOOK, "mark")
    [prompt] = model.json_prompts
    assert prompt == (
        "Question: How often to descale?\n\nPassages:\n\n[1] Manual\nDescale every eight weeks.\n\n"
        "[2] Manual\nUse filtered water.\n\nStatements:\n"
        "0. Descale every eight weeks [1].\n1. Boil the milk [2].\n2. Use filtered water [2]."
    )


async def test_an_unsupported_statement_is_marked_and_reported() -> None:
    answer, verification, _ = await verify_answer(
        checker(second_unsupported(addresses_question=True)), "q", DRAFT, BOOK, "mark"
    )
    assert answer == f"Descale every eight weeks [1]. Boil the milk [2].{MARK} Use filtered water [2]."
    assert verification.checked and verification.statements == 3
    assert verification.unsupported == ["Boil the milk [2]."]
    assert (verification.action, verification.addresses_question) == ("mark", True)


async def test_an_unsupported_statement_is_dropped_leaving_no_gap() -> None:
    answer, verification, _ = await verify_answer(checker(second_unsupported()), "q", DRAFT, BOOK, "drop")
    assert answer == "Descale every eight weeks [1]. Use filtered water [2]."
    assert verification.unsupported == ["Boil the milk [2]."] and verification.action == "drop"


async def test_only_cited_statements_are_checked() -> None:
    model = checker({"results": [{"statement": 0, "supported": False}], "addresses_question": False})
    answer, verification, _ = await verify_answer(model, "q", "Hello there. Descale often [1].", BOOK, "drop")
    assert answer == "Hello there."
    assert verification.statements == 1 and verification.addresses_question is False
    assert model.json_prompts[0].endswith("Statements:\n0. Descale often [1].")


async def test_an_answer_with_no_cited_statement_is_not_sent_to_the_model() -> None:
    model = checker()
    answer, verification, usage = await verify_answer(model, "q", "The documents do not say.", BOOK, "mark")
    assert answer == "The documents do not say."
    assert not verification.checked and verification.note == "no cited statement to check"
    assert model.json_prompts == [] and usage.cost_usd == 0


async def test_a_failed_check_leaves_the_answer_as_drafted_and_says_why() -> None:
    answer, verification, _ = await verify_answer(checker(), "q", DRAFT, BOOK, "drop")
    assert answer == DRAFT
    assert not verification.checked
    assert verification.note == "check failed: the script has no more JSON replies"


async def test_malformed_items_in_the_reply_are_ignored() -> None:
    reply = {
        "results": [
            "statement 1 is wrong",
            {"statement": 7, "supported": False},
            {"statement": "1", "supported": False},
            {"statement": 1, "supported": "no"},
            {"statement": 2, "supported": False},
            {"statement": 2, "supported": False},
        ],
        "addresses_question": "yes",
    }
    answer, verification, _ = await verify_answer(checker(reply), "q", DRAFT, BOOK, "drop")
    assert answer == "Descale every eight weeks [1]. Boil the milk [2]."
    assert verification.unsupported == ["Use filtered water [2]."]
    assert verification.addresses_question is None
