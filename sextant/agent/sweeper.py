"""The workspace sweeper: expired and closed workspaces are deleted, with their stores, once no request uses them."""

from __future__ import annotations

import asyncio
import logging

from sextant.agent.kb_client import KbFailed, KbScope, KbUnavailable, ScopedKb, ToolRefused
from sextant.agent.state import AgentState

log = logging.getLogger(__name__)

# How often expired workspaces are looked for: one is gone within this long after its last request ends.
SWEEP_S = 10.0


async def sweep(state: AgentState) -> int:
    """Delete every expired or closed workspace that no request is using; how many went."""
    if state.workspaces is None:
        return 0
    dropped = 0
    for workspace in state.workspaces.due():
        try:
            await ScopedKb(state.kb, KbScope(workspace.id)).drop_workspace()
        except (KbUnavailable, KbFailed, ToolRefused) as exc:
            log.error("cannot delete workspace %s yet: %s", workspace.id[:8], exc)
            continue
        state.workspaces.remove(workspace)
        state.writers.pop(workspace.id, None)
        dropped += 1
    return dropped


async def sweep_forever(state: AgentState) -> None:
    while True:
        try:
            await sweep(state)
        except Exception:  # the sweep must outlive one bad pass; the next one retries
            log.exception("workspace sweep failed")
        await asyncio.sleep(SWEEP_S)
