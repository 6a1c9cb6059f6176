"""Messages built with the standard library's ``EmailMessage``, and mailboxes joined from them, for mail tests."""

from __future__ import annotations

import re
from collections.abc import Sequence
from email.message import EmailMessage
from email.utils import parsedate_to_datetime
from pathlib import Path

FILES = Path(__file__).parent / "files" / "mail"
DATE = "Fri, 01 Mar 2024 09:30:00 +0100"

Attachment = tuple[str, bytes, str]  # (file name, data, MIME type)


def message(
    *,
    subject: str | None = "Quarterly numbers",
    sender: str = "Alice Example <alice@example.com>",
    to: str = "Bob <bob@example.com>",
    date: str | None = DATE,
    message_id: str | None = "<q1-numbers@example.com>",
    body: str | None = "Revenue rose 12% in the first quarter.\n",
    html: str | None = None,
    attachments: Sequence[Attachment] = (),
) -> EmailMessage:
    """A message with a plain body, an HTML body (alternative to the plain one, or alone) and attachments."""
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    if subject is not None:
        msg["Subject"] = subject
    if date is not None:
        msg["Date"] = date
    if message_id is not None:
        msg["Message-ID"] = message_id
    if body is not None:
        msg.set_content(body)
    if html is not None:
        if body is None:
            msg.set_content(html, subtype="html")
        else:
            msg.add_alternative(html, subtype="html")
    for filename, data, mime in attachments:
        maintype, subtype = mime.split("/")
        msg.add_attachment(data, maintype=maintype, subtype=subtype, filename=filename)
    return fixed_boundaries(msg)


def fixed_boundaries(msg: EmailMessage) -> EmailMessage:
    """Name every multipart boundary, so the bytes (and a hash key made from them) are the same on every run."""
    for n, part in enumerate(msg.walk()):
        if part.is_multipart():
            part.set_boundary(f"==boundary-{n}==")
    return msg


def with_raw_body(headers: str, body: bytes) -> bytes:
    """A message whose body bytes are given as they are, whatever its headers declare."""
    return headers.strip().replace("\n", "\r\n").encode() + b"\r\n\r\n" + body


def mbox(*messages: bytes | EmailMessage) -> bytes:
    """An mboxrd file: each message after its "From " line, body lines starting ">*From " escaped."""
    parts = []
    for item in messages:
        raw = item.as_bytes() if isinstance(item, EmailMessage) else item
        raw = raw.replace(b"\r\n", b"\n")
        escaped = re.sub(rb"^(>*From )", rb">\1", raw, flags=re.MULTILINE)
        parts.append(b"From " + _envelope(raw) + b"\n" + escaped.rstrip(b"\n") + b"\n\n")
    return b"".join(parts)


def _envelope(raw: bytes) -> bytes:
    found = re.search(rb"^Date: (.+)$", raw, flags=re.MULTILINE)
    when = parsedate_to_datetime(found.group(1).decode()) if found else parsedate_to_datetime(DATE)
    return b"MAILER-DAEMON " + when.strftime("%a %b %d %H:%M:%S %Y").encode()


def sample(name: str) -> bytes:
    """A real message from ``files/mail`` (CPython's e-mail test data)."""
    return (FILES / name).read_bytes()
