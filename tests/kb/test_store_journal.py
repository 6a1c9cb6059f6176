"""The journal of a shared store: complete runs of entries only, torn lines ignored, kept to a bounded size."""

from __future__ import annotations

from pathlib import Path

import pytest

from sextant.kb import store_journal
from sextant.kb.store_journal import JOURNAL_FILE, JournalEntry, StoreJournal, net_change


def entry(change: int, removed: tuple[str, ...] = (), added: tuple[str, ...] = ()) -> JournalEntry:
    return JournalEntry(change, 100 + change, removed, added)


def test_the_entries_after_a_counter_come_back_in_order(tmp_path: Path) -> None:
    journal = StoreJournal(tmp_path)
    for e in (entry(1, added=("a",)), entry(3, added=("c",)), entry(2, removed=("a",))):  # appended out of order
        journal.append(e)
    assert journal.since(0, 3) == [entry(1, added=("a",)), entry(2, removed=("a",)), entry(3, added=("c",))]
    assert journal.since(1, 3) == [entry(2, removed=("a",)), entry(3, added=("c",))]
    assert journal.since(3, 3) == []


def test_a_missing_entry_makes_the_run_unusable(tmp_path: Path) -> None:
    journal = StoreJournal(tmp_path)
    journal.append(entry(1))
    journal.append(entry(3))  # the writer of 2 died before its entry
    assert journal.since(0, 3) is None
    assert journal.since(2, 3) == [entry(3)]
    assert StoreJournal(tmp_path / "none").since(0, 1) is None


def test_a_torn_or_malformed_line_is_ignored(tmp_path: Path) -> None:
    journal = StoreJournal(tmp_path)
    journal.append(entry(1, added=("a",)))
    with (tmp_path / JOURNAL_FILE).open("ab") as out:
        out.write(b'not json\n["x",1,[],[]]\n[3,103,[],["c')  # garbage, a bad counter, a torn append
    assert journal.since(0, 1) == [entry(1, added=("a",))]
    assert journal.since(0, 2) is None


def test_past_its_size_the_journal_keeps_its_newer_half(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_journal, "MAX_BYTES", 400)
    journal = StoreJournal(tmp_path)
    for change in range(1, 41):
        journal.append(entry(change, added=(f"chunk-{change}",)))
    assert (tmp_path / JOURNAL_FILE).stat().st_size <= 400 + 100
    assert journal.since(0, 40) is None  # the oldest were dropped: a reader that far behind lists the records
    assert journal.since(38, 40) == [entry(39, added=("chunk-39",)), entry(40, added=("chunk-40",))]


def test_the_net_change_applies_the_entries_in_order() -> None:
    entries = [
        entry(1, added=("a", "b")),
        entry(2, removed=("a",), added=("c",)),
        entry(3, removed=("c",), added=("a",)),
    ]
    gone, new = net_change(entries)
    assert gone == {"c"} and new == ["b", "a"]
