"""Citation markers: found in text and in a stream, checked against the passages shown, the dangling stripped."""

from __future__ import annotations

import pytest

from sextant.agent.citations import MarkerScanner, check, claims_in, labels_in, says_not_answered


def test_labels_are_read_in_order_with_repeats_and_a_markdown_link_is_no_citation() -> None:
    assert labels_in("Grind fine [2]. Dose 18 g [1, 3]. Again [2].") == [2, 1, 3, 2]
    assert labels_in("See [4](https://example.com/manual) for more.") == []
    assert labels_in("No markers, and [a] or [] are not labels either.") == []


def test_claims_are_sentences_and_list_items_each_keeping_the_markers_after_it() -> None:
    text = "Descale every eight weeks. [1] Use citric acid [2].\n- Rinse twice [3]\n- Dry\n\n[4]"
    assert claims_in(text) == ["Descale every eight weeks. [1]", "Use citric acid [2].", "- Rinse twice [3]", "- Dry"]


def test_dangling_labels_are_removed_and_counted_and_the_claims_still_cited_are_counted() -> None:
    report = check("Use 18 grams [1, 4]. Tamp hard [5] . Pull for 25 seconds [2].", valid=[1, 2, 3])
    assert report.text == "Use 18 grams [1]. Tamp hard. Pull for 25 seconds [2]."
    assert (report.claims, report.claims_cited) == (3, 2)
    assert (report.labels_total, report.labels_valid) == (4, 2)
    assert (report.cited, report.dangling) == ((1, 2), (4, 5))
    assert report.validity == pytest.approx(0.5)


def test_repeated_labels_are_reported_once_in_first_seen_order() -> None:
    report = check("First [2]. Second [1][2]. Third [7]. Fourth [7].", valid=[1, 2])
    assert (report.cited, report.dangling) == ((2, 1), (7,))
    assert (report.labels_total, report.labels_valid) == (5, 3)


def test_an_answer_without_markers_is_fully_valid_but_cites_no_claim() -> None:
    report = check("The documents do not say.", valid=[1])
    assert report.text == "The documents do not say."
    assert (report.claims, report.claims_cited, report.labels_total) == (1, 0, 0)
    assert report.validity == 1.0


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("The documents do not mention the price.", True),
        ("I cannot find any information about refunds.", True),
        ("The passages don't cover the warranty.", True),
        ("No. A double shot uses 18 grams [1].", False),
        ("The passage states that a double uses 18 grams [1].", False),
    ],
)
def test_an_answer_saying_the_documents_do_not_answer_is_recognised(text: str, said: bool) -> None:
    assert says_not_answered(text) is said


def test_the_scanner_finds_markers_split_across_deltas_once_each() -> None:
    scanner = MarkerScanner()
    assert scanner.feed("Use 18 grams [") == []
    assert scanner.feed("1") == []
    assert scanner.feed("2] and tamp [3, ") == [12]
    assert scanner.feed("4]. Done [5]") == [3, 4, 5]
    assert scanner.feed(" and nothing more.") == []


def test_the_scanner_forgets_an_open_bracket_too_long_to_be_a_marker() -> None:
    scanner = MarkerScanner()
    assert scanner.feed("[" + "x" * 30) == []
    assert scanner.feed("5]") == []
