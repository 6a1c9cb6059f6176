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
    assert "{small,large,near-miss,python-docs,python-docs-near-miss}" in capsys.readouterr().out


def test_the_python_docs_sets_share_one_store_and_take_their_documents_from_corpus() -> None:
    sets = agent_cli.agent_sets(REPO / "eval")
    answerable, near = sets["python-docs"], sets["python-docs-near-miss"]
    assert answerable.golden.exists() and near.golden.exists()
    assert answerable.corpus is None and near.corpus is None
    assert answerable.store == near.store == "python-docs"


def test_a_set_outside_the_repository_without_corpus_is_refused_with_the_command_that_makes_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with pytest.raises(SystemExit) as exc:
        agent_cli.main(["--set", "python-docs", "--store", str(tmp_path)])
    assert exc.value.code == 2
    assert "needs --corpus DIR, a folder made by scripts/python_docs_pool.py" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        agent_cli.main(["--set", "python-docs", "--corpus", str(tmp_path / "absent"), "--store", str(tmp_path)])
    assert "is not a folder" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # refused before any store was made
