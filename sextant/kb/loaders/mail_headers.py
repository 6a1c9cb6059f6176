"""A message's headers as the mail loader shows them: cleaned, dates in ISO 8601, names kept beside addresses.

Headers are read defensively: a malformed value reaches parts of the ``email`` package that raise, and is then
shown as written; undecodable bytes are replaced, never carried on as surrogates. The header block that opens a
message's text shows From, To, Cc (with RFC 822's ``addr (Full Name)`` names kept), Date and Subject; a message is
titled by its subject, and an attachment's title names the message it came with.
"""

from __future__ import annotations

import email.header
import email.headerregistry
import email.utils
from email.message import MIMEPart

from sextant.kb.loaders.builder import clean_title, stem

_SHOWN_HEADERS = ("From", "To", "Cc", "Date", "Subject")
_ADDRESS_HEADERS = frozenset({"From", "To", "Cc"})
_SUBJECT_IN_TITLE = 60


def header(msg: MIMEPart, name: str) -> str:
    """Header ``name`` as shown, on one line; its raw text where the parser cannot read it; "" when absent."""
    try:
        value = msg.get(name)
    # Malformed values reach parts of the header parser that raise; the raw text is still worth showing.
    except Exception:
        value = next((v for k, v in msg.raw_items() if k.lower() == name.lower()), None)
    return "" if value is None else clean(str(value))


def clean(value: str) -> str:
    """``value`` on one line, with bytes that did not decode replaced."""
    # Undecodable header bytes come back as surrogates, which no later encoder accepts.
    value = value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return " ".join(value.split())


def dates(msg: MIMEPart) -> tuple[str, str]:
    """The Date header as ISO 8601 date-time and date; the raw text twice when it cannot be parsed."""
    raw = header(msg, "Date")
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, OverflowError, IndexError):
        return raw, raw
    return when.isoformat(), when.date().isoformat()


def header_block(msg: MIMEPart) -> str:
    """The lines that open a message's text: those of From, To, Cc, Date (ISO 8601) and Subject it has."""
    lines = []
    for label in _SHOWN_HEADERS:
        if label == "Date":
            value = dates(msg)[0]
        elif label in _ADDRESS_HEADERS:
            value = _with_comment_names(msg, label)
        else:
            value = header(msg, label)
        if value:
            lines.append(f"{label}: {value}")
    return "\n".join(lines)


def _with_comment_names(msg: MIMEPart, name: str) -> str:
    """An address header as shown, with the name of RFC 822's ``addr (Full Name)`` form kept as ``Full Name <addr>``:
    the ``default`` policy parses that name as a comment and drops it; ``getaddresses`` still reads it."""
    value = header(msg, name)
    raw = [str(v) for k, v in msg.raw_items() if k.lower() == name.lower()]
    if "(" not in "".join(raw):
        return value
    try:
        named = {a.lower(): r for r, a in email.utils.getaddresses(raw) if r and a}
        parts = []
        for address in getattr(msg.get(name), "addresses", ()):
            real = address.display_name or named.get(address.addr_spec.lower(), "")
            real = str(email.header.make_header(email.header.decode_header(real))) if "=?" in real else real
            parts.append(str(email.headerregistry.Address(real, addr_spec=address.addr_spec)))
    except Exception:  # as in header(): a malformed header is shown as written
        return value
    return clean(", ".join(parts)) or value


def sender(msg: MIMEPart) -> str:
    """The sender's address alone (``alice@example.com``), or the From header as written."""
    try:
        given = msg.get("From")
        addresses = getattr(given, "addresses", ())
        if addresses and addresses[0].addr_spec not in ("", "<>"):
            return clean(addresses[0].addr_spec)
    except Exception:  # as in header(): a malformed From falls back to its text
        pass
    return header(msg, "From")


def title_of(msg: MIMEPart, name: str) -> str:
    """A message's title: its subject; without one, its sender (or the file's name) after "(no subject)"."""
    subject = header(msg, "Subject")
    return clean_title(subject) if subject else clean_title(f"(no subject) — {sender(msg) or stem(name)}")


def context_of(msg: MIMEPart) -> str:
    """``'Quarterly numbers' from alice@example.com, 2024-03-01``: the message an attachment came with."""
    subject = header(msg, "Subject") or "(no subject)"
    if len(subject) > _SUBJECT_IN_TITLE:
        subject = subject[:_SUBJECT_IN_TITLE].rsplit(" ", 1)[0] + "…"
    context = f"'{subject}'"
    if who := sender(msg):
        context += f" from {who}"
    if day := dates(msg)[1]:
        context += f", {day}"
    return context
