"""A hard cap on model spend per UTC day, kept on disk so that a restart does not reset it.

A limit of 0 is no cap. The cap is money: the agent applies it only to a model whose turns are priced
(``ChatModel.priced``), never to a local one that costs nothing.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

log = logging.getLogger(__name__)


def utc_today() -> date:
    return datetime.now(UTC).date()


class DailyBudget:
    def __init__(self, limit_usd: float, path: Path | None, today: Callable[[], date] = utc_today) -> None:
        self.limit_usd = limit_usd
        self.path = path
        self._today = today
        self._lock = threading.Lock()
        self._day = today()
        self._spent = 0.0
        self._load()

    def _load(self) -> None:
        if self.path is None or not self.path.is_file():
            return
        try:
            saved = json.loads(self.path.read_text(encoding="utf-8"))
            if saved.get("day") == self._day.isoformat():
                self._spent = float(saved.get("spent_usd", 0.0))
        except (OSError, ValueError) as exc:
            # A lost record must not unlock spending: count the day as spent until the file is fixed.
            log.error("cannot read the spend record %s (%s); treating today's budget as spent", self.path, exc)
            self._spent = self.limit_usd

    def _roll(self) -> None:
        today = self._today()
        if today != self._day:
            self._day, self._spent = today, 0.0

    def spent(self) -> float:
        with self._lock:
            self._roll()
            return self._spent

    @property
    def capped(self) -> bool:
        """A limit of 0 means no cap."""
        return self.limit_usd > 0

    def exhausted(self) -> bool:
        return self.capped and self.spent() >= self.limit_usd

    def add(self, cost_usd: float) -> None:
        if cost_usd <= 0:
            return
        with self._lock:
            self._roll()
            self._spent += cost_usd
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                tmp = self.path.with_suffix(".tmp")
                tmp.write_text(json.dumps({"day": self._day.isoformat(), "spent_usd": self._spent}), encoding="utf-8")
                os.replace(tmp, self.path)

    def seconds_until_reset(self) -> int:
        now = datetime.now(UTC)
        midnight = datetime.combine(now.date() + timedelta(days=1), datetime.min.time(), tzinfo=UTC)
        return max(1, int((midnight - now).total_seconds()))
