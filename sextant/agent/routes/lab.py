"""The Index Lab: the benchmark curves, and one query through every index side by side."""

from __future__ import annotations

from fastapi import APIRouter

from sextant.agent.deps import Kb, Limited, State, kb_errors
from sextant.agent.lab import CompareRequest, LabOverview, read_overview
from sextant.contract.ann import AnnComparison

router = APIRouter()


@router.get("/lab")
async def lab(state: State) -> LabOverview:
    """The Index Lab's benchmark curves: recall@10 against queries per second, per index and library."""
    return read_overview(state.settings.lab_results_path())


@router.post("/lab/compare", dependencies=[Limited])
async def lab_compare(body: CompareRequest, kb: Kb) -> AnnComparison:
    """The same query through every index over this knowledge base's vectors, side by side (kb_ann_compare's result)."""
    with kb_errors():
        return await kb.ann_compare(body.query, body.k)
