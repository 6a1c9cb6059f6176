"""A mailbox read once: its list of messages and the files it holds from one pass, each message parsed once."""

from __future__ import annotations

from dataclasses import replace
from email.message import EmailMessage

import pytest

from sextant.kb.loaders import load_with_parts, mail, mbox
from tests.kb.loaders.mail_factory import mbox as mailbox
from tests.kb.loaders.mail_factory import message

NOTES = ("notes.md", b"# Notes\n\nThe oolong tasted of chestnut.\n", "text/markdown")


def _messages() -> list[EmailMessage | bytes]:
    return [
        message(subject="Budget", message_id="<budget@example.com>"),
        b"not a message at all\n",
        message(subject="Tea", message_id="<tea@example.com>", html="<p>Tea <b>order</b></p>", attachments=[NOTES]),
        message(subject="Offsite", message_id=None, body="The offsite is in May.\n"),
    ]


def test_the_list_and_the_parts_of_one_pass_are_what_load_and_unpack_give() -> None:
    data = mailbox(*_messages())
    doc, unpacked = mbox.load_with_parts(data, "archive.mbox")
    assert doc == mbox.load(data, "archive.mbox")
    assert unpacked == mail.unpack(data, "archive.mbox")
    assert load_with_parts(data, "archive.mbox") == (doc, unpacked)
    assert [f.name for f in unpacked.files] == ["Budget.eml", "Tea.eml", "notes.md", "Offsite.eml"]
    assert [s.name for s in unpacked.skipped] == ["archive.mbox message 2"]
    # Each message comes already read, as parsing it alone reads it; an attachment is left to its own loader.
    for part in unpacked.files:
        if part.name.endswith(".eml"):
            assert part.loaded == replace(mail.load(part.data, part.name), title=part.title)
        else:
            assert part.loaded is None


def test_each_message_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[bytes] = []
    parse = mail._parse

    def counted(data: bytes, name: str) -> object:
        parsed.append(data)
        return parse(data, name)

    monkeypatch.setattr(mail, "_parse", counted)
    mbox.load_with_parts(mailbox(*_messages()), "archive.mbox")
    assert len(parsed) == 4


def test_messages_past_the_limit_are_listed_not_unpacked() -> None:
    data = mailbox(*_messages())
    read = mail.read_mbox(data, "archive.mbox", max_messages=1)
    assert len(read.summaries) == 4 and read.summaries[3] == (
        "2024-03-01T09:30:00+01:00",
        "alice@example.com",
        "Offsite",
    )
    assert [f.name for f in read.unpacked.files] == ["Budget.eml"]
    assert [s.name for s in read.unpacked.skipped] == ["archive.mbox messages 2-"]


def test_a_message_is_read_with_its_attachments_in_one_pass() -> None:
    data = message(subject="Tea", attachments=[NOTES]).as_bytes()
    doc, unpacked = load_with_parts(data, "tea.eml")
    assert doc == mail.load(data, "tea.eml") and unpacked == mail.unpack(data, "tea.eml")
    assert load_with_parts(b"# Plain\n\nText.\n", "plain.md")[1] is None
