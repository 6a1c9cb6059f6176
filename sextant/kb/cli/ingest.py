"""``sextant-ingest PATH… [-r] [--category C]``: add files to the knowledge base;
``sextant-ingest --sync DIR… [--dry-run]``: make the store mirror folders (see ``sextant.kb.sync``).

Each file is loaded and chunked on its own, and the chunks of several files are embedded and stored together
(``KnowledgeBase.ingest_many``): a file that cannot be read is refused with its reason and the batch goes on.
A PDF page that cannot be read is left out, named with its reason, and the rest of the file is stored. Exits 1
when anything was refused. With ``SEXTANT_OVERVIEWS=on`` and a model configured (the agent's settings, with the
``[app]`` extras installed), it writes an overview of each new or changed document, stored as one more passage;
``--no-summaries`` skips that.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from sextant.contract.results import IngestOutcome, OcrPageInfo, SkippedPageInfo
from sextant.kb.cli.web import ingest_addresses, is_address
from sextant.kb.containers import ParsedFile, store_parts
from sextant.kb.document_ids import document_id_for
from sextant.kb.documents import LoadedDocument
from sextant.kb.embeddings import EmbedderError
from sextant.kb.knowledge_base import KnowledgeBase, KnowledgeBaseError, ToIngest
from sextant.kb.loader_sandbox import BoundedParser, ParseLimits
from sextant.kb.loaders import count_types, describe_unreadable, folder_files
from sextant.kb.refusal import REFUSALS, refusal_reason
from sextant.kb.store import StoreError
from sextant.kb.sync import Done, SyncError, apply, check_roots, plan_for, read_file
from sextant.llm.chat import ChatModel, ModelError
from sextant.llm.factory import build_model
from sextant.llm.overviews import write_overview
from sextant.llm.settings import load_model_settings

log = logging.getLogger(__name__)
NO_MODEL = "no model configured: storing text only, no overviews"


@dataclass(slots=True)
class Summary:
    """What one run did, file by file."""

    added: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    skipped_pages: list[tuple[str, SkippedPageInfo]] = field(default_factory=list)
    unreadable: list[Path] = field(default_factory=list)  # files in the folders walked that no loader reads
    notes: list[str] = field(default_factory=list)  # what else a person should hear (a crawl's report)
    # Parts of a stored container that were not (an inline image, a broken attachment): named, as pages are.
    left_out: list[tuple[str, str]] = field(default_factory=list)
    read_by_ocr: list[tuple[str, list[OcrPageInfo]]] = field(default_factory=list)
    pages: int = 0
    chunks: int = 0
    overviews: int = 0

    def add(self, name: str, outcome: IngestOutcome, *, part: bool = False) -> None:
        """Count one document's outcome under ``name`` (a path or an address), and its parts' (a mailbox's
        messages, a message's attachments) under ``name`` and theirs; a part not stored is left out, not refused:
        its container was stored."""
        if outcome.status == "refused" and part:
            self.left_out.append((name, outcome.reason))
        elif outcome.status == "refused":
            self.refused.append((name, outcome.reason))
        else:
            getattr(self, outcome.status).append(outcome.id)
        self.skipped_pages.extend((name, page) for page in outcome.skipped_pages)
        if outcome.ocr_pages and outcome.status != "unchanged":
            self.read_by_ocr.append((name, outcome.ocr_pages))
        if outcome.status not in ("unchanged", "refused"):
            self.pages += outcome.pages
            self.chunks += outcome.chunks
        for inner in outcome.parts:
            self.add(f"{name} › {inner.title or inner.id}", inner, part=True)

    def lines(self) -> list[str]:
        files = len(self.added) + len(self.replaced) + len(self.unchanged) + len(self.refused)
        out = [
            f"{files} files: {len(self.added)} added, {len(self.replaced)} replaced, "
            f"{len(self.unchanged)} unchanged (skipped), {len(self.refused)} refused; "
            f"{self.pages} pages, {self.chunks} chunks written"
            + (f"; {len(self.skipped_pages)} unreadable pages left out" if self.skipped_pages else "")
            + (f"; overviews: {self.overviews}" if self.overviews else "")
        ]
        if self.unreadable:
            out.append(describe_unreadable(count_types(self.unreadable)))
        out.extend(self.notes)
        out.extend(f"refused {name}: {reason}" for name, reason in self.refused)
        out.extend(
            f"left out page {page.label} of {name}: {page.reason}; the rest is stored"
            for name, page in self.skipped_pages
        )
        out.extend(f"left out {name}: {reason}; the rest is stored" for name, reason in self.left_out)
        out.extend(_ocr_line(name, pages) for name, pages in self.read_by_ocr)
        return out


def _ocr_line(name: str, pages: list[OcrPageInfo]) -> str:
    """``read by OCR: 3 pages of scan.pdf, mean word confidence 91.2 (lowest 62.0, page 2)``."""
    mean = sum(p.confidence for p in pages) / len(pages)
    low = min(pages, key=lambda p: p.confidence)
    count = f"{len(pages)} page{'s' if len(pages) != 1 else ''}"
    lowest = f" (lowest {low.confidence:.1f}, page {low.label})" if len(pages) > 1 else ""
    return f"read by OCR: {count} of {name}, mean word confidence {mean:.1f}{lowest}"


def collect(paths: list[Path], recursive: bool, summary: Summary) -> Iterator[Path]:
    """The files named, walking folders only with ``-r``; anything else is refused into ``summary``, and files
    in the folders that no loader reads are counted there."""
    for path in paths:
        if path.is_dir():
            if not recursive:
                summary.refused.append((str(path), "is a folder; pass -r to ingest the files in it"))
                continue
            found = folder_files(path)
            summary.unreadable.extend(found.unreadable)
            yield from found.readable
        elif path.exists():
            yield path
        else:
            summary.refused.append((str(path), "no such file"))


class OverviewWriter:
    """Has the configured model write the overview of each stored document; the model is loaded at first need."""

    def __init__(self) -> None:
        self._runner = asyncio.Runner()
        self._model: ChatModel | None = None
        self._looked = False

    def add(self, kb: KnowledgeBase, doc_id: str, doc: LoadedDocument, version: str) -> bool:
        """Write and store the overview of ``doc``; False when there is no model or it failed (logged)."""
        if not self._looked:
            self._looked = True
            self._model, reason = _configured_model()
            if self._model is None:
                print(reason, file=sys.stderr)
        if self._model is None:
            return False
        headings = [s.title for s in doc.sections]
        try:
            overview, _ = self._runner.run(write_overview(self._model, doc.title, doc.text, headings))
            kb.set_overview(doc_id, overview, version=version)
        except (ModelError, KnowledgeBaseError, StoreError) as exc:
            log.warning("no overview for %s: %s", doc_id, exc)
            return False
        return True

    def close(self) -> None:
        if self._model is not None:
            self._runner.run(self._model.aclose())
        self._runner.close()


def _configured_model() -> tuple[ChatModel | None, str]:
    """The configured model, or None and why not."""
    settings = load_model_settings("sextant-ingest")
    if settings.overviews == "off":
        return None, "SEXTANT_OVERVIEWS=off: storing text only, no overviews"
    return build_model(settings).model, NO_MODEL


def ingest_paths(
    kb: KnowledgeBase,
    files: list[Path],
    category: str,
    summary: Summary,
    console: Console,
    overviews: OverviewWriter | None = None,
) -> None:
    """Ingest each file, recording its outcome; one bad file never stops the batch.

    Files are parsed in a worker process under the SEXTANT_PARSE_* and SEXTANT_MAX_* limits, so a file that
    stalls or exhausts memory is refused like any unreadable one. The documents go to ``kb.ingest_many``: the
    chunks of several files are embedded in one request and written in one store write (learning/embedders.md,
    learning/scale.md); a file refused by the store is refused with the others of its group, each as it was.
    """
    owners: dict[str, Path] = {}
    read: dict[str, tuple[Path, ToIngest, ParsedFile]] = {}  # by id: the files parsed, until their outcome comes
    with BoundedParser(ParseLimits.from_settings(kb.settings)) as parser, _bar(console) as bar, kb.batch():
        task = bar.add_task("ingesting", total=len(files))
        parser.on_ocr_page = lambda name, page: bar.update(task, description=f"{name}: reading page {page} by OCR")

        def documents() -> Iterator[ToIngest]:
            for path in files:
                bar.update(task, description=path.name)
                doc_id = document_id_for(path)
                if doc_id in owners:
                    summary.refused.append(
                        (str(path), f"id {doc_id!r} is already taken by {owners[doc_id]} in this run")
                    )
                    bar.advance(task)
                    continue
                owners[doc_id] = path
                try:
                    item, parsed = read_file(parser, path, doc_id=doc_id, source=str(path.resolve()), category=category)
                except REFUSALS as exc:
                    summary.refused.append((str(path), refusal_reason(exc)))
                    bar.advance(task)
                    continue
                read[doc_id] = (path, item, parsed)
                yield item

        def embedding(done: int, total: int, what: str) -> None:
            bar.update(task, description=f"{what}: {done} of {total} chunks")

        for outcome in kb.ingest_many(documents(), progress=embedding):
            path, item, parsed = read.pop(outcome.id)
            stored = outcome.status not in ("unchanged", "refused")
            if stored:
                outcome.parts = store_parts(
                    kb, parser, parsed, container_id=item.id, source=item.source, category=category
                )
            summary.add(str(path), outcome)
            if stored and overviews is not None:
                bar.update(task, description=f"overview of {path.name}")
                summary.overviews += overviews.add(kb, item.id, item.doc, outcome.version)
            bar.advance(task)


@dataclass(frozen=True, slots=True)
class WebRun:
    """How web addresses are read: alone, or with ``crawl`` the pages each links to within its site and folder."""

    crawl: bool = False
    max_depth: int = 3
    max_pages: int = 500


def ingest_web(
    kb: KnowledgeBase, urls: list[str], category: str, summary: Summary, console: Console, run: WebRun
) -> list[str]:
    """Fetch and store each address (``sextant.kb.cli.web``), recording each page's outcome in ``summary``;
    returns the crawls' reports."""

    def record(url: str, outcome: IngestOutcome | str) -> None:
        if isinstance(outcome, str):
            summary.refused.append((url, outcome))
        else:
            summary.add(url, outcome)

    with BoundedParser(ParseLimits.from_settings(kb.settings)) as parser, _bar(console) as bar, kb.batch():
        return ingest_addresses(
            kb,
            parser,
            urls,
            category=category,
            record=record,
            bar=bar,
            crawl_pages=run.crawl,
            max_depth=run.max_depth,
            max_pages=run.max_pages,
        )


def sync_folders(
    kb: KnowledgeBase,
    roots: list[Path],
    category: str,
    console: Console,
    overviews: OverviewWriter | None = None,
    *,
    dry_run: bool = False,
) -> bool:
    """Make the store mirror ``roots``: print the plan, then each change as it is made (or, with ``dry_run``,
    only the plan); returns whether any file was refused."""
    todo = plan_for(kb, roots, category=category)
    planned = ", ".join(f"{n} to {kind}" for kind, n in todo.counts().items())
    print(f"sync of {len(roots)} folders: {planned}, {len(todo.unchanged)} unchanged, {len(todo.refused)} refused")
    for path, reason in todo.refused:
        print(f"refused {path}: {reason}")
    if todo.unreadable:
        print(describe_unreadable(count_types(todo.unreadable)))
    if dry_run:
        for action in todo.actions:
            print(action.describe(roots))
        print("dry run: nothing was changed")
        return bool(todo.refused)

    def stored(outcome: IngestOutcome, doc: LoadedDocument) -> None:
        if overviews is not None:
            overviews.add(kb, outcome.id, doc, outcome.version)

    with BoundedParser(ParseLimits.from_settings(kb.settings)) as parser, _bar(console) as bar:
        task = bar.add_task("syncing", total=len(todo.actions))

        def done(step: Done) -> None:
            print(_done_line(step, roots))
            bar.advance(task)

        steps = apply(kb, parser, todo, category=category, on_done=done, on_stored=stored)
    outcomes = [step.outcome for step in steps if step.outcome is not None]
    refused = sum(bool(step.refused) for step in steps)
    made = ", ".join(f"{n} {kind}" for kind, n in _made(steps).items())
    print(
        f"synced: {made}, {len(todo.unchanged)} unchanged, {len(todo.refused) + refused} refused; "
        f"{sum(o.chunks for o in outcomes)} chunks written, {sum(o.embedded for o in outcomes)} embedded"
    )
    return bool(todo.refused) or bool(refused)


def _made(steps: list[Done]) -> dict[str, int]:
    past = {"add": "added", "update": "updated", "move": "moved", "forget": "forgotten"}
    return {word: sum(s.action.kind == kind and not s.refused for s in steps) for kind, word in past.items()}


def _done_line(step: Done, roots: list[Path]) -> str:
    what = step.action.describe(roots)
    if step.refused:
        return f"{what}: refused: {step.refused}"
    if step.outcome is None:
        return f"{what}: {step.removed} chunks removed"
    lines = [f"{what}: {step.outcome.chunks} chunks, {step.outcome.embedded} embedded"]
    lines.extend(f"  left out page {page.label}: {page.reason}" for page in step.outcome.skipped_pages)
    return "\n".join(lines)


def _bar(console: Console) -> Progress:
    """A progress bar on the terminal (stderr), none when output is redirected."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=not console.is_terminal,
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="sextant-ingest",
        description="Add documents, slides, spreadsheets, web pages, e-mail and scans to Sextant's knowledge base "
        "(PDF, Word, OpenDocument, PowerPoint, Excel, CSV, HTML, EPUB, .eml/.mbox, PNG/JPEG/TIFF, Markdown, text). "
        "A file's id is its name without the suffix; ingesting it again replaces it.",
    )
    parser.add_argument(
        "paths", nargs="+", metavar="PATH", help="files, folders with -r or --sync, or web addresses (https://…)"
    )
    parser.add_argument("-r", "--recursive", action="store_true", help="ingest supported files inside folders")
    parser.add_argument(
        "--sync",
        action="store_true",
        help="make the store mirror the folders named: add new files, replace changed ones, forget files gone "
        "from disk, recognise moved files by content; documents from elsewhere are not touched; a file whose "
        "name's id is held takes its path's (notes/a/README.md: notes-a-README.md)",
    )
    parser.add_argument("--dry-run", action="store_true", help="with --sync: print the plan, change nothing")
    parser.add_argument(
        "--crawl",
        action="store_true",
        help="with a web address: also the pages it links to within its site and folder (robots.txt honoured, "
        "llms.txt read first); pages unchanged since the last crawl are not read again",
    )
    parser.add_argument("--depth", type=int, default=3, help="with --crawl: most links followed from the start")
    parser.add_argument("--max-pages", type=int, default=500, help="with --crawl: most pages fetched")
    parser.add_argument("--category", default="", help="a label stored with each document (e.g. 'manuals')")
    parser.add_argument(
        "--no-summaries", action="store_true", help="store text only: no model-written overview per document"
    )
    args = parser.parse_args(argv)
    if args.dry_run and not args.sync:
        parser.error("--dry-run goes with --sync")
    urls = [a for a in args.paths if is_address(a)]
    paths = [Path(a) for a in args.paths if not is_address(a)]
    if args.crawl and not urls:
        parser.error("--crawl goes with a web address (https://…)")
    if args.sync and urls:
        parser.error("--sync mirrors folders; add web addresses without --sync")
    roots: list[Path] = []
    if args.sync:
        try:
            roots = check_roots(paths)
        except SyncError as exc:
            parser.error(str(exc))

    from sextant.kb.cli.common import open_knowledge_base

    console = Console(stderr=True)
    summary = Summary()
    files = [] if args.sync else list(collect(paths, args.recursive, summary))
    overviews = None if args.no_summaries or args.dry_run else OverviewWriter()
    try:
        with open_knowledge_base("sextant-ingest") as kb:
            if args.sync:
                refused = sync_folders(kb, roots, args.category, console, overviews, dry_run=args.dry_run)
            else:
                ingest_paths(kb, files, args.category, summary, console, overviews)
                if urls:
                    web = WebRun(crawl=args.crawl, max_depth=args.depth, max_pages=args.max_pages)
                    summary.notes.extend(ingest_web(kb, urls, args.category, summary, console, web))
                refused = bool(summary.refused)
    except EmbedderError as exc:
        # The embedder gave up (a remote one after its retries): what was stored stays; say so rather than a trace.
        if not args.sync:
            print("\n".join(summary.lines()))
        print(f"sextant-ingest: stopped: {exc}", file=sys.stderr)
        sys.exit(1)
    finally:
        if overviews is not None:
            overviews.close()
    if not args.sync:
        print("\n".join(summary.lines()))
    sys.exit(1 if refused else 0)
