"""The gate between calls on a client and a reopen of it."""

from __future__ import annotations

import threading

import pytest

from sextant.kb.reopen_gate import ReopenGate


def test_a_reopen_waits_for_the_calls_inside() -> None:
    gate = ReopenGate()
    inside, release, reopened = threading.Event(), threading.Event(), threading.Event()

    def long_call() -> None:
        with gate.call():
            inside.set()
            release.wait(5)

    def reopen() -> None:
        with gate.reopening():
            reopened.set()

    caller = threading.Thread(target=long_call)
    caller.start()
    inside.wait(5)
    reopener = threading.Thread(target=reopen)
    reopener.start()
    assert not reopened.wait(0.2)  # the call is still inside
    release.set()
    for t in (caller, reopener):
        t.join(5)
    assert reopened.is_set()


def test_a_call_waits_for_a_reopen_under_way() -> None:
    gate = ReopenGate()
    reopening, release, called = threading.Event(), threading.Event(), threading.Event()

    def reopen() -> None:
        with gate.reopening():
            reopening.set()
            release.wait(5)

    def call() -> None:
        with gate.call():
            called.set()

    reopener = threading.Thread(target=reopen)
    reopener.start()
    reopening.wait(5)
    caller = threading.Thread(target=call)
    caller.start()
    assert not called.wait(0.2)  # held off while the client is replaced
    release.set()
    for t in (reopener, caller):
        t.join(5)
    assert called.is_set()


def test_a_nested_call_does_not_wait_for_a_reopen_queued_behind_its_outer_call() -> None:
    gate = ReopenGate()
    outer_in, reopen_queued = threading.Event(), threading.Event()
    done: list[str] = []

    def nested() -> None:
        with gate.call():
            outer_in.set()
            reopen_queued.wait(5)
            with gate.call():  # would deadlock if it queued behind the reopen
                done.append("nested")

    def reopen() -> None:
        outer_in.wait(5)
        threading.Timer(0.1, reopen_queued.set).start()
        with gate.reopening():
            done.append("reopen")

    threads = [threading.Thread(target=f) for f in (nested, reopen)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
    assert done == ["nested", "reopen"]


def test_a_call_cannot_reopen_the_client_it_is_using() -> None:
    gate = ReopenGate()
    with gate.call(), pytest.raises(RuntimeError, match="cannot reopen"), gate.reopening():
        pass
