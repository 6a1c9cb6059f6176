"""``sextant-forget --list`` / ``sextant-forget ID… [-y]``: remove documents, after asking."""

from __future__ import annotations

import argparse
import sys

from sextant.kb.knowledge_base import KnowledgeBase, KnowledgeBaseError


def list_documents(kb: KnowledgeBase) -> list[str]:
    """One line per document: id, chunk count, title."""
    docs = kb.documents()
    if not docs:
        return ["the knowledge base is empty"]
    width = max(len(d.id) for d in docs)
    return [f"{d.id:<{width}}  {d.chunks:>6} chunks  {d.title}" for d in docs]


def confirm(question: str) -> bool:
    """Ask on the terminal; with no terminal to ask, the answer is no."""
    if not sys.stdin.isatty():
        return False
    return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="sextant-forget",
        description="Remove documents (and all their chunks) from Sextant's knowledge base.",
    )
    parser.add_argument("ids", nargs="*", metavar="ID", help="document ids to remove (see --list)")
    parser.add_argument("--list", action="store_true", help="list document ids, chunk counts and titles")
    parser.add_argument("-y", "--yes", action="store_true", help="do not ask for confirmation (for scripts)")
    args = parser.parse_args(argv)
    if not args.list and not args.ids:
        parser.error("name at least one document ID, or use --list")

    from sextant.kb.cli.common import open_knowledge_base

    with open_knowledge_base("sextant-forget") as kb:
        if args.list:
            print("\n".join(list_documents(kb)))
            return
        failed = forget_ids(kb, args.ids, assume_yes=args.yes)
    sys.exit(1 if failed else 0)


def forget_ids(kb: KnowledgeBase, ids: list[str], *, assume_yes: bool) -> bool:
    """Remove each id after confirmation; returns True when any was not removed."""
    failed = False
    for doc_id in ids:
        record = kb.store.get_document(doc_id)
        if record is None:
            print(f"sextant-forget: no document with id {doc_id!r} (see --list)", file=sys.stderr)
            failed = True
            continue
        if not assume_yes and not confirm(f"Remove {doc_id!r} ({record.title}, {record.chunk_count} chunks)?"):
            print(f"kept {doc_id} (pass -y to remove without asking)")
            failed = True
            continue
        try:
            removed = kb.forget(doc_id)
        except KnowledgeBaseError as exc:
            print(f"sextant-forget: {exc}", file=sys.stderr)
            failed = True
            continue
        print(f"removed {doc_id}: {removed} chunks")
    return failed
