"""The evaluation's own reading of answers, on cases of its own (it shares no code with the product's checks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sextant.agent.evidence import locate  # the product's matcher, imported here only to be compared with
from sextant.evals.golden import load_golden
from sextant.evals.oracle import claims, find, labels, read
from sextant.kb.loaders import load_file

REPO = Path(__file__).resolve().parents[2]
SHOWN = {1: "Descale every eight weeks.", 2: "Backflush weekly."}


@pytest.mark.parametrize(
    ("answer", "cited"),
    [
        ("Descale every eight weeks [1].", [1]),
        ("Both [1, 2] and again [2][1].", [1, 2, 2, 1]),
        ("A link [3](https://example.org) is not a label.", []),
        ("Not labels: [x], [], [1a], [12345].", []),
        ("An unclosed [2 marker", []),
    ],
)
def test_labels_are_bracketed_numbers_that_are_not_link_texts(answer: str, cited: list[int]) -> None:
    assert labels(answer) == cited


def test_claims_are_sentences_of_four_words_with_the_labels_after_their_full_stop() -> None:
    answer = "Descale the machine every eight weeks. [1] Brew at 93.5 °C for best results [2].\nSteps:\nIs it safe?"
    assert claims(answer) == ["Descale the machine every eight weeks. [1]", "Brew at 93.5 °C for best results [2]."]
    abbreviated = (
        "BDFL stands for Benevolent Dictator For Life, a.k.a. Guido van Rossum [1]. It covers STREAM (i.e. TCP) [2]."
    )
    assert claims(abbreviated) == [
        "BDFL stands for Benevolent Dictator For Life, a.k.a. Guido van Rossum [1].",
        "It covers STREAM (i.e. TCP) [2].",
    ]


@pytest.mark.parametrize(
    ("snippet", "text", "span"),
    [
        ("eight weeks", "Descale every eight weeks.", (14, 25)),
        ("“Descaling” every", 'We do "DESCAL-\ning" every week', (7, 25)),  # quote marks, a broken word, case
        ("ﬁlter basket", "the filter basket", (4, 17)),  # a ligature
        ("nine weeks", "Descale every eight weeks.", None),
        ("...", "anything", None),  # nothing to look for
    ],
)
def test_a_snippet_is_found_by_its_letters_and_digits(snippet: str, text: str, span: tuple[int, int] | None) -> None:
    assert find(snippet, text) == span


def test_an_answer_citing_shown_passages_on_every_claim_is_read_as_answered_and_ok() -> None:
    reading = read("Descale the machine every eight weeks [1]. Backflush it once a week [2].", SHOWN)
    assert reading.ok and reading.cited == [1, 2] and not reading.abstained


def test_a_label_never_shown_is_unresolved_and_an_uncited_claim_is_named() -> None:
    reading = read("Descale the machine every eight weeks [3]. Replace the gasket every year.", SHOWN)
    assert reading.unresolved == [3] and reading.uncited == ["Replace the gasket every year."] and not reading.ok


@pytest.mark.parametrize(
    ("answer", "abstains"),
    [
        ("The documents do not mention which descaler to use.", True),
        ("Nothing in the passages matches this question.", True),
        ("The knowledge base is empty: no documents have been added yet.", True),
        ("I can't find that in the sources provided.", True),
        ("", True),
        ("Use citric acid, which is cheap and works well.", False),  # uncited, but an answer
        ("The documents say to descale every eight weeks [1].", False),
        ("It costs 40 euros [4].", False),  # a label never shown: unresolved, not an abstention
    ],
)
def test_without_a_typed_field_an_uncited_answer_that_denies_the_documents_answer_abstains(
    answer: str, abstains: bool
) -> None:
    assert read(answer, SHOWN).abstained is abstains


def test_the_typed_abstention_decides_and_a_text_that_contradicts_it_is_a_disagreement() -> None:
    agrees = read("The documents do not answer this question.", SHOWN, abstained=True)
    assert agrees.abstained and not agrees.disagrees and agrees.ok
    contradicted = read("Descale the machine every eight weeks [1].", SHOWN, abstained=True)
    assert contradicted.abstained and contradicted.disagrees and not contradicted.ok


def test_an_evidence_quote_must_stand_in_the_passage_it_names() -> None:
    evidence = [(1, "Descale every eight weeks."), (2, "Descale every eight weeks.")]
    reading = read("Descale the machine every eight weeks [1][2].", SHOWN, abstained=False, evidence=evidence)
    assert reading.unfound == [(2, "Descale every eight weeks.")] and not reading.ok


def test_on_the_golden_documents_the_oracle_finds_every_labelled_snippet_where_the_product_s_matcher_does() -> None:
    """Two matchers written apart agree on real text: each golden snippet, in its document as Sextant loads it."""
    documents = {p.stem: p for p in (REPO / "eval" / "corpus" / "documents").iterdir()}
    texts: dict[str, str] = {}
    compared = 0
    for question in load_golden(REPO / "eval" / "golden.jsonl"):
        for target in question.targets:
            if not target.evidence or target.doc_id not in documents:
                continue
            if target.doc_id not in texts:
                texts[target.doc_id] = load_file(documents[target.doc_id]).text
            text = texts[target.doc_id]
            product, oracle = locate(target.evidence, text), find(target.evidence, text)
            assert (product is None) == (oracle is None), target.evidence
            if product is not None and oracle is not None:
                assert oracle[0] < product.end and product.start < oracle[1], target.evidence
                compared += 1
    assert compared >= 100
