"""E-mail headers as the mail loader shows them: names kept beside addresses, dates, undecodable bytes, titles."""

from __future__ import annotations

import email.policy
from email.message import EmailMessage, MIMEPart
from email.parser import BytesParser

from sextant.kb.documents import LoadedDocument
from sextant.kb.loaders import mail
from sextant.kb.loaders.mail_headers import clean, context_of, dates, header, sender
from tests.kb.loaders.mail_factory import message, with_raw_body
from tests.kb.loaders.pdf_factory import assert_well_formed


def _load(msg: EmailMessage | bytes, name: str = "mail.eml") -> LoadedDocument:
    doc = mail.load(msg.as_bytes() if isinstance(msg, EmailMessage) else msg, name)
    assert_well_formed(doc)
    return doc


def _parsed(raw: bytes) -> MIMEPart:
    return BytesParser(policy=email.policy.default).parsebytes(raw)


def test_the_old_comment_form_keeps_its_display_name() -> None:
    # RFC 822's "addr (Full Name)", as in CPython's test message msg_02.txt; the default policy drops comments.
    raw = "From: bbb@ddd.com (John X. Doe)\nTo: a@x.org, c@d.e (=?utf-8?q?Carl_M=C3=BCller?=)\nSubject: s"
    doc = _load(with_raw_body(raw, b"body"))
    assert doc.text.startswith('From: "John X. Doe" <bbb@ddd.com>\nTo: a@x.org, Carl Müller <c@d.e>\nSubject: s')
    assert mail.summary(with_raw_body(raw, b"body"), "m.eml")[1] == "bbb@ddd.com"  # the listing names addresses


def test_a_date_that_cannot_be_parsed_is_kept_as_written() -> None:
    doc = _load(with_raw_body("From: a@example.com\nDate: sometime last week\nSubject: s", b"body"))
    assert "\nDate: sometime last week\n" in doc.text


def test_without_a_subject_the_title_names_the_sender() -> None:
    assert _load(message(subject=None)).title == "(no subject) — alice@example.com"


def test_raw_8bit_headers_are_decoded_as_utf8() -> None:
    raw = "From: Jürgen <j@example.de>\nSubject: Grüße\n\nhallo\n".encode()
    assert _load(raw).title == "Grüße"


def test_an_attachment_is_titled_after_the_message_it_came_with() -> None:
    subject = "Quarterly numbers for the board, with the forecast for the rest of the year attached"
    msg = _parsed(message(subject=subject).as_bytes())
    assert (
        context_of(msg)
        == "'Quarterly numbers for the board, with the forecast for the…' from alice@example.com, 2024-03-01"
    )
    assert dates(msg) == ("2024-03-01T09:30:00+01:00", "2024-03-01")


def test_a_header_is_shown_on_one_line_with_undecodable_bytes_replaced() -> None:
    msg = _parsed(with_raw_body("From: a@example.com\nSubject: two\n  lines", b"body"))
    assert header(msg, "Subject") == "two lines" and header(msg, "Cc") == ""
    assert sender(msg) == "a@example.com"
    assert clean("caf\udce9\n au lait") == "caf\ufffd au lait"
