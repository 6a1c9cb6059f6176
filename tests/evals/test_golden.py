from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from sextant.contract.results import Hit, Scores
from sextant.evals.golden import GoldenError, Question, Target, judge, load_golden
from tests.scripts.script_module import load_script

REPO = Path(__file__).resolve().parents[2]
PYTHON_DOCS = Path("/usr/share/doc/python3.11/html/_sources")


def _hit(chunk: str, doc: str, pages: list[int], section: str | None, text: str) -> Hit:
    return Hit(
        rank=1,
        chunk_id=chunk,
        document_id=doc,
        title=doc,
        source="",
        page=pages[0] if pages else None,
        pages=pages,
        section=section,
        start=0,
        end=len(text),
        text=text,
        scored_by="rrf",
        scores=Scores(),
        uri=f"kb://documents/{doc}",
    )


def test_judge_maps_hits_to_targets_once_each() -> None:
    question = Question(
        "q",
        "?",
        True,
        (Target("manual", 4, None, "three grams"), Target("notes", None, "Budget", "approved")),
        "multi",
    )
    hits = [
        _hit("c1", "manual", [3], None, "three grams"),  # right text, wrong page
        _hit("c2", "manual", [4], None, "anything"),  # right page
        _hit("c3", "manual", [4], None, "again"),  # same target again: not counted twice
        _hit("c4", "notes", [], "Other", "The budget was approved."),  # evidence found outside the section
    ]
    ranked, qrels = judge(question, hits)
    assert ranked == ["c1", "target-0", "c3", "target-1"]
    assert qrels == {"target-0": 1, "target-1": 1}


def test_the_committed_golden_sets_load() -> None:
    small = load_golden(REPO / "eval" / "golden.jsonl")
    large = load_golden(REPO / "eval" / "golden-large.jsonl")
    assert len(small) >= 60 and sum(not q.answerable for q in small) >= 10
    assert len(large) >= 30 and all(t.page for q in large for t in q.targets)


def test_a_malformed_line_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "g.jsonl"
    bad.write_text('{"id": "x", "question": "?", "answerable": true}\n{"id": "y"}\n', encoding="utf-8")
    with pytest.raises(GoldenError, match=r"g\.jsonl:2"):
        load_golden(bad)


def _check_golden() -> ModuleType:
    """eval/check_golden.py, which is a script rather than a package module."""
    if "check_golden" in sys.modules:
        return sys.modules["check_golden"]
    spec = importlib.util.spec_from_file_location("check_golden", REPO / "eval" / "check_golden.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["check_golden"] = module  # its dataclasses look their module up while being defined
    spec.loader.exec_module(module)
    return module


def test_the_committed_near_miss_set_loads_and_passes_its_checks() -> None:
    questions = load_golden(REPO / "eval" / "golden-near-miss.jsonl")
    assert len(questions) >= 40
    assert all(not q.answerable and not q.targets and q.kind == "near-miss" for q in questions)
    cg = _check_golden()
    docs = cg.load_corpus(REPO / "eval" / "corpus" / "documents")
    taken = {q.id for name in ("golden.jsonl", "golden-large.jsonl") for q in load_golden(REPO / "eval" / name)}
    errors, rows = cg.check_near_miss(REPO / "eval" / "golden-near-miss.jsonl", docs, taken)
    assert errors == []
    assert {row["about"] for row in rows} == set(docs)


def _near_miss(qid: str, about: str, question: str) -> dict[str, object]:
    return {
        "id": qid,
        "question": question,
        "answerable": False,
        "relevant": [],
        "kind": "near-miss",
        "gap": "number",
        "about": about,
        "missing": "The guide gives the strength of the solution, not its boiling point.",
    }


def test_a_near_miss_file_is_refused_for_a_missing_document_a_quote_a_clash_and_a_gap(tmp_path: Path) -> None:
    cg = _check_golden()
    text = "Use a citric acid solution of 20 grams per litre of water and run a third of it through the group."
    docs = {"espresso": cg.Doc("espresso", "md", cg.norm(text)), "bees": cg.Doc("bees", "md", "Swarms start in May.")}
    rows = [
        _near_miss("n001", "espresso", "What is the boiling point of the descaling solution?"),  # fine
        _near_miss("n002", "espresso-manual", "How often should the wand tip be replaced?"),  # no such document
        _near_miss("n003", "espresso", "Why use a citric acid solution of 20 grams per litre of water?"),  # quotes
        _near_miss("g001", "espresso", "Which brand of descaler is best?"),  # id of another golden file
        {**_near_miss("n005", "espresso", "Is a PID worth it?"), "answerable": True},
    ]
    path = tmp_path / "golden-near-miss.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "{not json\n", encoding="utf-8")
    errors, loaded = cg.check_near_miss(path, docs, {"g001"}, minimum=10)
    assert len(loaded) == 5
    problems = "\n".join(errors)
    assert "n001" not in problems
    assert "n002: about names no document of the corpus: 'espresso-manual'" in problems
    assert "n003: 8 or more words quoted verbatim from 'espresso'" in problems
    assert "g001: id already used in another golden file" in problems
    assert "n005: a near-miss question must have answerable: false" in problems
    assert "golden-near-miss.jsonl:6: not valid JSON" in problems
    assert "no near-miss question about 'bees'" in problems
    assert "only 5 questions, need at least 10" in problems


def test_a_set_over_a_pool_need_not_imitate_every_document(tmp_path: Path) -> None:
    cg = _check_golden()
    docs = {"espresso": cg.Doc("espresso", "md", "Descale monthly."), "bees": cg.Doc("bees", "md", "Swarms in May.")}
    path = tmp_path / "near.jsonl"
    path.write_text(json.dumps(_near_miss("x1", "espresso", "What is the descaler's boiling point?")) + "\n")
    everyone, _ = cg.check_near_miss(path, docs, set(), minimum=1)
    some, _ = cg.check_near_miss(path, docs, set(), minimum=1, every_document=False)
    assert everyone == ["near.jsonl: no near-miss question about 'bees'"] and some == []


@pytest.mark.skipif(
    not PYTHON_DOCS.is_dir(),
    reason="Debian's python3.11-doc is not installed (apt-get install python3.11-doc): the python-docs sets are "
    "about the documents scripts/python_docs_pool.py makes from it",
)
def test_the_python_docs_sets_pass_their_checks_against_the_pool(tmp_path: Path) -> None:
    load_script(REPO / "scripts" / "python_docs_pool.py").main(["--out", str(tmp_path / "pool")])
    taken = {q.id for name in ("golden.jsonl", "golden-large.jsonl") for q in load_golden(REPO / "eval" / name)}

    assert _check_golden().check_python_docs(tmp_path / "pool", taken, verbose=False) == []
    assert len(load_golden(REPO / "eval" / "python-docs.jsonl")) >= 20
    assert len(load_golden(REPO / "eval" / "python-docs-near-miss.jsonl")) >= 20


def test_a_missing_pool_is_named_with_the_command_that_makes_it(tmp_path: Path) -> None:
    errors = _check_golden().check_python_docs(tmp_path / "absent", set(), verbose=False)
    assert errors == [
        f"--python-docs {tmp_path / 'absent'}: no such folder; make it with scripts/python_docs_pool.py "
        f"--out {tmp_path / 'absent'}"
    ]
