from __future__ import annotations

from sextant.evals.judge import check_citations

SHOWN = {1: "Descale every eight weeks.", 2: "Backflush weekly."}


def test_resolved_citations_on_every_claim_pass() -> None:
    report = check_citations("Descale the machine every eight weeks [1]. Backflush it once a week [2].", SHOWN)
    assert report.ok and report.cited == [1, 2]


def test_a_citation_to_a_passage_never_shown_is_unresolved() -> None:
    report = check_citations("Descale the machine every eight weeks [3].", SHOWN)
    assert report.unresolved == [3] and not report.ok


def test_an_uncited_claim_is_reported() -> None:
    report = check_citations("Descale every eight weeks [1]. Replace the gasket every year.", SHOWN)
    assert report.uncited_sentences == ["Replace the gasket every year."] and not report.ok


def test_an_abstention_needs_no_citation() -> None:
    report = check_citations("The documents do not mention which descaler brand to use.", SHOWN)
    assert report.abstained and report.ok
