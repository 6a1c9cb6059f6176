"""A mailbox (.mbox) as a document: the list of its messages, one row each (date, sender, subject).

Each message is also a document of its own, with its attachments (``mail.unpack``, stored by
``sextant.kb.containers``): this list is what answers "what did Alice send in March?" and names every
message the mailbox holds, a broken one included, so nothing in it goes unnamed. ``load_with_parts`` reads
both in one pass (``mail.read_mbox``), each message parsed once.
"""

from __future__ import annotations

from collections.abc import Sequence

from sextant.kb.documents import LoadedDocument, LoadError, Unpacked
from sextant.kb.loaders import mail
from sextant.kb.loaders.builder import CELL_SEPARATOR, TextBuilder, close_sections, stem

HEADER = CELL_SEPARATOR.join(("Date", "From", "Subject"))


def load(data: bytes, name: str) -> LoadedDocument:
    """The mailbox's list of messages: a table under its header row, in the mailbox's order.

    Raises:
        LoadError: the file is empty or not an mbox (it does not start with a "From " line).
    """
    summaries: list[mail.Summary | LoadError] = []
    for number, raw in enumerate(mail.split_mbox(data, name), start=1):
        try:
            summaries.append(mail.summary(raw, f"{name} message {number}"))
        except LoadError as exc:
            summaries.append(exc)
    return _listing(summaries, name)


def load_with_parts(data: bytes, name: str) -> tuple[LoadedDocument, Unpacked]:
    """The mailbox's list (``load``) and the files it holds (``mail.unpack``), from one pass over its messages.

    Raises:
        LoadError: as ``load``.
    """
    mailbox = mail.read_mbox(data, name)
    return _listing(mailbox.summaries, name), mailbox.unpacked


def _listing(summaries: Sequence[mail.Summary | LoadError], name: str) -> LoadedDocument:
    rows = [
        CELL_SEPARATOR.join(
            ("", "", f"(message {number} could not be read: {found.reason})") if isinstance(found, LoadError) else found
        )
        for number, found in enumerate(summaries, start=1)
    ]
    out = TextBuilder()
    title = f"Mailbox {stem(name)}"
    out.paragraph(f"{title}: {len(rows)} message{'s' if len(rows) != 1 else ''}")
    table = out.table(HEADER, rows)
    text = out.text()
    return LoadedDocument(text=text, title=title, sections=close_sections([], len(text)), tables=(table,))
