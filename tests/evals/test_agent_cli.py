"""Which question sets ``sextant-eval-agent`` runs, and that the near-miss set stays out of the gate."""

from __future__ import annotations

from pathlib import Path

import pytest

from sextant.evals import agent_cli, cli

REPO = Path(__file__).resolve().parents[2]


def test_the_near_miss_set_runs_over_the_small_corpus_and_store_but_is_never_graded_by_sextant_eval() -> None:
    eval_dir = REPO / "eval"
    sets = agent_cli.agent_sets(eval_dir)
    small, near = sets["small"], sets["near-miss"]
    assert near.golden == eval_dir / "golden-near-miss.jsonl" and near.golden.exists()
    assert (near.corpus, near.store) == (small.corpus, small.store) == (eval_dir / "corpus" / "documents", "small")
    assert (sets["large"].store, sets["large"].golden) == ("large", eval_dir / "golden-large.jsonl")
    # sextant-eval, its --check gate and the bench sweeps iterate golden_sets: near-miss must not be there
    assert set(cli.golden_sets(eval_dir)) == {"small", "large"}


def test_set_near_miss_is_a_choice(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        agent_cli.main(["--help"])
    assert exc.value.code == 0
    assert "{small,large,near-miss}" in capsys.readouterr().out
