"""Bounded parsing: files parsed in a real worker process, refused by the limit they hit, the parent unharmed."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from sextant.kb.documents import LoadError
from sextant.kb.loader_sandbox import BoundedParser, ParseLimitError, ParseLimits, ParserCrash
from sextant.kb.loaders import _FORMATS, load_bytes, pdf
from sextant.settings import KbSettings
from tests.conftest import data_dir
from tests.kb.fuzzing import CRASH, LOADED, REFUSED, Seed, made_seeds, mutated, outcome, shared_seeds
from tests.kb.loaders.mail_factory import mbox, message
from tests.kb.loaders.scans import needs_tesseract, scanned_pdf

pytestmark = pytest.mark.slow  # every test here runs a worker process

SEEDS = {Path(s.name).suffix: s for s in made_seeds()}
CORPUS = Path(__file__).resolve().parent / "fuzz_corpus"
DOUBLE = [sys.executable, "-m", "tests.kb.parse_worker_double"]


@pytest.fixture(scope="module")
def parser() -> Iterator[BoundedParser]:
    with BoundedParser() as shared:
        yield shared


def test_documents_come_back_from_the_worker_as_the_loaders_made_them() -> None:
    with BoundedParser() as bounded:
        for seed in SEEDS.values():
            assert bounded.parse(seed.data, seed.name) == load_bytes(seed.data, seed.name)
        assert bounded.starts == 1  # one worker served every file


def test_an_unreadable_file_is_refused_with_the_loaders_reason_and_the_worker_goes_on() -> None:
    with BoundedParser() as bounded:
        with pytest.raises(LoadError, match="not a readable PDF") as refused:
            bounded.parse(b"%PDF-1.7 this is not really a pdf", "broken.pdf")
        assert type(refused.value) is LoadError
        assert bounded.parse(SEEDS[".md"].data, "notes.md").title == "Fuzzing notes"
        assert bounded.starts == 1


def test_a_file_over_the_size_limit_is_refused_before_any_worker_starts(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * 101)
    with BoundedParser(ParseLimits(max_file_bytes=100)) as bounded:
        with pytest.raises(LoadError, match="SEXTANT_MAX_FILE_BYTES=100"):
            bounded.parse(big.read_bytes(), big.name)
        with pytest.raises(LoadError, match="SEXTANT_MAX_FILE_BYTES=100"):
            bounded.read_file(big)
        assert bounded.starts == 0


def test_a_pdf_over_the_page_limit_is_refused_naming_the_limit() -> None:
    made = SEEDS[".pdf"]
    with BoundedParser(ParseLimits(max_pdf_pages=2)) as bounded, pytest.raises(LoadError) as refused:
        bounded.parse(made.data, made.name)
    assert "3 pages, more than SEXTANT_MAX_PDF_PAGES=2" in refused.value.reason
    # pypdf, which reads what PyMuPDF cannot, counts pages before reading them too.
    with pytest.raises(LoadError, match="SEXTANT_MAX_PDF_PAGES=2"):
        pdf._load_with_pypdf(made.data, made.name, "PyMuPDF: (not asked)", max_pages=2)


def test_a_document_over_the_character_limit_is_refused_in_the_worker() -> None:
    with BoundedParser(ParseLimits(max_document_chars=50)) as bounded, pytest.raises(LoadError) as refused:
        bounded.parse(SEEDS[".md"].data, "notes.md")
    assert "308 characters, more than SEXTANT_MAX_DOCUMENT_CHARS=50" in refused.value.reason


def test_a_mailbox_comes_back_with_its_messages_read_one_over_the_character_limit_left_to_be_refused() -> None:
    short = message(subject="Short", message_id="<short@example.com>", body="Brief.\n")
    long = message(subject="Long", message_id="<long@example.com>", body="word " * 400 + "\n")
    with BoundedParser(ParseLimits(max_document_chars=1000)) as bounded:
        doc, found = bounded.parse_with_parts(mbox(short, long), "archive.mbox")
        assert doc == load_bytes(mbox(short, long), "archive.mbox") and found is not None
        first, second = found.files
        assert first.loaded is not None and first.loaded.text.endswith("Brief.")
        assert second.loaded is None  # not sent: parsed on its own, it is refused as any file that long is
        with pytest.raises(LoadError, match="more than SEXTANT_MAX_DOCUMENT_CHARS=1000"):
            bounded.parse(second.data, second.name)
        assert bounded.parse_with_parts(SEEDS[".md"].data, "notes.md") == (
            load_bytes(SEEDS[".md"].data, "notes.md"),
            None,
        )


def test_a_stalled_worker_is_killed_at_the_time_limit_and_replaced() -> None:
    text = SEEDS[".txt"]
    with BoundedParser(ParseLimits(timeout_s=0.5)) as bounded:
        bounded.parse(text.data, text.name)
        pid = bounded.worker_pid
        assert pid is not None
        os.kill(pid, signal.SIGSTOP)  # a real stall: the worker gets no CPU until it is killed
        with pytest.raises(ParseLimitError) as refused:
            bounded.parse(text.data, text.name)
        assert refused.value.setting == "SEXTANT_PARSE_TIMEOUT_S"
        assert "longer than SEXTANT_PARSE_TIMEOUT_S=0.5 s" in refused.value.reason
        assert bounded.parse(text.data, text.name).title == "Opening hours"
        assert bounded.starts == 2 and bounded.worker_pid != pid


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS is enforced on Linux only")
def test_a_file_that_needs_more_memory_than_the_limit_is_refused_naming_it() -> None:
    with BoundedParser() as probe:
        probe.parse(SEEDS[".txt"].data, "probe.txt")
        baseline_mb = _address_space_mb(probe.worker_pid)
    # 48 MiB of room above what the worker holds once ready; 32 MiB of text and its decoded copy do not fit.
    limits = ParseLimits(memory_mb=baseline_mb + 48, max_file_bytes=64 * 1024 * 1024)
    flood = b"# Heading\n\n" + b"word " * (32 * 1024 * 1024 // 5)
    with BoundedParser(limits) as bounded:
        with pytest.raises(ParseLimitError) as refused:
            bounded.parse(flood, "flood.md")
        assert refused.value.setting == "SEXTANT_PARSE_MEMORY_MB"
        assert f"more memory than SEXTANT_PARSE_MEMORY_MB={limits.memory_mb}" in refused.value.reason
        assert bounded.parse(SEEDS[".txt"].data, "after.txt").title == "Opening hours"


def test_a_worker_that_dies_mid_file_is_a_refusal_naming_the_signal() -> None:
    with BoundedParser(command=[*DOUBLE, "crash"]) as bounded, pytest.raises(ParserCrash) as refused:
        bounded.parse(b"anything", "file.txt")
    assert "the parser process died (signal SIGSEGV)" in refused.value.reason


def test_a_reply_that_is_not_one_is_a_refusal_not_an_error_here() -> None:
    with BoundedParser(command=[*DOUBLE, "garbage"]) as bounded, pytest.raises(ParserCrash, match="died"):
        bounded.parse(b"anything", "file.txt")


def test_limits_come_from_the_settings_with_the_documented_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ParseLimits.from_settings(KbSettings(_env_file=None)) == ParseLimits()  # type: ignore[call-arg]
    monkeypatch.setenv("SEXTANT_PARSE_TIMEOUT_S", "3")
    monkeypatch.setenv("SEXTANT_MAX_PDF_PAGES", "7")
    limits = ParseLimits.from_settings(KbSettings(_env_file=None))  # type: ignore[call-arg]
    assert limits == replace(ParseLimits(), timeout_s=3.0, max_pdf_pages=7)


# --- fuzzing: the short run (the long one is bench/fuzz_loaders.py) -------------------------------------------

FUZZ_SEEDS = made_seeds() + shared_seeds(data_dir(), max_bytes=200_000)


def test_every_loader_has_a_made_fuzz_seed() -> None:
    # A loader that lands without a seed would never be fuzzed, here or in bench/fuzz_loaders.py.
    assert {_FORMATS[suffix] for suffix in SEEDS} == set(_FORMATS.values())


@settings(
    max_examples=300,  # 17 formats, PDFs drawn twice as often: about 15 inputs each
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(case=mutated(FUZZ_SEEDS))
def test_damaged_files_are_loaded_or_refused_with_a_named_reason(parser: BoundedParser, case: Seed) -> None:
    kind, reason = outcome(parser, case)
    assert kind != CRASH, f"{case.name}: {reason}"
    assert kind in (LOADED, REFUSED) or kind.startswith("SEXTANT_")
    assert kind == LOADED or reason


def _corpus() -> list[Path]:
    return sorted(p for p in CORPUS.iterdir() if p.name != "README.md") if CORPUS.is_dir() else []


@pytest.mark.parametrize(
    "path",
    _corpus() or [pytest.param(None, marks=pytest.mark.skip(reason="the corpus is empty: no fuzz run found a crash"))],
    ids=lambda p: p.name if isinstance(p, Path) else "empty",
)
def test_fuzz_corpus_is_refused_or_loaded(parser: BoundedParser, path: Path) -> None:
    kind, reason = outcome(parser, Seed(path.name, path.read_bytes()))
    assert kind != CRASH, reason


def _address_space_mb(pid: int | None) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) // 1024 + 1
    raise AssertionError(f"no VmSize for process {pid}")


@needs_tesseract
def test_each_page_ocr_reads_is_told_to_whoever_shows_progress() -> None:
    told: list[tuple[str, int]] = []
    with BoundedParser() as parser:
        parser.on_ocr_page = lambda name, page: told.append((name, page))
        parser.parse(scanned_pdf(), "scan.pdf")
    assert told == [("scan.pdf", 1), ("scan.pdf", 2), ("scan.pdf", 3)]
