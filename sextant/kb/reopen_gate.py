"""Calls in flight on a client, and a reopen that waits for them: a readers-writer gate.

The store reopens its Chroma client when another process has written (``ChunkStore.reload``); a call another
thread has under way on the old client would fail once it is closed. Calls enter the gate (many at once, and
re-entrantly: a store method calls others); a reopen waits until none is inside, and new calls wait for it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class ReopenGate:
    """Many calls at once, or one reopen."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._inside = 0
        self._reopening = False
        self._depth = threading.local()  # how deep this thread is inside, so a nested call never waits

    @contextmanager
    def call(self) -> Iterator[None]:
        """Use the client; waits while a reopen is under way (unless this thread is already inside)."""
        depth = getattr(self._depth, "n", 0)
        if depth == 0:
            with self._cond:
                while self._reopening:
                    self._cond.wait()
                self._inside += 1
        self._depth.n = depth + 1
        try:
            yield
        finally:
            self._depth.n = depth
            if depth == 0:
                with self._cond:
                    self._inside -= 1
                    if not self._inside:
                        self._cond.notify_all()

    @contextmanager
    def reopening(self) -> Iterator[None]:
        """Replace the client: waits until no call is inside, and holds new ones off until it is done."""
        if getattr(self._depth, "n", 0):
            raise RuntimeError("a store call cannot reopen the store it is inside")
        with self._cond:
            while self._reopening:
                self._cond.wait()
            self._reopening = True
            while self._inside:
                self._cond.wait()
        try:
            yield
        finally:
            with self._cond:
                self._reopening = False
                self._cond.notify_all()
