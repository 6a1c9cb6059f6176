"""Held-out splits by hash, qrels round trips, and hard negatives mined by the product's search."""

from __future__ import annotations

from pathlib import Path

import pytest

from sextant.evals.beir import BeirDoc, read_qrels
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.training.pairs import (
    Group,
    MiningConfig,
    is_held_out,
    load_groups,
    mine_groups,
    save_groups,
    split_qrels,
    write_qrels,
)


def test_a_query_is_held_out_by_its_id_alone_and_the_share_is_close_to_the_fraction() -> None:
    ids = [f"q{i}" for i in range(4000)]
    held = [q for q in ids if is_held_out(q, 0.2)]
    assert 0.18 < len(held) / len(ids) < 0.22
    assert held == [q for q in reversed(ids) if is_held_out(q, 0.2)][::-1]  # order-independent
    assert not any(is_held_out(q, 0.0) for q in ids) and all(is_held_out(q, 1.0) for q in ids)


def test_split_keeps_each_query_whole_on_one_side_and_round_trips_as_qrels(tmp_path: Path) -> None:
    qrels = {f"q{i}": {f"d{i}": 1, f"d{i + 1}": 2} for i in range(50)}
    fit, held = split_qrels(qrels, 0.3)
    assert not set(fit) & set(held) and {**fit, **held} == qrels
    assert read_qrels(write_qrels(tmp_path / "split" / "held.tsv", held)) == held


def test_saved_groups_load_only_for_the_same_fingerprint(tmp_path: Path) -> None:
    groups = [Group("q1", "what?", "answer", ("no", "nope")), Group("q2", "who?", "her", ("him",))]
    save_groups(tmp_path / "g.jsonl", groups, "abc")
    assert load_groups(tmp_path / "g.jsonl", "abc") == groups
    assert load_groups(tmp_path / "g.jsonl", "other") is None
    assert load_groups(tmp_path / "missing.jsonl", "abc") is None


DOCS = {
    "espresso": BeirDoc(
        "espresso", "Espresso care", "Descale the espresso machine every eight weeks with citric acid."
    ),
    "kettle": BeirDoc("kettle", "Kettle care", "Descale the kettle when white scale builds up on the element."),
    "grinder": BeirDoc("grinder", "Grinder care", "Clean the espresso grinder burrs monthly with a brush."),
    "bees": BeirDoc("bees", "Bees", "Swarm control for bee colonies starts in May."),
    "roses": BeirDoc("roses", "Roses", "Prune roses in late winter above an outward bud."),
}


@pytest.mark.slow
def test_hard_negatives_are_unjudged_search_results_and_positives_are_the_judged_documents(kb: KnowledgeBase) -> None:
    for doc in DOCS.values():
        kb.ingest(doc.id, doc.as_document())
    qrels = {"q1": {"espresso": 1}}
    groups = mine_groups(
        kb,
        DOCS,
        {"q1": "how often to descale the espresso machine"},
        qrels,
        MiningConfig(hard_negatives=2, random_negatives=1),
    )
    (group,) = groups
    assert group.positive == DOCS["espresso"].as_document().text
    assert len(group.negatives) == 3 and group.positive not in group.negatives
    # The two hardest are what the product's search ranks next: the other descaling and espresso texts.
    assert set(group.negatives[:2]) == {DOCS[d].as_document().text for d in ("kettle", "grinder")}
