"""File bytes -> ``LoadedDocument``: one module per format, chosen by file suffix."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from sextant.kb.documents import LoadedDocument, LoadError

Loader = Callable[[bytes, str], LoadedDocument]


def _loaders() -> dict[str, Loader]:
    # Imported lazily so that `sextant-kb --help` does not pay for PyMuPDF and python-docx.
    from sextant.kb.loaders import docx, markdown, pdf, text

    return {
        ".pdf": pdf.load,
        ".docx": docx.load,
        ".md": markdown.load,
        ".markdown": markdown.load,
        ".txt": text.load,
        ".text": text.load,
    }


SUPPORTED_SUFFIXES = (".pdf", ".docx", ".md", ".markdown", ".txt", ".text")


def supported_files(folder: Path) -> list[Path]:
    """Every file under ``folder`` (recursively) that a loader can read, in path order.

    Hidden files and folders (``.git``, ``.obsidian``, an editor's ``.#notes.md``) and Office's ``~$`` lock
    files are left out: they are tools' state, not documents.
    """
    return sorted(
        p
        for p in folder.rglob("*")
        if p.suffix.lower() in SUPPORTED_SUFFIXES and not _hidden(p.relative_to(folder)) and p.is_file()
    )


def _hidden(relative: Path) -> bool:
    return any(part.startswith((".", "~$")) for part in relative.parts)


def load_bytes(data: bytes, name: str, *, max_pdf_pages: int | None = None) -> LoadedDocument:
    """Load a file's bytes, choosing the loader by the suffix of ``name``.

    ``max_pdf_pages`` refuses a longer PDF before any page is read.

    Raises:
        LoadError: the format is not supported, the file cannot be read or is over the page limit; the
            reason says which.
    """
    suffix = Path(name).suffix.lower()
    if suffix == ".pdf" and max_pdf_pages is not None:
        from sextant.kb.loaders import pdf

        return pdf.load(data, name, max_pages=max_pdf_pages)
    loader = _loaders().get(suffix)
    if loader is None:
        supported = ", ".join(SUPPORTED_SUFFIXES)
        raise LoadError(name, f"unsupported file type {suffix or '(none)'!r}; supported: {supported}")
    return loader(data, name)


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
