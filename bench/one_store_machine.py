"""The long run of the one-store state machine (``tests/kb/test_store_lock_processes.py``): real processes, many steps.

CI runs the machine for a few examples on each store; this runs it for as many steps as asked, on the embedded
store and on a ``chroma run`` server, and reports steps taken, steps by rule, and the failure if there was one
(Hypothesis then prints the shortest sequence of steps that reproduces it).

    python bench/one_store_machine.py --examples 20 --steps 25 --json bench/out/one_store_machine.json

A run takes hours; to keep working meanwhile, run it from a worktree of its own (``git worktree add``), whose
code its processes then use.
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse
import json
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.chroma_process import running_chroma  # noqa: E402
from tests.kb.test_store_lock_processes import OneStore  # noqa: E402


def run(machine: type[OneStore], examples: int, steps: int) -> dict[str, Any]:
    OneStore.taken.clear()
    started = time.monotonic()
    failure = None
    try:
        run_state_machine_as_test(
            machine,
            settings=settings(
                max_examples=examples,
                stateful_step_count=steps,
                deadline=None,
                suppress_health_check=list(HealthCheck),
                database=None,
            ),
        )
    except Exception:  # the failure is the result to report
        failure = traceback.format_exc()
    return {
        "steps": sum(OneStore.taken.values()),
        "by_rule": dict(OneStore.taken.most_common()),
        "seconds": round(time.monotonic() - started),
        "failure": failure,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=20)
    parser.add_argument("--steps", type=int, default=25, help="most steps per example")
    parser.add_argument("--stores", nargs="+", choices=("embedded", "server"), default=["embedded", "server"])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results: dict[str, Any] = {}
    # The processes run this checkout's code, whatever the environment has installed (a run takes hours: the
    # checkout it measures can be a worktree of its own, left alone meanwhile).
    here = {"PYTHONPATH": str(REPO)}
    for store in args.stores:
        if store == "embedded":
            results[store] = run(type("OneStoreHere", (OneStore,), {"extra_env": here}), args.examples, args.steps)
        else:
            with (
                tempfile.TemporaryDirectory(prefix="sextant-machine-chroma-") as data,
                running_chroma(Path(data)) as url,
            ):
                env = {**here, "SEXTANT_CHROMA_URL": url}
                on_server = type("OneStoreOnAServer", (OneStore,), {"extra_env": env})
                results[store] = run(on_server, args.examples, args.steps)
        r = results[store]
        print(f"{store}: {r['steps']} steps in {r['seconds']} s, {'FAILED' if r['failure'] else 'no failure'}")
        print("  " + ", ".join(f"{name} {n}" for name, n in r["by_rule"].items()))
        if r["failure"]:
            print(r["failure"])
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
