"""``sextant-train-reranker``: train Sextant's own cross-encoder on BEIR-format data, offline.

    sextant-train-reranker --data ../shared/data/beir/scifact --out models/reranker-scifact
    sextant-train-reranker evaluate --model models/reranker-scifact --data ... --qrels ...
    sextant-train-reranker pseudo --docs FOLDER --out POOL      # a BEIR folder of questions made from text

Each dataset's queries are split before anything is mined: a dataset with ``qrels/dev.tsv`` trains
on ``train.tsv`` and holds out dev; one without holds out a hashed fraction of its train queries,
and both parts are written as qrels files under ``--splits`` for ``sextant-eval beir --qrels``.
Hard negatives come from the product's own search over the store ``sextant-eval beir`` builds
(``.sextant-eval/beir-<dataset>``, reused). The output folder is a sentence-transformers CrossEncoder:
point ``SEXTANT_RERANKER`` at it. Rerunning the same command resumes from the last checkpoint.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from sextant.evals import beir
from sextant.training.pairs import (
    Group,
    MiningConfig,
    Qrels,
    load_groups,
    mine_groups,
    save_groups,
    split_qrels,
    write_qrels,
)
from sextant.training.trainer import RunConfig, StepReport, TrainConfig, write_training_record

if TYPE_CHECKING:
    from sextant.kb.knowledge_base import KnowledgeBase


def held_out_split(data: Path, fraction: float, splits: Path) -> tuple[Qrels, Path]:
    """``(qrels to train on, path of the held-out qrels)`` for one BEIR folder.

    Raises:
        BeirError: the folder has no ``qrels/train.tsv``.
    """
    train = beir.read_qrels(data / "qrels" / "train.tsv")
    dev = data / "qrels" / "dev.tsv"
    if dev.is_file():
        held_out = beir.read_qrels(dev)
        return {q: j for q, j in train.items() if q not in held_out}, dev
    fit, held = split_qrels(train, fraction)
    folder = splits / data.resolve().name
    write_qrels(folder / "fit.tsv", fit)
    return fit, write_qrels(folder / "heldout.tsv", held)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "evaluate":
        from sextant.training.heldout import main as evaluate_main

        evaluate_main(args[1:])
        return
    if args and args[0] == "pseudo":
        from sextant.training.pseudo_beir import main as pseudo_main

        pseudo_main(args[1:])
        return
    ns = parse_offline(_parser(), args)
    from sextant.kb.embeddings import quiet_model_loading

    quiet_model_loading()
    config = TrainConfig(
        base=ns.base,
        layers=ns.layers,
        max_length=ns.max_length,
        group_size=ns.group_size,
        groups_per_step=ns.groups_per_step,
        epochs=ns.epochs,
        learning_rate=ns.lr,
        max_steps=ns.max_steps or None,
        checkpoint_every=ns.checkpoint_every,
        seed=ns.seed,
    )
    mining = MiningConfig(
        positives_per_query=ns.positives_per_query,
        hard_negatives=ns.hard_negatives,
        random_negatives=ns.random_negatives,
        seed=ns.seed,
    )
    started = time.perf_counter()
    groups: list[Group] = []
    sources = []
    with exits_on("sextant-train-reranker", beir.BeirError):
        for data in ns.data:
            mined, held_out = _groups_for(data, ns, mining)
            groups += mined
            sources.append({"dataset": data.resolve().name, "groups": len(mined), "held_out_qrels": str(held_out)})
            say(f"{data.resolve().name}: {len(mined)} training groups; held out: {held_out}")
    if not groups:
        print("sextant-train-reranker: no training query has a judged document in the corpus", file=sys.stderr)
        raise SystemExit(2)
    mined_seconds = time.perf_counter() - started

    import torch

    from sextant.training.trainer import train

    torch.set_num_threads(ns.threads)
    fingerprint = hashlib.sha256(json.dumps([sources, [asdict(g) for g in groups]]).encode()).hexdigest()
    record = train(groups, config, ns.out, fingerprint=fingerprint, report=progress_reporter(ns.log_every))
    record.update(sources=sources, mining=asdict(mining), mining_seconds=round(mined_seconds, 1))
    if not ns.no_onnx:
        record["onnx"] = _export(ns.out)
    write_training_record(ns.out, record)
    say(f"trained in {record['train_seconds']:.0f} s ({record['steps']} steps); use it with SEXTANT_RERANKER={ns.out}")


def _groups_for(data: Path, ns: argparse.Namespace, mining: MiningConfig) -> tuple[list[Group], Path]:
    """Mined groups for one dataset (reused from an earlier run when nothing changed), and its held-out qrels."""
    name = data.resolve().name
    fit, held_out = held_out_split(data, ns.held_out, ns.splits)
    if ns.limit_queries:
        fit = {q: fit[q] for q in sorted(fit)[: ns.limit_queries]}
    fingerprint = hashlib.sha256(json.dumps([name, sorted(fit.items()), asdict(mining)]).encode()).hexdigest()
    cache = ns.out / f"groups-{name}.jsonl"
    cached = load_groups(cache, fingerprint)
    if cached is not None:
        return cached, held_out
    docs = {d.id: d for d in beir.read_corpus(data)}
    queries = beir.read_queries(data)
    with beir_store(data, ns.store_root, docs.values()) as kb:
        groups = mine_groups(kb, docs, queries, fit, mining, progress=_mining_progress)
    save_groups(cache, groups, fingerprint)
    return groups, held_out


@contextlib.contextmanager
def beir_store(data: Path, store_root: Path, docs: Iterable[beir.BeirDoc]) -> Iterator[KnowledgeBase]:
    """The store ``sextant-eval beir`` builds and reuses for ``data``, with any document it lacks ingested.

    Only missing documents: re-checking every stored one costs a full re-embed whenever the
    content-hash recipe changes, and training needs the documents, not their latest chunking.
    The store is closed on the way out, also when the ingest fails.
    """
    from sextant.kb.knowledge_base import KnowledgeBase

    with KnowledgeBase.open(beir.store_settings(data.resolve().name, store_root)) as kb:
        stored = {d.id for d in kb.documents()}
        beir.ingest(kb, (d for d in docs if d.id not in stored), progress=lambda c: say(f"  ingested {c} documents"))
        yield kb


def _export(folder: Path) -> list[str] | None:
    """The ONNX copies the product prefers (learning/reranker.md); the torch folder works without them."""
    from sextant.training.onnx_export import export_onnx

    try:
        return [str(path) for path in export_onnx(folder)]
    except ImportError as exc:
        say(f"no ONNX export ({exc}): pip install 'sextant-kb[train]' and rerun; the torch model is saved")
        return None


def _mining_progress(done: int, total: int) -> None:
    if done % 100 == 0 or done == total:
        say(f"  mined {done}/{total} queries")


def progress_reporter(every: int) -> Callable[[StepReport], None]:
    started = time.perf_counter()

    def report(r: StepReport) -> None:
        if r.step % every and r.step != r.steps:
            return
        elapsed = time.perf_counter() - started
        eta = elapsed / r.step * (r.steps - r.step)
        say(f"  step {r.step}/{r.steps}  loss {r.loss:.3f}  {r.pairs_per_second:.0f} pairs/s  eta {eta / 60:.1f} min")

    return report


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@contextlib.contextmanager
def exits_on(prog: str, *errors: type[Exception]) -> Iterator[None]:
    """A command's bad input (``errors``) as one line ``prog: reason`` on stderr and exit status 2."""
    try:
        yield
    except errors as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        raise SystemExit(2) from exc


def training_parser(prog: str, description: str | None, out_help: str, run: RunConfig) -> argparse.ArgumentParser:
    """A training command's parser with what every trainer takes: output, held-out split, run and reports."""
    p = argparse.ArgumentParser(
        prog=prog, description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--out", type=Path, required=True, help=out_help)
    p.add_argument("--held-out", type=float, default=0.2, help="share of train queries held out where no dev split")
    p.add_argument("--splits", type=Path, default=Path("models/splits"), help="where split qrels files are written")
    p.add_argument("--lr", type=float, default=run.learning_rate)
    p.add_argument("--checkpoint-every", type=int, default=run.checkpoint_every)
    p.add_argument("--seed", type=int, default=run.seed)
    p.add_argument("--threads", type=int, default=2, help="torch threads for training")
    p.add_argument("--log-every", type=int, default=10, help="report every N steps")
    return p


def parse_offline(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """Parse a training command's arguments; models load from local folders only, never from a hub."""
    ns = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    return ns


def _parser() -> argparse.ArgumentParser:
    defaults, mining = TrainConfig(), MiningConfig()
    p = training_parser("sextant-train-reranker", __doc__, "output CrossEncoder folder (and its checkpoint)", defaults)
    p.add_argument("--data", type=Path, nargs="+", required=True, help="BEIR folders to train on")
    p.add_argument("--store-root", type=Path, default=Path(".sextant-eval"), help="folder of the beir-<name> stores")
    p.add_argument("--base", default=defaults.base, help="sentence-transformers encoder to start from")
    p.add_argument("--layers", type=int, default=defaults.layers, help="keep the first N transformer layers")
    p.add_argument("--max-length", type=int, default=defaults.max_length, help="tokens per (query, passage) pair")
    p.add_argument("--group-size", type=int, default=defaults.group_size, help="1 positive + N-1 negatives")
    p.add_argument("--groups-per-step", type=int, default=defaults.groups_per_step)
    p.add_argument("--epochs", type=int, default=defaults.epochs)
    p.add_argument(
        "--max-steps", type=int, default=defaults.max_steps, help="stop after this many steps (0: run every epoch)"
    )
    p.add_argument("--positives-per-query", type=int, default=mining.positives_per_query)
    p.add_argument("--hard-negatives", type=int, default=mining.hard_negatives)
    p.add_argument("--random-negatives", type=int, default=mining.random_negatives)
    p.add_argument("--limit-queries", type=int, default=None, help="train on the first N queries only (smoke runs)")
    p.add_argument("--no-onnx", action="store_true", help="skip the int8 ONNX export")
    return p
