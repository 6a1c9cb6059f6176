"""The check every trainer passes: stopped at step 3 and rerun, it ends with the weights of a run that never stopped."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sextant.training.trainer import CHECKPOINT, StepReport

Run = Callable[[Path, Callable[[StepReport], None] | None], object]


def resumed_steps(run: Run, weights: Callable[[Path], dict[str, Any]], tmp_path: Path) -> list[int]:
    """Train ``run`` whole and interrupted-then-resumed; assert equal weights; return the resumed run's steps."""
    import torch

    torch.set_num_threads(1)
    run(tmp_path / "whole", None)

    def stop_at_step_3(report: StepReport) -> None:
        if report.step == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run(tmp_path / "resumed", stop_at_step_3)
    assert (tmp_path / "resumed" / CHECKPOINT).is_file()
    steps: list[int] = []
    run(tmp_path / "resumed", lambda r: steps.append(r.step))
    assert not (tmp_path / "resumed" / CHECKPOINT).exists()
    whole, resumed = weights(tmp_path / "whole"), weights(tmp_path / "resumed")
    assert whole.keys() == resumed.keys() and all(torch.equal(whole[k], resumed[k]) for k in whole)
    return steps
