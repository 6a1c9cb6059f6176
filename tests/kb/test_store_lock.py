"""The store folder's lock and change counter, between threads and between real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from sextant.kb.store_lock import StoreLock

# A child that takes the folder's lock (blocking or not), says what it got on stdout, then waits for stdin to close.
CHILD = """
import sys
from pathlib import Path
from sextant.kb.store_lock import StoreLock
lock = StoreLock.for_folder(Path(sys.argv[1]))
with lock.exclusive(blocking=sys.argv[2] == "wait") as held:
    print("held" if held else "busy", lock.changes(), flush=True)
    sys.stdin.read()
"""


def _child(folder: Path, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(folder), mode], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )


def _first_line(child: subprocess.Popen[str]) -> str:
    assert child.stdout is not None
    return child.stdout.readline().strip()


def test_one_object_per_folder_however_the_path_is_spelled(tmp_path: Path) -> None:
    (tmp_path / "store").mkdir()
    assert StoreLock.for_folder(tmp_path / "store") is StoreLock.for_folder(tmp_path / "store" / ".." / "store")
    assert StoreLock.for_folder(tmp_path / "store") is not StoreLock.for_folder(tmp_path / "other")


def test_the_lock_is_reentrant_in_a_thread_and_excludes_other_threads(tmp_path: Path) -> None:
    lock = StoreLock.for_folder(tmp_path)
    seen: list[bool] = []

    def try_from_another_thread() -> None:
        with lock.exclusive(blocking=False) as held:
            seen.append(held)

    assert not lock.held_here()
    with lock.exclusive() as outer, lock.exclusive(blocking=False) as inner:
        assert outer and inner and lock.held_here()
        other = threading.Thread(target=try_from_another_thread)
        other.start()
        other.join()
    assert seen == [False] and not lock.held_here()
    try_from_another_thread()
    assert seen == [False, True]


def test_another_process_waits_for_the_lock_and_sees_the_counter_it_moved(tmp_path: Path) -> None:
    lock = StoreLock.for_folder(tmp_path)
    assert lock.changes() == 0
    with lock.exclusive():
        assert lock.bump() == 1
        busy = _child(tmp_path, "try")
        assert _first_line(busy) == "busy 1"
        busy.communicate("")
        waiting = _child(tmp_path, "wait")
        assert lock.bump() == 2
    assert _first_line(waiting) == "held 2"  # it got the lock only now, and reads what was written under it
    with lock.exclusive(blocking=False) as held:
        assert not held  # the child holds it until its stdin closes
    waiting.communicate("")
    with lock.exclusive(blocking=False) as held:
        assert held


def test_a_holder_killed_with_sigkill_releases_the_lock(tmp_path: Path) -> None:
    holder = _child(tmp_path, "wait")
    assert _first_line(holder) == "held 0"
    lock = StoreLock.for_folder(tmp_path)
    with lock.exclusive(blocking=False) as held:
        assert not held
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    with lock.exclusive(blocking=False) as held:
        assert held
    assert holder.stdin is not None and holder.stdout is not None
    holder.stdin.close()
    holder.stdout.close()


def test_an_unreadable_counter_reads_as_zero_and_moves_on_from_there(tmp_path: Path) -> None:
    lock = StoreLock.for_folder(tmp_path)
    (tmp_path / "sextant.changes").write_bytes(b"garbage")
    assert lock.changes() == 0
    with lock.exclusive():
        assert lock.bump() == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sextant.changes", "sextant.lock"]
