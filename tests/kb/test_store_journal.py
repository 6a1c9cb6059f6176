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


def clean(change: int, removed: tuple[str, ...] = ()) -> JournalEntry:
    return JournalEntry(change, 100 + change, removed, (), clean=True)


def test_the_store_is_clean_while_every_write_since_a_check_has_its_entry(tmp_path: Path) -> None:
    journal = StoreJournal(tmp_path)
    assert not journal.clean_at(0, 100)  # never checked
    journal.append(clean(1))
    assert journal.clean_at(1, 101)
    journal.append(entry(2, added=("a",)))
    journal.append(JournalEntry(3, None, (), ()))  # a write that left the chunks as they were
    assert journal.clean_at(3, 102)
    assert not journal.clean_at(3, 103)  # someone this machine cannot see wrote since
    assert not journal.clean_at(4, 102)  # the writer of 4 died half-way
    journal.append(entry(5))
    assert not journal.clean_at(5, 105)  # 4 is still missing
    journal.append(clean(6, removed=("orphan",)))
    assert journal.clean_at(6, 106)
    assert journal.since(5, 6) == [clean(6, removed=("orphan",))]  # a check is followed like any write


def test_keeping_the_newer_half_keeps_the_store_clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_journal, "MAX_BYTES", 400)
    journal = StoreJournal(tmp_path)
    journal.append(clean(1))
    for change in range(2, 41):
        journal.append(entry(change, added=(f"chunk-{change}",)))
    assert journal.since(0, 40) is None  # the oldest were dropped, the check among them
    assert journal.clean_at(40, 140)


def test_a_gap_in_the_dropped_half_is_not_made_clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_journal, "MAX_BYTES", 400)
    journal = StoreJournal(tmp_path)
    journal.append(clean(1))
    for change in (*range(2, 5), *range(6, 41)):  # the writer of 5 died half-way
        journal.append(entry(change, added=(f"chunk-{change}",)))
    assert not journal.clean_at(40, 140)


def test_an_entry_in_an_unknown_shape_is_ignored(tmp_path: Path) -> None:
    (tmp_path / JOURNAL_FILE).write_bytes(b'[1,101,[],[],7]\n[1,101,[],[],1,1]\n{"a":1}\n')
    assert StoreJournal(tmp_path).since(0, 1) is None
