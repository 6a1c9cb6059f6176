"""E-mail: a message (.eml) is one document; a mailbox (.mbox) and a message's attachments are unpacked.

A message's text is a short header block (From, To, Cc, Date in ISO 8601, Subject: ``mail_headers``), then its body:
text/plain where multipart/alternative offers it, HTML turned into text where it is all there is,
enclosed messages (message/rfc822: forwards, digests) inline under their own headers, and last one
line naming the attachments. Quoted replies and signatures are kept verbatim: the ``>`` marks a quote
well enough, and a signature is where a sender's role and phone number are found.

Attachments are not part of that text. ``unpack`` hands them out as ``ContainedFile``s for the other
loaders, each keyed under its message and titled after it. An mbox is split on its "From " lines
(mboxrd: ``>From`` escapes are undone), one ``ContainedFile`` per message plus that message's
attachments. Whatever is left out (a message that is not one, an inline image, a type no loader
reads, a file over the size limit) is named in ``Unpacked.skipped`` with the reason.
"""

from __future__ import annotations

import codecs
import email.policy
import hashlib
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from email.message import Message, MIMEPart
from email.parser import BytesParser
from pathlib import PurePath

from sextant.kb.documents import ContainedFile, LoadedDocument, LoadError, SkippedFile, Unpacked
from sextant.kb.loaders import html as html_loader
from sextant.kb.loaders.builder import Heading, TextBuilder, clean_title, close_sections
from sextant.kb.loaders.mail_headers import clean, context_of, dates, header, header_block, sender, title_of

MAX_MESSAGES = 10_000
MAX_ATTACHMENT_BYTES = 25 * 2**20  # what most mail services allow for a whole message
MAX_NESTING = 8  # forwards of forwards; deeper is a loop or an attack, not correspondence

# A file counts as a message only if it has one of these; the parser itself takes any bytes as a body.
_MESSAGE_HEADERS = {"from", "sender", "to", "cc", "subject", "date", "message-id", "received", "mime-version"}
_SIGNATURE_TYPES = {"application/pgp-signature", "application/pkcs7-signature", "application/x-pkcs7-signature"}
_HEADER_LINE_RE = re.compile(rb"^[!-9;-~]+:")
_ENVELOPE_RE = re.compile(rb"^From \S+ .*\b\d\d?:\d\d(?::\d\d)?\b.*\b\d{4}\b")
_ESCAPED_FROM_RE = re.compile(rb"^>(>*From )", re.MULTILINE)


@dataclass(slots=True)
class _Attachment:
    filename: str
    part: MIMEPart
    skip_reason: str = ""  # set when no loader should ever see it (inline image, unnamed part)
    listed: bool = True  # named on the message's "Attachments:" line


@dataclass(slots=True)
class _Render:
    out: TextBuilder = field(default_factory=TextBuilder)
    headings: list[Heading] = field(default_factory=list)
    attachments: list[_Attachment] = field(default_factory=list)
    # A section opens at the next paragraph written, whichever part of the message that turns out to be.
    pending: tuple[str, int] | None = None

    def paragraph(self, piece: str) -> None:
        start, _ = self.out.paragraph(piece)
        if self.pending is not None:
            self.headings.append(Heading(start, *self.pending))
            self.pending = None


Summary = tuple[str, str, str]
"""A message as a mailbox's list shows it: its date (ISO 8601), sender and subject."""


@dataclass(frozen=True, slots=True)
class Mailbox:
    """A mailbox read once: each message's summary, or the error that stopped its parse, in the mailbox's order
    (every message, those past the limit on messages included), and the files it holds (``unpack``)."""

    summaries: tuple[Summary | LoadError, ...]
    unpacked: Unpacked


def load(data: bytes, name: str) -> LoadedDocument:
    """Load one message (.eml): header block, body and attachment names; the title is the subject.

    Raises:
        LoadError: the file is empty, has no mail headers, or has neither headers to show nor body text.
    """
    msg = _parse(data, name)
    return _document(msg, name, _render_or_refuse(msg, name))


def unpack(
    data: bytes,
    name: str,
    *,
    max_messages: int = MAX_MESSAGES,
    max_attachment_bytes: int = MAX_ATTACHMENT_BYTES,
    suffixes: Collection[str] | None = None,
) -> Unpacked:
    """The files inside an .eml (its attachments) or an .mbox (each message, then its attachments).

    Keys: a message is its Message-ID without the angle brackets (or ``sha256-`` and 16 hex digits of
    its bytes when it has none); an attachment is ``"<message key>/<n>-<file name>"``, ``n`` counting
    the message's attachment parts from 1. ``suffixes`` are the file types the loaders read (default:
    ``sextant.kb.loaders.SUPPORTED_SUFFIXES``); attachments of other types are skipped.

    Raises:
        LoadError: ``name`` is not an .eml or .mbox, the .eml is not a message, or the .mbox does not
            start with a "From " line. A broken message inside an .mbox is skipped, not raised.
    """
    suffix = PurePath(name).suffix.lower()
    if suffix == ".eml":
        msg = _parse(data, name)
        return _attached(msg, data, _render(msg), _readable(suffixes), max_attachment_bytes)
    if suffix == ".mbox":
        return read_mbox(
            data, name, max_messages=max_messages, max_attachment_bytes=max_attachment_bytes, suffixes=suffixes
        ).unpacked
    raise LoadError(name, "not a mail container: expected an .eml or .mbox file")


def load_with_parts(
    data: bytes, name: str, *, max_attachment_bytes: int = MAX_ATTACHMENT_BYTES, suffixes: Collection[str] | None = None
) -> tuple[LoadedDocument, Unpacked]:
    """One message (.eml) read once: its document (``load``) and its attachments (``unpack``).

    Raises:
        LoadError: as ``load``.
    """
    msg = _parse(data, name)
    render = _render_or_refuse(msg, name)
    attached = _attached(msg, data, render, _readable(suffixes), max_attachment_bytes)
    return _document(msg, name, render), attached


def _attached(msg: MIMEPart, data: bytes, render: _Render, readable: set[str], max_attachment_bytes: int) -> Unpacked:
    files, skipped = _attachments(msg, render.attachments, message_key(msg, data), readable, max_attachment_bytes)
    return Unpacked(tuple(files), tuple(skipped))


def summary(raw: bytes, name: str) -> Summary:
    """A message's date (ISO 8601), sender and subject, as a mailbox's list shows it.

    Raises:
        LoadError: the bytes are not a message.
    """
    return _summary(_parse(raw, name))


def _summary(msg: MIMEPart) -> Summary:
    return dates(msg)[0], sender(msg), header(msg, "Subject") or "(no subject)"


def _readable(suffixes: Collection[str] | None) -> set[str]:
    if suffixes is None:
        from sextant.kb.loaders import SUPPORTED_SUFFIXES

        suffixes = SUPPORTED_SUFFIXES
    return {s.lower() for s in suffixes}


def message_key(msg: MIMEPart, raw: bytes) -> str:
    """The Message-ID without angle brackets, or a hash of the message's bytes when it has none."""
    mid = header(msg, "Message-ID").strip().strip("<>").strip()
    # "/" separates a message's key from its attachments' part of the key.
    return re.sub(r"[\s/]+", "_", mid) or "sha256-" + hashlib.sha256(raw).hexdigest()[:16]


def split_mbox(data: bytes, name: str) -> Iterator[bytes]:
    """Each message of an mbox, without its "From " line and with ``>From`` escapes undone.

    A "From " line separates messages only at the start, or after a blank line when it holds a time
    and a year (``From alice@example.com Fri Mar  1 09:30:00 2024``) or a header line follows it, so
    an unescaped "From the team..." paragraph in a body does not cut its message in two.

    Raises:
        LoadError: the data is empty or does not start with a "From " line.
    """
    if not data.strip():
        raise LoadError(name, "empty: the mailbox holds no messages")
    lines = data.splitlines(keepends=True)
    if not lines[0].startswith(b"From "):
        raise LoadError(
            name, 'not an mbox file: it does not start with a "From " line; if it is one message, rename it to .eml'
        )
    current: list[bytes] = []
    for i, line in enumerate(lines[1:], start=1):
        if line.startswith(b"From ") and not lines[i - 1].strip() and _envelope(line, lines[i + 1 : i + 2]):
            yield _mbox_message(current)
            current = []
        else:
            current.append(line)
    yield _mbox_message(current)


def _envelope(line: bytes, following: list[bytes]) -> bool:
    return _ENVELOPE_RE.match(line) is not None or any(_HEADER_LINE_RE.match(f) for f in following)


def _mbox_message(lines: list[bytes]) -> bytes:
    # Trailing blank lines are the separator before the next message; dropping them keeps a hash key
    # stable when more messages are appended to the mailbox.
    return _ESCAPED_FROM_RE.sub(rb"\1", b"".join(lines)).rstrip(b"\r\n") + b"\n"


def read_mbox(
    data: bytes,
    name: str,
    *,
    max_messages: int = MAX_MESSAGES,
    max_attachment_bytes: int = MAX_ATTACHMENT_BYTES,
    suffixes: Collection[str] | None = None,
) -> Mailbox:
    """A mailbox read in one pass, each message parsed once: what its list shows (``summary``) and what it holds
    (``unpack``: each message, already read, then its attachments). Keys and limits as ``unpack``.

    Raises:
        LoadError: the data is empty or does not start with a "From " line (``split_mbox``).
    """
    readable = _readable(suffixes)
    summaries: list[Summary | LoadError] = []
    files: list[ContainedFile] = []
    skipped: list[SkippedFile] = []
    seen: dict[str, str] = {}  # key -> hash of the message's bytes
    for number, raw in enumerate(split_mbox(data, name), start=1):
        label = f"{name} message {number}"
        listed_only = number > max_messages  # in the mailbox's list, not unpacked
        if number == max_messages + 1:
            reason = f"only the first {max_messages} messages are read; split the mailbox into smaller files"
            skipped.append(SkippedFile("", f"{name} messages {number}-", reason))
        try:
            msg = _parse(raw, label)
        except LoadError as exc:
            summaries.append(exc)
            if not listed_only:
                skipped.append(SkippedFile(_hash_key(raw), label, exc.reason))
            continue
        summaries.append(_summary(msg))
        if listed_only:
            continue
        try:
            render = _render_or_refuse(msg, label)
            loaded = _document(msg, label, render)
        except LoadError as exc:
            skipped.append(SkippedFile(_hash_key(raw), label, exc.reason))
            continue
        key, digest = message_key(msg, raw), _hash_key(raw)
        if key in seen:
            if seen[key] == digest:
                skipped.append(SkippedFile(key, label, "a second copy of a message already in this mailbox"))
                continue
            key = f"{key}~{digest}"  # a mailer that reuses Message-IDs
        seen[key] = digest
        files.append(ContainedFile(key, _eml_name(msg), raw, loaded.title, loaded))
        attached, left_out = _attachments(msg, render.attachments, key, readable, max_attachment_bytes)
        files.extend(attached)
        skipped.extend(left_out)
    return Mailbox(tuple(summaries), Unpacked(tuple(files), tuple(skipped)))


def _hash_key(raw: bytes) -> str:
    return "sha256-" + hashlib.sha256(raw).hexdigest()[:16]


def _eml_name(msg: MIMEPart) -> str:
    subject = re.sub(r'[\\/:*?"<>|\x00-\x1f]+', "_", header(msg, "Subject"))[:80].strip(" .")
    return f"{subject or 'message'}.eml"


def _parse(data: bytes, name: str) -> MIMEPart:
    if not data.strip():
        raise LoadError(name, "empty: the file holds no message")
    try:
        msg = BytesParser(policy=email.policy.default).parsebytes(data)
    # The parser records most damage as defects; what it raises on is whatever its lower layer hit.
    except Exception as exc:
        raise LoadError(name, f"not a readable e-mail message ({type(exc).__name__}: {exc})") from exc
    if not any(key.lower() in _MESSAGE_HEADERS for key in msg):
        raise LoadError(
            name, "not an e-mail message: it has no From, To, Subject or Date header; if it is text, rename it to .txt"
        )
    return msg


def _render_or_refuse(msg: MIMEPart, name: str) -> _Render:
    try:
        return _render(msg)
    except LoadError:
        raise
    # Malformed headers reach parts of the email package that raise assorted errors when read.
    except Exception as exc:
        raise LoadError(name, f"not a readable e-mail message ({type(exc).__name__}: {exc})") from exc


def _document(msg: MIMEPart, name: str, render: _Render) -> LoadedDocument:
    """The document from a rendered message; its attachment line is added to ``render`` here."""
    listed = [a.filename for a in render.attachments if a.listed]
    if listed:
        render.pending = ("Attachments", 1)
        render.paragraph("Attachments: " + ", ".join(listed))
    if not len(render.out):
        raise LoadError(name, "empty: the message has no sender, recipients, subject, date or body text")
    text = render.out.text()
    return LoadedDocument(text=text, title=title_of(msg, name), sections=close_sections(render.headings, len(text)))


def _render(msg: MIMEPart) -> _Render:
    render = _Render(pending=("Headers", 1))
    block = header_block(msg)
    if block:
        render.paragraph(block)
    render.pending = ("Message", 1)
    _walk(msg, render, depth=0)
    return render


def _walk(part: MIMEPart, render: _Render, depth: int) -> None:
    ctype = part.get_content_type()
    if ctype == "message/rfc822":
        inner = part.get_payload()
        if depth >= MAX_NESTING or not isinstance(inner, list) or not isinstance(inner[0], MIMEPart):
            render.attachments.append(_Attachment("", part, f"a message nested more than {MAX_NESTING} deep", False))
            return
        enclosed = inner[0]
        render.pending = (clean_title(f"Forwarded message: {header(enclosed, 'Subject') or '(no subject)'}"), 2)
        block = header_block(enclosed)
        if block:
            render.paragraph(block)
        _walk(enclosed, render, depth + 1)
        return
    if ctype == "multipart/alternative":
        chosen = _preferred(list(part.iter_parts()))
        if chosen is not None:  # the other alternatives are renderings of the same text, not attachments
            _walk(chosen, render, depth)
        return
    if part.is_multipart():
        if part.get_content_maintype() == "message":  # delivery-status: blocks of header lines
            payload = part.get_payload()
            blocks = [
                "\n".join(f"{k}: {clean(str(v))}" for k, v in b.items()) for b in payload if isinstance(b, Message)
            ]
            _paragraph_if_text(render, "\n\n".join(b for b in blocks if b))
            return
        for sub in part.iter_parts():
            _walk(sub, render, depth)
        return
    filename = _filename(part)
    disposition = part.get_content_disposition()
    # A multipart part that is not multipart had no boundary the parser could find: its body is text.
    body = part.get_content_maintype() == "multipart" or (
        part.get_content_maintype() == "text" and disposition != "attachment" and (not filename or disposition)
    )
    if body:
        _paragraph_if_text(render, _part_text(part))
    elif ctype in _SIGNATURE_TYPES:
        render.attachments.append(_Attachment(filename, part, "a cryptographic signature, not a document", False))
    elif part.get_content_maintype() == "image" and disposition != "attachment" and (disposition or part["Content-ID"]):
        render.attachments.append(_Attachment(filename, part, "an image shown inside the message", False))
    elif not filename:
        render.attachments.append(_Attachment("", part, f"an attached {ctype} part without a file name", False))
    else:
        render.attachments.append(_Attachment(filename, part))


def _paragraph_if_text(render: _Render, text: str) -> None:
    if text.strip():
        render.paragraph(text.strip("\n"))


def _preferred(parts: list[MIMEPart]) -> MIMEPart | None:
    for wanted in ("text/plain", "text/html"):
        for part in parts:
            readable = part.get_content_type() == wanted and part.get_content_disposition() != "attachment"
            if readable and _part_text(part).strip():
                return part
    # A rendering that is itself multipart: HTML with its images in multipart/related.
    return next((p for p in reversed(parts) if p.is_multipart()), None)


def _part_text(part: MIMEPart) -> str:
    raw = part.get_payload(decode=True)
    if not isinstance(raw, bytes):
        return ""
    text = decode_text(raw, part.get_content_charset())
    if part.get_content_subtype() == "html":
        text = html_to_text(text)
    return text.replace("\r\n", "\n").replace("\r", "\n")


def decode_text(raw: bytes, charset: str | None) -> str:
    """Decode a text part by its declared charset, replacing what does not decode.

    Undeclared, ASCII and unknown charsets are tried as UTF-8, then Windows-1252: that is what 8-bit
    mail mislabelled that way mostly is. ISO-8859-1 is read as its superset Windows-1252, as browsers do.
    """
    try:
        codec = codecs.lookup(charset).name if charset else ""
    except LookupError:
        codec = ""
    if codec in ("", "ascii"):
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            codec = "cp1252"
    if codec == "iso8859-1":
        codec = "cp1252"
    return raw.decode(codec, errors="replace")


def html_to_text(html: str) -> str:
    """The visible text of an HTML body, as the HTML loader reads a page's main content."""
    # The BOM makes the HTML loader read these bytes as UTF-8, whatever charset a <meta> in them names.
    try:
        return html_loader.extract(codecs.BOM_UTF8 + html.encode("utf-8", "replace"), "body.html").text
    except LoadError:  # nothing but whitespace
        return ""


def _attachments(
    msg: MIMEPart, found: list[_Attachment], key: str, readable: set[str], max_bytes: int
) -> tuple[list[ContainedFile], list[SkippedFile]]:
    files: list[ContainedFile] = []
    skipped: list[SkippedFile] = []
    context = context_of(msg)
    for index, attachment in enumerate(found, start=1):
        filename = attachment.filename
        label = filename or attachment.part.get_content_type()
        akey = f"{key}/{index}-{filename or 'unnamed'}"
        suffix = PurePath(filename).suffix.lower()
        reason = attachment.skip_reason
        if not reason and suffix not in readable:
            reason = f"no loader reads {suffix or 'files without a suffix'}"
        size = 0 if reason else _encoded_size(attachment.part)
        data = b"" if reason or size > max_bytes else _decoded(attachment.part)
        size = max(size, len(data))
        if not reason and size > max_bytes:
            reason = f"over the {_size(max_bytes)} limit for an attachment (about {_size(size)})"
        elif not reason and not data:
            reason = "empty"
        if reason:
            skipped.append(SkippedFile(akey, label, reason))
        else:
            files.append(ContainedFile(akey, filename, data, f"{filename} — attachment to {context}"))
    return files, skipped


def _size(n: int) -> str:
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n / 2**10:.1f} KiB"


def _encoded_size(part: MIMEPart) -> int:
    """A lower bound on the decoded size, so a part far over the limit is refused without decoding it."""
    encoded = part.get_payload()
    if not isinstance(encoded, str):
        return 0
    # Base64 is 4 characters for 3 bytes and 76-character lines; other encodings only grow their data.
    return len(encoded) * 3 // 4 * 76 // 78 if part.get("Content-Transfer-Encoding", "").lower() == "base64" else 0


def _decoded(part: MIMEPart) -> bytes:
    data = part.get_payload(decode=True)
    return data if isinstance(data, bytes) else b""


def _filename(part: MIMEPart) -> str:
    try:
        raw = part.get_filename() or ""
    except Exception:  # a malformed Content-Disposition parameter; the part is then unnamed
        raw = ""
    # A name is only a suffix and a label here: never a path, so "../x.pdf" or "C:\\x.pdf" lose their folders.
    return clean(re.split(r"[\\/]", raw)[-1]).strip(" .")
