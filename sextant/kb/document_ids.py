"""What a document is called: the id a file gets, a URI-safe id, and the id and source of a *part*.

A part is a document stored from inside another file, its container: a mailbox's messages, a message's
attachments. Its source is the container's source, ``#``, and the part's key (stable when the container is
read again: a Message-ID, an attachment's number and name), and its id is the container's id, ``.``, and that
key, made URI-safe; so the knowledge base finds a container's parts when it forgets the container.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path, PurePath, PurePosixPath
from urllib.parse import urlsplit

from sextant.kb.loaders import CONTAINER_SUFFIXES
from sextant.kb.refusal import KnowledgeBaseError

DOC_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
MAX_ID = 128
PART_MARK = "#"


def document_id_for(path: Path) -> str:
    """The id a file gets when ingested: its name without the suffix, made URI-safe."""
    return uri_safe_id(path.stem)


def url_document_id(url: str) -> str:
    """The id a web page gets: its host and path without the last part's suffix (``docs.python.org-3-library-socket``),
    and its query; one too long for an id keeps its first 111 characters and a hash of the whole address."""
    parts = urlsplit(url)
    path = PurePosixPath(parts.path or "/")
    if path.suffix:
        path = path.with_suffix("")
    text = "-".join(p for p in (parts.netloc, str(path).strip("/"), parts.query) if p)
    safe = _safe(text)
    if len(safe) <= MAX_ID:
        return safe
    return f"{safe[:111]}-{hashlib.sha256(url.encode('utf-8')).hexdigest()[:16]}"


def uri_safe_id(text: str) -> str:
    """``text`` as a document id: runs of other characters become one '-', and at most 128 are kept."""
    return _safe(text)[:MAX_ID]


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.") or "document"


def validate_document_id(doc_id: str) -> str:
    """Raises KnowledgeBaseError unless ``doc_id`` is 1-128 URI-safe characters."""
    if not DOC_ID.match(doc_id):
        raise KnowledgeBaseError(
            f"invalid document id {doc_id!r}: use 1-128 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return doc_id


def is_container(name: str) -> bool:
    """Whether a file of this name (or a document of this source) holds parts stored as documents of their own."""
    return PurePath(name).suffix.lower() in CONTAINER_SUFFIXES


def part_source(source: str, key: str) -> str:
    return f"{source}{PART_MARK}{key}"


def container_source(source: str) -> str | None:
    """The source of the container a part came from, or None for a document that is no part."""
    lowered = source.lower()
    found = [at + len(suffix) for suffix in CONTAINER_SUFFIXES if (at := lowered.find(suffix + PART_MARK)) >= 0]
    return source[: min(found)] if found else None


def part_id(container_id: str, key: str, taken: set[str]) -> str:
    """The id of a part: readable where it fits in 128 characters and is not ``taken``, else a hash of the key."""
    readable = uri_safe_id(f"{container_id}.{key}")
    if len(f"{container_id}.{key}") <= MAX_ID and readable not in taken:
        return readable
    digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return f"{container_id[: MAX_ID - 17]}.{digest}"
