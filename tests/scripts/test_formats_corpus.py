"""scripts/formats_corpus.py and eval/formats.jsonl: the pieces that run offline, and the labels' document ids.

The corpus itself is not in the repository (it is held out); the checks that need it read the folder named by
SEXTANT_FORMATS_CORPUS (made by ``scripts/formats_corpus.py --out DIR``) and are skipped without it.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from sextant.evals.golden import load_golden
from sextant.kb.document_ids import document_id_for, part_id
from sextant.kb.loaders import load_bytes, mail
from tests.scripts.script_module import load_script

ROOT = Path(__file__).resolve().parents[2]
formats_corpus = load_script(ROOT / "scripts" / "formats_corpus.py")
GOLDEN = ROOT / "eval" / "formats.jsonl"
FORMATS = ("html", "epub", "slides", "odt", "xlsx", "csv", "eml", "mbox", "scan")

SERVICES = """\
# Network services, Internet style
#
tcpmux		1/tcp				# TCP port service multiplexer
discard		9/tcp		sink null
kerberos	88/tcp		kerberos5 krb5 kerberos-sec	# Kerberos v5
imaps		993/tcp				# IMAP over SSL
not an entry
"""

MESSAGE = b"""\
From: Anne Person <aperson@example.com>
To: bperson@example.com
Subject: fares
Message-ID: <fares.1@example.com>

From here the fare is 3 euros.
>From the station it is 2.
"""

NO_ID = b"""\
From: bperson@example.com
Subject: no id

Plain body.
"""


def test_services_become_one_row_per_entry_with_aliases_and_comment() -> None:
    rows = formats_corpus.services_csv(SERVICES).splitlines()
    assert rows == [
        "service,port,protocol,aliases,comment",
        "tcpmux,1,tcp,,TCP port service multiplexer",
        "discard,9,tcp,sink null,",
        "kerberos,88,tcp,kerberos5 krb5 kerberos-sec,Kerberos v5",
        "imaps,993,tcp,,IMAP over SSL",
    ]


def test_the_services_csv_reads_as_a_table_a_question_can_find() -> None:
    doc = load_bytes(formats_corpus.services_csv(SERVICES).encode(), "services.csv")
    assert "kerberos | 88 | tcp | kerberos5 krb5 kerberos-sec | Kerberos v5" in doc.text
    assert [s.title for s in doc.sections] == ["services"]


def test_the_mbox_gives_back_each_message_under_its_key() -> None:
    data = formats_corpus.mbox([MESSAGE, NO_ID])
    assert data.count(formats_corpus.ENVELOPE) == 2
    assert b"\n>From here the fare" in data and b"\n>>From the station" in data  # mboxrd quoting
    unpacked = mail.unpack(data, "box.mbox")
    assert unpacked.files[0].key == "fares.1@example.com"
    assert unpacked.files[1].key.startswith("sha256-")
    first = load_bytes(unpacked.files[0].data, unpacked.files[0].name)
    assert "From here the fare is 3 euros." in first.text and ">From the station it is 2." in first.text
    assert formats_corpus.mbox([MESSAGE, NO_ID]) == data  # the same bytes every run


def test_the_corpus_holds_no_file_the_loader_tests_use() -> None:
    used = {p.name for p in (ROOT / "tests" / "kb" / "loaders" / "files").rglob("*") if p.is_file()}
    names = formats_corpus.corpus_names()
    assert len(names) == len(set(names))
    assert not used & set(names)


def _rows() -> list[dict[str, object]]:
    return [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_set_loads_and_covers_every_format() -> None:
    questions = load_golden(GOLDEN)
    rows = _rows()
    assert len(questions) >= 30
    assert len({q.id for q in questions}) == len(questions)
    counts = Counter(str(r["format"]) for r in rows)
    assert set(counts) == set(FORMATS)
    assert min(counts.values()) >= 3, counts
    for q in questions:
        assert q.answerable and q.targets, q.id
        assert all(t.evidence for t in q.targets), q.id
        assert all((t.page is None) != (t.section is None) for t in q.targets), q.id


def test_every_target_names_a_document_the_corpus_makes() -> None:
    stems = {document_id_for(Path(name)) for name in formats_corpus.corpus_names()}
    mbox = document_id_for(Path(formats_corpus.MBOX_NAME))
    for q in load_golden(GOLDEN):
        for t in q.targets:
            assert t.doc_id in stems or t.doc_id.startswith(f"{mbox}."), (q.id, t.doc_id)


def test_pages_label_only_paged_formats() -> None:
    for row in _rows():
        paged = any("page" in t for t in row["relevant"])  # type: ignore[attr-defined]
        assert paged == (row["format"] in ("slides", "scan")), row["id"]


# Read at import: the suite's fixture clears every SEXTANT_ variable before each test.
_CORPUS = os.environ.get("SEXTANT_FORMATS_CORPUS", "")


def _corpus() -> Path:
    folder = _CORPUS
    if not folder or not Path(folder).is_dir():
        pytest.skip(
            "the held-out corpus is not here: set SEXTANT_FORMATS_CORPUS to a folder made by "
            "scripts/formats_corpus.py --out DIR"
        )
    return Path(folder)


def test_every_mailbox_target_is_a_message_of_the_built_mbox() -> None:
    corpus = _corpus()
    path = corpus / formats_corpus.MBOX_NAME
    container = document_id_for(path)
    taken: set[str] = set()
    for part in mail.unpack(path.read_bytes(), path.name).files:
        taken.add(part_id(container, part.key, taken))
    wanted = {t.doc_id for q in load_golden(GOLDEN) for t in q.targets if t.doc_id.startswith(f"{container}.")}
    assert wanted and wanted <= taken, wanted - taken


def test_the_built_corpus_is_complete() -> None:
    corpus = _corpus()
    assert sorted(p.name for p in corpus.iterdir()) == formats_corpus.corpus_names()
