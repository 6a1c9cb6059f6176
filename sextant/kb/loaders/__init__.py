"""File bytes -> ``LoadedDocument``: one module per format, chosen by file suffix."""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from sextant.kb.documents import LoadedDocument, LoadError, Unpacked

Loader = Callable[[bytes, str], LoadedDocument]


class PagedLoader(Protocol):
    def __call__(self, data: bytes, name: str, *, max_pages: int) -> LoadedDocument: ...


# Suffix -> the module of this package whose ``load(data, name)`` reads it. Modules are imported at first use,
# so that `sextant-kb --help` does not pay for PyMuPDF, python-docx and the rest.
_FORMATS: dict[str, str] = {
    ".pdf": "pdf",
    ".docx": "docx",
    ".odt": "odt",
    ".ott": "odt",
    ".xlsx": "xlsx",
    ".xlsm": "xlsx",
    ".xls": "xlsx",  # refused, saying to save it as .xlsx: better than "unsupported type"
    ".ods": "ods",
    ".csv": "delimited",
    ".tsv": "delimited",
    ".tab": "delimited",
    ".pptx": "pptx",
    ".odp": "odp",
    ".otp": "odp",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".epub": "epub",
    ".eml": "mail",
    ".mbox": "mbox",
    ".png": "image",
    ".jpg": "image",
    ".jpeg": "image",
    ".tif": "image",
    ".tiff": "image",
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".text": "text",
}

SUPPORTED_SUFFIXES = tuple(_FORMATS)
# A container holds files that are stored as documents of their own (sextant.kb.containers): a mailbox's messages,
# a message's attachments. Its loader's ``load_with_parts(data, name)`` reads the container's document and those
# files in one pass (``load_with_parts`` here); its module's ``unpack`` hands out the files alone.
CONTAINER_SUFFIXES = (".eml", ".mbox")
_PAGED = ("pdf", "image")  # loaders that refuse a file over a page count before reading a page
NO_SUFFIX = "(no suffix)"


@dataclass(frozen=True, slots=True)
class FolderFiles:
    """The files under a folder: those a loader reads, and the rest (which a person should hear about)."""

    readable: list[Path]
    unreadable: list[Path]


def folder_files(folder: Path) -> FolderFiles:
    """Every file under ``folder`` (recursively), in path order, split by whether a loader reads it.

    Hidden files and folders (``.git``, ``.obsidian``, an editor's ``.#notes.md``) and Office's ``~$`` lock
    files are in neither list: they are tools' state, not documents.
    """
    readable: list[Path] = []
    unreadable: list[Path] = []
    for path in sorted(folder.rglob("*")):
        if _hidden(path.relative_to(folder)) or not path.is_file():
            continue
        (readable if path.suffix.lower() in _FORMATS else unreadable).append(path)
    return FolderFiles(readable, unreadable)


def supported_files(folder: Path) -> list[Path]:
    """Every file under ``folder`` that a loader can read, in path order (see ``folder_files``)."""
    return folder_files(folder).readable


def loader_of(name: str) -> str | None:
    """The loader module that reads a file of this name (``pdf``, ``image``, ``html``…), or None."""
    return _FORMATS.get(Path(name).suffix.lower())


def file_type(path: Path) -> str:
    """What a file is counted as when no loader reads it: its suffix in lower case."""
    return path.suffix.lower() or NO_SUFFIX


def count_types(paths: Iterable[Path]) -> dict[str, int]:
    """How many of ``paths`` there are of each type, most first (then by name)."""
    counts = Counter(file_type(path) for path in paths)
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def describe_unreadable(counts: dict[str, int]) -> str:
    """One line that names what was left out, by type: ``3 files Sextant cannot read were left out: .ppt 2, .zip 1``."""
    total = sum(counts.values())
    kinds = ", ".join(f"{kind} {n}" for kind, n in counts.items())
    files, were = ("files", "were") if total != 1 else ("file", "was")
    return f"{total} {files} Sextant cannot read {were} left out: {kinds}"


def _hidden(relative: Path) -> bool:
    return any(part.startswith((".", "~$")) for part in relative.parts)


def import_loaders() -> None:
    """Import every loader now: the parse worker does, so that no file's time limit pays for the imports."""
    for module in sorted(set(_FORMATS.values())):
        importlib.import_module(f"{__name__}.{module}")


def load_bytes(data: bytes, name: str, *, max_pdf_pages: int | None = None) -> LoadedDocument:
    """Load a file's bytes, choosing the loader by the suffix of ``name``.

    ``max_pdf_pages`` refuses a longer PDF before any page is read.

    Raises:
        LoadError: the format is not supported, the file cannot be read or is over the page limit; the
            reason says which.
    """
    suffix = Path(name).suffix.lower()
    module = _FORMATS.get(suffix)
    if module is None:
        supported = ", ".join(SUPPORTED_SUFFIXES)
        raise LoadError(name, f"unsupported file type {suffix or '(none)'!r}; supported: {supported}")
    loaded = importlib.import_module(f"{__name__}.{module}")
    if module in _PAGED and max_pdf_pages is not None:
        paged: PagedLoader = loaded.load
        return paged(data, name, max_pages=max_pdf_pages)
    loader: Loader = loaded.load
    return loader(data, name)


def load_with_parts(
    data: bytes, name: str, *, max_pdf_pages: int | None = None
) -> tuple[LoadedDocument, Unpacked | None]:
    """A file's document and, for a container, the files it holds (its module's ``unpack``), read in one pass: a
    mailbox's messages are parsed once, and come back already read (``ContainedFile.loaded``). The files are
    None for a file that is no container.

    Raises:
        LoadError: as ``load_bytes``; a part that cannot be read is named in ``Unpacked.skipped``.
    """
    suffix = Path(name).suffix.lower()
    if suffix not in CONTAINER_SUFFIXES:
        return load_bytes(data, name, max_pdf_pages=max_pdf_pages), None
    read: Callable[[bytes, str], tuple[LoadedDocument, Unpacked]] = importlib.import_module(
        f"{__name__}.{_FORMATS[suffix]}"
    ).load_with_parts
    return read(data, name)


def load_file(path: Path) -> LoadedDocument:
    """Read and load one file from disk.

    Raises:
        LoadError: as ``load_bytes``, or the file cannot be read at all.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LoadError(path.name, f"cannot be read: {exc.strerror or exc}") from exc
    return load_bytes(data, path.name)
