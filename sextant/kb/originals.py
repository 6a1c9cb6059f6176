"""The original bytes of each ingested PDF, kept beside the store so a cited page can be shown as it looks.

One file per document, ``<store>/originals/<doc_id>.pdf`` (a workspace's store folder has its own, removed
with it). Written atomically (a temporary file, fsynced, renamed over the old one), so a reader sees the old
file or the new one, never half of either. Only PDFs are kept: they are the format whose page is worth
seeing; the text of every format is in the store already.
"""

from __future__ import annotations

from pathlib import Path

from sextant.kb.durable import fsync_dir, replace_atomically

FOLDER = "originals"
# A PDF's header may follow up to 1 KiB of junk; readers (MuPDF among them) accept that.
_HEADER_WITHIN = 1024


def is_pdf(data: bytes) -> bool:
    """Whether ``data`` carries a PDF header where readers look for one."""
    return b"%PDF-" in data[:_HEADER_WITHIN]


class Originals:
    """The kept originals of one store, by document id (ids are validated, so each is a safe file name)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @classmethod
    def of_store(cls, store_dir: Path) -> Originals:
        return cls(store_dir / FOLDER)

    def path(self, doc_id: str) -> Path:
        return self.root / f"{doc_id}.pdf"

    def get(self, doc_id: str) -> Path | None:
        """The kept original's path, or None when none is kept."""
        path = self.path(doc_id)
        return path if path.is_file() else None

    def keep(self, doc_id: str, data: bytes) -> None:
        """Write (or replace) a document's original atomically.

        Raises:
            OSError: it could not be written; any earlier original is untouched.
        """
        self.root.mkdir(parents=True, exist_ok=True)
        replace_atomically(self.path(doc_id), data, prefix=f".{doc_id}.")
        fsync_dir(self.root)

    def remove(self, doc_id: str) -> bool:
        """Remove a document's original; whether there was one."""
        try:
            self.path(doc_id).unlink()
        except FileNotFoundError:
            return False
        fsync_dir(self.root)
        return True
