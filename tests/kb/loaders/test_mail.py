"""E-mail: the header block and body of a message, its attachments and an mbox's messages unpacked with stable keys."""

from __future__ import annotations

from email.message import EmailMessage

import pytest

from sextant.kb.documents import LoadedDocument, LoadError
from sextant.kb.loaders import mail
from tests.kb.loaders.mail_factory import fixed_boundaries, mbox, message, sample, with_raw_body
from tests.kb.loaders.pdf_factory import assert_well_formed

PDF = ("report.pdf", b"%PDF-1.4 quarterly report", "application/pdf")
DOCX = ("data.docx", b"PK\x03\x04 workbook", "application/vnd.openxmlformats-officedocument.wordprocessingml.document")


def _load(msg: EmailMessage | bytes, name: str = "mail.eml") -> LoadedDocument:
    doc = mail.load(msg.as_bytes() if isinstance(msg, EmailMessage) else msg, name)
    assert_well_formed(doc)
    return doc


def _section(doc: LoadedDocument, title: str) -> str:
    (section,) = [s for s in doc.sections if s.title == title]
    return doc.text[section.start : section.end]


def test_the_header_block_comes_first_with_an_iso_date_and_the_subject_is_the_title() -> None:
    doc = _load(message(sender="=?utf-8?q?J=C3=BCrgen_M=C3=BCller?= <jm@example.de>", to="a@x.org, b@y.org"))
    assert doc.title == "Quarterly numbers"
    assert doc.text.startswith(
        "From: Jürgen Müller <jm@example.de>\n"
        "To: a@x.org, b@y.org\n"
        "Date: 2024-03-01T09:30:00+01:00\n"
        "Subject: Quarterly numbers\n\n"
    )
    assert _section(doc, "Headers").startswith("From: Jürgen Müller")
    assert _section(doc, "Message") == "Revenue rose 12% in the first quarter."


def test_quoted_replies_and_signatures_are_kept_verbatim() -> None:
    body = "Agreed.\n\n> Can we ship on Friday?\n> -- Bob\n\n-- \nAlice Example\nHead of Finance\n"
    assert _section(_load(message(body=body)), "Message") == body.rstrip("\n")


def test_an_html_only_body_becomes_its_visible_text() -> None:
    html = (
        "<html><head><title>hidden</title><style>p {color: red}</style></head><body>"
        "<p>Revenue rose&nbsp;12%&hellip;</p><script>track()</script><p>Costs <b>fell</b>.</p>"
        "<table><tr><td>Q1</td><td>4.2</td></tr></table></body></html>"
    )
    doc = _load(message(body=None, html=html))
    assert _section(doc, "Message") == "Revenue rose 12%…\n\nCosts fell.\n\nQ1 | 4.2"


def test_multipart_alternative_gives_the_plain_text_not_the_html() -> None:
    doc = _load(message(html="<p>the HTML rendering</p>"))
    assert "Revenue rose 12%" in doc.text
    assert "HTML rendering" not in doc.text


def test_an_empty_plain_alternative_falls_back_to_the_html() -> None:
    doc = _load(message(body="\n", html="<p>only here</p>"))
    assert _section(doc, "Message") == "only here"


@pytest.mark.parametrize(
    ("charset", "body", "expected"),
    [
        ("iso-8859-1", "Grüße aus Köln".encode("latin-1"), "Grüße aus Köln"),
        ("koi8-r", "Привет".encode("koi8-r"), "Привет"),
        # ISO-8859-1 is read as Windows-1252, as browsers do: 0x80 is the euro sign.
        ("iso-8859-1", b"5 \x80", "5 €"),
        # Declared ASCII but 8-bit: UTF-8 when it decodes, else Windows-1252.
        ("us-ascii", "naïve".encode(), "naïve"),
        ("us-ascii", "naïve".encode("cp1252"), "naïve"),
        # An unknown charset is not fatal, and neither are bytes that do not decode in the declared one.
        ("x-no-such-charset", "Grüße".encode(), "Grüße"),
        ("utf-8", b"caf\xc3\xa9 \xff menu", "café \ufffd menu"),
    ],
)
def test_charsets_are_decoded_and_errors_replaced(charset: str, body: bytes, expected: str) -> None:
    headers = (
        f"From: a@example.com\nSubject: s\nContent-Type: text/plain; charset={charset}\nContent-Transfer-Encoding: 8bit"
    )
    assert _section(_load(with_raw_body(headers, body)), "Message") == expected


def test_attachments_are_named_in_the_text_but_their_content_is_not() -> None:
    doc = _load(message(attachments=[PDF, DOCX]))
    assert doc.text.endswith("\n\nAttachments: report.pdf, data.docx")
    assert _section(doc, "Attachments") == "Attachments: report.pdf, data.docx"
    assert "quarterly report" not in doc.text


def test_attachments_are_unpacked_keyed_under_their_message_and_titled_after_it() -> None:
    unpacked = mail.unpack(message(attachments=[PDF, DOCX]).as_bytes(), "mail.eml")
    assert unpacked.skipped == ()
    assert [(f.key, f.name, f.data) for f in unpacked.files] == [
        ("q1-numbers@example.com/1-report.pdf", "report.pdf", PDF[1]),
        ("q1-numbers@example.com/2-data.docx", "data.docx", DOCX[1]),
    ]
    assert (
        unpacked.files[0].title == "report.pdf — attachment to 'Quarterly numbers' from alice@example.com, 2024-03-01"
    )


def test_attachments_no_loader_reads_or_too_large_or_unnamed_are_skipped_with_reasons() -> None:
    msg = message(
        attachments=[
            PDF,
            ("sheet.numbers", b"PK\x03\x04", "application/x-iwork-numbers-sffnumbers"),
            ("big.pdf", b"x" * 5000, "application/pdf"),
        ]
    )
    unnamed = EmailMessage()
    unnamed.set_content(b"\x00\x01", maintype="application", subtype="octet-stream", disposition="attachment")
    msg.attach(unnamed)
    logo = EmailMessage()
    logo.set_content(b"\x89PNG", maintype="image", subtype="png", disposition="inline", filename="logo.png")
    msg.attach(logo)
    unpacked = mail.unpack(msg.as_bytes(), "mail.eml", max_attachment_bytes=1000)
    assert [f.name for f in unpacked.files] == ["report.pdf"]
    reasons = {s.key.split("/", 1)[1]: s.reason for s in unpacked.skipped}
    assert reasons == {
        "2-sheet.numbers": "no loader reads .numbers",
        "3-big.pdf": "over the 1.0 KiB limit for an attachment (about 4.8 KiB)",
        "4-unnamed": "an attached application/octet-stream part without a file name",
        "5-logo.png": "an image shown inside the message",
    }
    # Inline images and unnamed parts are not attachments a reader would name.
    assert _load(msg).text.endswith("Attachments: report.pdf, sheet.numbers, big.pdf")


def test_a_path_in_an_attachment_name_is_dropped() -> None:
    unpacked = mail.unpack(
        message(attachments=[("..\\..\\C:\\tmp/../x/report.pdf", b"%PDF", "application/pdf")]).as_bytes(), "m.eml"
    )
    assert [f.name for f in unpacked.files] == ["report.pdf"]


def test_the_suffixes_decide_which_attachments_are_handed_out() -> None:
    unpacked = mail.unpack(sample("msg_07.eml"), "msg_07.eml", suffixes={".gif"})
    (gif,) = unpacked.files
    assert gif.data.startswith(b"GIF8")
    assert gif.title == "dingusfish.gif — attachment to 'Here is your dingus fish' from barry@digicool.com, 2001-04-20"
    assert mail.unpack(sample("msg_07.eml"), "msg_07.eml").skipped[0].reason == "no loader reads .gif"


def test_an_enclosed_message_is_inline_under_its_own_section_and_its_attachments_are_the_outers() -> None:
    inner = message(
        subject="Original numbers", sender="carol@example.org", body="Draft: revenue +11%.\n", attachments=[PDF]
    )
    outer = message(subject="Fwd: Original numbers", body="See below.\n", message_id="<fwd@example.com>")
    outer.add_attachment(inner)
    outer = fixed_boundaries(outer)
    doc = _load(outer)
    forwarded = _section(doc, "Forwarded message: Original numbers")
    assert forwarded.startswith("From: carol@example.org\n")
    assert "Subject: Original numbers\n\nDraft: revenue +11%." in forwarded
    assert doc.text.endswith("Attachments: report.pdf")
    (pdf,) = mail.unpack(outer.as_bytes(), "fwd.eml").files
    assert pdf.key == "fwd@example.com/1-report.pdf"


def test_messages_nested_past_the_limit_are_left_out() -> None:
    msg = message(subject="level 0", body="body 0\n")
    for level in range(1, mail.MAX_NESTING + 3):
        outer = message(subject=f"level {level}", body=f"body {level}\n")
        outer.add_attachment(msg)
        msg = outer
    doc = _load(fixed_boundaries(msg))
    # The outermost message is at depth 0, so the one at depth MAX_NESTING is the last one read.
    assert "body 2" in doc.text.splitlines()
    assert "body 1" not in doc.text.splitlines()
    (deep,) = mail.unpack(msg.as_bytes(), "deep.eml").skipped
    assert deep.reason == f"a message nested more than {mail.MAX_NESTING} deep"


def test_real_forwarded_and_delivery_status_messages_keep_their_text() -> None:
    forwarded = _load(sample("msg_46.eml"))
    assert "Testing email forwarding with Groupwise" in _section(
        forwarded, "Forwarded message: GroupwiseForwardingTest"
    )
    bounce = _load(sample("msg_16.eml"))
    assert "Reason: recipient reached disk quota" in bounce.text
    assert "Reporting-MTA: dns; cougar.noc.ucla.edu" in bounce.text


def test_real_messages_with_odd_structure_still_load() -> None:
    # A multipart type without its boundary: the parser keeps the body as text.
    assert "This is the dingus fish." in _load(sample("msg_17.eml")).text
    # Attached (not inline) images are listed; the PGP signature of a signed message is not.
    assert _load(sample("msg_22.eml")).text.endswith("Attachments: wibble.JPG, wibble2.JPG")
    signed = mail.unpack(sample("msg_45.eml"), "msg_45.eml")
    assert [s.reason for s in signed.skipped] == ["a cryptographic signature, not a document"]
    assert "Attachments" not in _load(sample("msg_45.eml")).text


def _three() -> list[EmailMessage]:
    return [
        message(subject="One", message_id="<one@example.com>"),
        message(subject="Two", message_id=None, body="From the start, then:\n>From an escape\n"),
        message(subject="Three", message_id="<three/part@example.com>", attachments=[PDF]),
    ]


def test_an_mbox_gives_one_eml_per_message_with_stable_keys() -> None:
    data = mbox(*_three())
    unpacked = mail.unpack(data, "archive.mbox")
    assert unpacked.skipped == ()
    keys = [f.key for f in unpacked.files]
    assert keys[0] == "one@example.com"
    assert keys[1].startswith("sha256-") and len(keys[1]) == len("sha256-") + 16
    assert keys[2:] == ["three_part@example.com", "three_part@example.com/1-report.pdf"]
    assert [f.name for f in unpacked.files] == ["One.eml", "Two.eml", "Three.eml", "report.pdf"]
    assert [f.title for f in unpacked.files[:3]] == ["One", "Two", "Three"]
    # The same mailbox, or one with a message appended, gives the same keys to the same messages.
    assert [f.key for f in mail.unpack(data, "archive.mbox").files] == keys
    grown = mail.unpack(data + mbox(message(subject="Four", message_id="<four@example.com>")), "archive.mbox")
    assert [f.key for f in grown.files] == [*keys, "four@example.com"]


def test_each_message_of_an_mbox_loads_as_its_own_document_with_escapes_undone() -> None:
    files = mail.unpack(mbox(*_three()), "archive.mbox").files
    two = mail.load(files[1].data, files[1].name)
    assert _section(two, "Message") == "From the start, then:\n>From an escape"
    assert [mail.load(f.data, f.name).title for f in files[:3]] == [f.title for f in files[:3]]


def test_an_unescaped_from_line_in_a_body_does_not_split_the_message() -> None:
    data = (
        b"From alice@example.com Fri Mar  1 09:30:00 2024\n"
        b"From: alice@example.com\nSubject: Minutes\n\nNotes.\n\n"
        b"From the team: thanks.\n\n"
        b"From bob@example.com Fri Mar  1 10:00:00 2024\n"
        b"From: bob@example.com\nSubject: Re: Minutes\n\nThanks.\n"
    )
    files = mail.unpack(data, "list.mbox").files
    assert [f.title for f in files] == ["Minutes", "Re: Minutes"]
    assert _section(mail.load(files[0].data, files[0].name), "Message") == "Notes.\n\nFrom the team: thanks."


def test_a_broken_message_in_an_mbox_is_named_and_the_rest_are_kept() -> None:
    one, _, three = _three()
    garbage = b"\x00\x9f\x12 this is no message at all\n"
    unpacked = mail.unpack(mbox(one, garbage, three), "archive.mbox")
    assert [f.title for f in unpacked.files if f.name.endswith(".eml")] == ["One", "Three"]
    (broken,) = unpacked.skipped
    assert broken.name == "archive.mbox message 2"
    assert broken.key.startswith("sha256-")
    assert broken.reason.startswith("not an e-mail message")


def test_an_mbox_over_the_message_limit_names_what_it_left_out() -> None:
    unpacked = mail.unpack(mbox(*_three()), "archive.mbox", max_messages=2)
    assert [f.title for f in unpacked.files] == ["One", "Two"]
    (left_out,) = unpacked.skipped
    assert left_out.name == "archive.mbox messages 3-"
    assert "only the first 2 messages" in left_out.reason


def test_a_message_twice_in_an_mbox_is_kept_once() -> None:
    one = message(subject="One", message_id="<one@example.com>")
    also_one = message(subject="One, edited", message_id="<one@example.com>")
    unpacked = mail.unpack(mbox(one, one, also_one), "archive.mbox")
    keys = [f.key for f in unpacked.files]
    assert keys[0] == "one@example.com" and keys[1].startswith("one@example.com~sha256-")
    assert [s.reason for s in unpacked.skipped] == ["a second copy of a message already in this mailbox"]


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "empty"),
        (b"  \r\n\n", "empty"),
        (b"\x00\xff\xfe\x89PNG garbage\nmore garbage", "not an e-mail message"),
        (b"Dear Bob,\n\nthis is a letter, not a message.\n", "not an e-mail message"),
        (b"X-Custom: only\n\nbody", "not an e-mail message"),
    ],
)
def test_files_that_are_not_messages_are_refused(data: bytes, reason: str) -> None:
    with pytest.raises(LoadError, match=reason) as caught:
        mail.load(data, "bad.eml")
    assert caught.value.name == "bad.eml"


def test_a_message_with_nothing_to_show_is_refused() -> None:
    headers = "MIME-Version: 1.0\nContent-Type: text/html"
    with pytest.raises(LoadError, match="empty: the message has no sender"):
        mail.load(with_raw_body(headers, b"<html><body> </body></html>"), "blank.eml")


def test_containers_that_are_not_mailboxes_are_refused() -> None:
    with pytest.raises(LoadError, match='does not start with a "From " line'):
        mail.unpack(message().as_bytes(), "archive.mbox")
    with pytest.raises(LoadError, match="empty"):
        mail.unpack(b"\n", "archive.mbox")
    with pytest.raises(LoadError, match="not a mail container"):
        mail.unpack(b"From x\n", "notes.txt")
