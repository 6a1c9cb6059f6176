"""The regression gate: a metric that falls more than ``TOLERANCE`` below the baseline fails CI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TOLERANCE = 0.02


def regressions(current: dict[str, Any], baseline: dict[str, Any], tolerance: float = TOLERANCE) -> list[str]:
    """Each metric of each mode that got worse by more than ``tolerance``, in words.

    Higher is better for every ranking metric and for ``abstain_correct``; lower is better for
    ``abstain_wrong``. A mode in the baseline that is missing (or unavailable) now is a regression.
    """
    now = {row["mode"]: row for row in current["modes"]}
    found: list[str] = []
    for old in baseline["modes"]:
        if not old.get("available", True):
            continue
        mode = old["mode"]
        new = now.get(mode)
        if new is None or not new.get("available", True):
            found.append(f"{mode}: was graded in the baseline, missing now")
            continue
        for metric, before in old["metrics"].items():
            after = new["metrics"].get(metric)
            if after is None or after < before - tolerance:
                found.append(f"{mode} {metric}: {before:.3f} -> {after if after is None else f'{after:.3f}'}")
        for key, sign in (("abstain_correct", 1), ("abstain_wrong", -1)):
            before, after = old.get(key), new.get(key)
            if before is not None and after is not None and sign * (after - before) < -tolerance:
                found.append(f"{mode} {key}: {before:.3f} -> {after:.3f}")
    return found


def read(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def write(path: Path, report: dict[str, Any]) -> None:
    path.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n", encoding="utf-8")
