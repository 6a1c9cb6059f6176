"""``sextant-lab bench``: our indexes against FAISS and hnswlib on shared and synthetic sets; JSON + plots.

sextant-lab bench [--sizes 100000 [1000000 ...]] [--no-shared] [--data DIR] [--out DIR] [--nq 1000]
sextant-lab tables FILE.json ...
"""

from __future__ import annotations

import os

# One thread everywhere, set before NumPy loads its BLAS: the comparison is single-threaded by design.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

REPO = Path(__file__).resolve().parent.parent.parent
LAB_FORMAT = 1


def default_data() -> Path:
    return Path(os.environ.get("SEXTANT_DATA_DIR", REPO.parent / "shared" / "data"))


def bench(ns: argparse.Namespace) -> int:
    from sextant.lab import datasets, plot, references, sweep

    missing = references.available()
    if missing:
        print(f"sextant-lab: the reference libraries are missing: {missing}", file=sys.stderr)
        return 2
    sets: list[datasets.Dataset] = []
    if ns.shared:
        found = datasets.shared(ns.data / "ann")
        if not found:
            print(f"sextant-lab: no ANN sets under {ns.data / 'ann'}; skipping them", file=sys.stderr)
        sets += found
    for n in ns.sizes:
        print(f"generating {n:,} clustered vectors and exact ground truth…", file=sys.stderr)
        sets.append(datasets.synthetic(n, nq=ns.nq, cache=ns.out / "data"))
    records: list[dict[str, Any]] = []
    for ds in sets:
        started = time.perf_counter()
        print(f"{ds.name}: n={ds.xb.shape[0]:,} d={ds.xb.shape[1]} nq={ds.xq.shape[0]}", file=sys.stderr)
        record = sweep.report(ds, sweep.measure(ds, repeats=ns.repeats))
        record["plot"] = str(plot.recall_qps(record, ns.plots / f"ann-{ds.name}.png"))
        record["seconds"] = round(time.perf_counter() - started, 1)
        records.append(record)
        print(json.dumps(record["goals"], indent=1), file=sys.stderr)
        _write(ns.json, records)
    return 0


def _write(path: Path, records: list[dict[str, Any]]) -> None:
    from sextant.lab.sweep import K

    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "format": LAB_FORMAT,
        "k": K,
        "threads": 1,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "datasets": records,
    }
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="sextant-lab", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("bench", help="recall@10 vs queries/s of every index, beside FAISS and hnswlib")
    b.add_argument(
        "--sizes", type=int, nargs="*", default=[100_000], help="clustered 384-d sets to generate (default 100000)"
    )
    b.add_argument("--no-shared", dest="shared", action="store_false", help="skip the sets under <data>/ann/")
    b.add_argument(
        "--data",
        type=Path,
        default=default_data(),
        help="shared data folder (default $SEXTANT_DATA_DIR or ../shared/data)",
    )
    b.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "lab", help="generated sets are cached here")
    b.add_argument("--json", type=Path, help="where the results go (default OUT/lab.json)")
    b.add_argument("--plots", type=Path, help="folder for the PNGs (default OUT)")
    b.add_argument("--nq", type=int, default=1000, help="queries per synthetic set")
    b.add_argument("--repeats", type=int, default=3, help="timings per point; the median is kept")
    t = sub.add_parser("tables", help="Markdown tables and goal verdicts of a lab JSON file")
    t.add_argument("json", type=Path, nargs="+", help="files written by bench")
    ns = parser.parse_args(argv)
    if ns.command == "tables":
        from sextant.lab.tables import markdown

        for path in ns.json:
            for record in json.loads(path.read_text(encoding="utf-8"))["datasets"]:
                print(markdown(record) + "\n")
        return
    ns.json = ns.json or ns.out / "lab.json"
    ns.plots = ns.plots or ns.out
    sys.exit(bench(ns))
