"""``sextant-kb --watch DIR...``: while the server serves, each change under the folders is a sync.

A thread waits on the folders with watchfiles (inotify, FSEvents or ReadDirectoryChangesW under the hood).
watchfiles hands over a batch once no event has come for ``STEP_MS`` (at most ``DEBOUNCE_MS`` after the first);
the watcher then waits until every path named in the batch has kept its size and mtime for ``SETTLE_S``, and
runs one sync: ``sync.plan_for`` (a fresh scan of the whole folders against the store) and ``sync.apply``. So
the rules are the sync's, one implementation:

- the plan is made from the whole folders, never from the events: a move needs both of its ends, an event may
  be missed (a folder moved in whole, a change during the previous pass) and the next scan still sees it;
- an editor's save-by-rename (write ``.x.md.tmp`` or ``x.md~``, rename it over ``x.md``) lands in one batch,
  and the scan sees only the outcome; hidden files and lock files are no documents (``supported_files``);
- a file still being written is waited for while it grows; one that is still unreadable when parsed is a
  refused update, which keeps the stored version, and its writer's next write starts another pass;
- every write is ``KnowledgeBase.ingest`` or ``forget``: one commit per document under the knowledge base's
  write lock, interleaved with the tools' writes, and a search sees a document's old version or its new one.

A watched folder that disappears (an unmounted drive) pauses the watch rather than forgetting its documents.
The first pass runs when watching has begun, so a change made while the server was down, or during a pass
that was killed, is found then (a kill -9 mid-pass leaves what ``ChunkStore.repair`` fixes at the next open).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
from mcp.server.subscriptions import ResourcesListChanged, SubscriptionBus
from watchfiles import watch

from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.loader_sandbox import BoundedParser
from sextant.kb.loaders import count_types, describe_unreadable
from sextant.kb.sync import Done, apply, check_roots, plan_for

log = logging.getLogger(__name__)

# Chosen by bench/watch_latency.py (learning/watch.md): how long watchfiles waits for a quiet moment, and the
# most it groups events for; the Rust side wakes once per STEP_MS, which is what watching costs idle.
STEP_MS = 50
DEBOUNCE_MS = 1600
SETTLE_S = 0.2  # a changed file's size and mtime must hold this long before it is read
MAX_SETTLE_S = 30.0  # a file written for longer is read as it stands; its next change is read again
FIRST_PASS_MS = 1000  # the first pass runs this long after watching starts, or at the first change

Stat = tuple[int, int] | None  # (size, mtime_ns); None: the path is not there


@dataclass(frozen=True, slots=True)
class Pass:
    """One pass: the paths whose events started it (none for the first pass), and what it did."""

    paths: frozenset[Path]
    done: list[Done]

    @property
    def changed(self) -> bool:
        """Whether it changed the document set (what a ``list_changed`` notification is for)."""
        return any(not s.refused and (s.outcome is None or s.outcome.status != "unchanged") for s in self.done)


class Watcher:
    """Keeps the store mirroring ``roots`` from a thread of its own until ``stop``; a context manager."""

    def __init__(
        self,
        kb: KnowledgeBase,
        parser: BoundedParser,
        roots: Iterable[Path],
        *,
        category: str = "",
        on_pass: Callable[[Pass], None] | None = None,
        step_ms: int = STEP_MS,
        settle_s: float = SETTLE_S,
    ) -> None:
        """``on_pass`` is called after each pass, from the watcher's thread.

        Raises:
            SyncError: a folder is missing or a file, or one lies inside another.
        """
        self.kb, self.parser, self.category = kb, parser, category
        self.roots = check_roots(roots)
        self.on_pass = on_pass
        self.step_ms, self.settle_s = step_ms, settle_s
        self.unreadable: dict[str, int] = {}  # files of the last pass no loader reads, by type (kb_stats shows it)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sextant-watch", daemon=True)

    def start(self) -> None:
        log.info("watching %s", ", ".join(map(str, self.roots)))
        self._thread.start()

    def stop(self) -> None:
        """Stop after the document being written, if any: each is its own commit, so nothing is left half-done."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def __enter__(self) -> Watcher:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        first = True
        batches = watch(
            *self.roots,
            debounce=DEBOUNCE_MS,
            step=self.step_ms,
            stop_event=self._stop,
            rust_timeout=FIRST_PASS_MS,
            yield_on_timeout=True,
            raise_interrupt=False,
        )
        for changes in batches:
            if not (changes or first):
                continue  # an idle timeout; it is there only to start the first pass
            first = False
            paths = frozenset(Path(path) for _, path in changes)
            if self._settled(paths):
                self.sync_once(paths)

    def _settled(self, paths: frozenset[Path]) -> bool:
        """Wait until none of ``paths`` changes size or mtime for ``settle_s``; False if stopped meanwhile."""
        before = _stats(paths)
        waited = 0.0
        while not self._stop.wait(self.settle_s):
            waited += self.settle_s
            now = _stats(paths)
            if now == before or waited >= MAX_SETTLE_S:
                return True
            before = now
        return False

    def sync_once(self, paths: frozenset[Path] = frozenset()) -> list[Done]:
        """One pass (for changes to ``paths``): scan the folders, plan against the store, apply; a failure is
        logged and the watch goes on."""
        gone = [root for root in self.roots if not root.is_dir()]
        if gone:
            log.warning("watch paused: %s is gone; its documents stay until it is back", ", ".join(map(str, gone)))
            return []
        try:
            todo = plan_for(self.kb, self.roots, category=self.category)
            for path, reason in todo.refused:
                log.warning("watch: refused %s: %s", path, reason)
            unreadable = count_types(todo.unreadable)
            if unreadable and unreadable != self.unreadable:
                log.warning("watch: %s", describe_unreadable(unreadable))
            self.unreadable = unreadable
            done = apply(self.kb, self.parser, todo, category=self.category, on_done=self._done)
            if self.on_pass is not None:
                self.on_pass(Pass(paths, done))
        except _Stopped:
            return []
        except Exception:
            # The watch outlives one bad pass (a store that refused a write, a folder unreadable for a moment):
            # the next change plans again from what is then on disk and in the store.
            log.exception("watch: a pass failed; the next change retries it")
            return []
        return done

    def _done(self, step: Done) -> None:
        what = step.action.describe(self.roots)
        if step.refused:
            log.warning("watch: %s: refused: %s", what, step.refused)
        else:
            log.info("watch: %s", what)
        if self._stop.is_set():
            raise _Stopped  # between two commits: the rest of the plan is found again at the next start


class _Stopped(Exception):
    """Raised out of ``apply`` between two documents when the watcher is stopped."""


@asynccontextmanager
async def watching(
    kb: KnowledgeBase, parser: BoundedParser, roots: Sequence[Path], bus: SubscriptionBus
) -> AsyncIterator[Watcher | None]:
    """Watch ``roots`` (none: do nothing, and yield None) while the block runs, in a server's lifespan; after each
    pass that changed the documents, publish ``list_changed`` on ``bus`` on this event loop (its listeners run
    there)."""
    if not roots:
        yield None
        return
    token = anyio.lowlevel.current_token()

    def announce(report: Pass) -> None:
        if report.changed:
            anyio.from_thread.run(bus.publish, ResourcesListChanged(), token=token)

    watcher = Watcher(kb, parser, roots, on_pass=announce)
    watcher.start()
    try:
        yield watcher
    finally:
        # Off the loop, which a pass ending meanwhile needs for its announcement; shielded, so a server
        # cancelled on its way out still lets the document being written finish before the store closes.
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(watcher.stop)


def _stats(paths: Iterable[Path]) -> dict[Path, Stat]:
    out: dict[Path, Stat] = {}
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            out[path] = None
        else:
            out[path] = (st.st_size, st.st_mtime_ns)
    return out
