"""A mailbox (.mbox) as a document: the list of its messages, one row each (date, sender, subject).

Each message is also a document of its own, with its attachments (``mail.unpack``, stored by
``sextant.kb.containers``): this list is what answers "what did Alice send in March?" and names every
message the mailbox holds, a broken one included, so nothing in it goes unnamed.
"""

from __future__ import annotations

from sextant.kb.documents import LoadedDocument, LoadError
from sextant.kb.loaders import mail
from sextant.kb.loaders.builder import CELL_SEPARATOR, TextBuilder, close_sections, stem

HEADER = CELL_SEPARATOR.join(("Date", "From", "Subject"))


def load(data: bytes, name: str) -> LoadedDocument:
    """The mailbox's list of messages: a table under its header row, in the mailbox's order.

    Raises:
        LoadError: the file is empty or not an mbox (it does not start with a "From " line).
    """
    rows: list[str] = []
    for number, raw in enumerate(mail.split_mbox(data, name), start=1):
        label = f"{name} message {number}"
        try:
            rows.append(CELL_SEPARATOR.join(mail.summary(raw, label)))
        except LoadError as exc:
            rows.append(CELL_SEPARATOR.join(("", "", f"(message {number} could not be read: {exc.reason})")))
    out = TextBuilder()
    title = f"Mailbox {stem(name)}"
    out.paragraph(f"{title}: {len(rows)} message{'s' if len(rows) != 1 else ''}")
    table = out.table(HEADER, rows)
    text = out.text()
    return LoadedDocument(text=text, title=title, sections=close_sections([], len(text)), tables=(table,))
