"""Image loader (PNG, JPEG, TIFF): each image, or each frame of a multi-page TIFF, is a page read by OCR.

The image is wrapped in a PDF, a page per frame sized by the image's own resolution (MuPDF's
``convert_to_pdf``), and that PDF is read by the PDF loader, so an image's page goes through OCR, reading
order and running heads exactly as a scanned PDF's page does, and its word boxes are in that page's
coordinates. Keeping ``as_pdf``'s bytes as the original lets ``kb_page_image`` show and highlight the page.
"""

from __future__ import annotations

from pathlib import Path

import pymupdf

from sextant.kb.documents import LoadedDocument, LoadError
from sextant.kb.loaders import pdf

SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff")
_FILETYPES = {".png": "png", ".jpg": "jpeg", ".jpeg": "jpeg", ".tif": "tiff", ".tiff": "tiff"}


def load(data: bytes, name: str, *, max_pages: int | None = None) -> LoadedDocument:
    """Load an image; with ``max_pages``, a TIFF with more frames is refused before any is read.

    Raises:
        LoadError: the image cannot be decoded, has too many frames, OCR is off or not installed, or OCR
            found no words in it.
    """
    return pdf.load(as_pdf(data, name, max_pages=max_pages), name, max_pages=max_pages)


def as_pdf(data: bytes, name: str, *, max_pages: int | None = None) -> bytes:
    """The image as a PDF of image-only pages, one per frame.

    Raises:
        LoadError: the bytes are not an image of the kind the suffix names, or have too many frames.
    """
    suffix = Path(name).suffix.lower()
    filetype = _FILETYPES.get(suffix)
    if filetype is None:
        raise LoadError(name, f"not an image file ({suffix or 'no suffix'}); images are {', '.join(SUFFIXES)}")
    try:
        with pymupdf.open(stream=data, filetype=filetype) as image:
            if image.page_count == 0:
                raise LoadError(name, f"not a readable {filetype.upper()} image")
            if max_pages is not None and image.page_count > max_pages:
                raise LoadError(
                    name,
                    f"the image has {image.page_count} pages, more than SEXTANT_MAX_PDF_PAGES={max_pages}; "
                    "split it, or raise the limit",
                )
            return image.convert_to_pdf()
    except LoadError:
        raise
    except MemoryError:
        raise
    # MuPDF reports an undecodable image through several exception types.
    except Exception as exc:
        raise LoadError(name, f"not a readable {filetype.upper()} image ({exc}); export it again") from exc
