"""Verify the golden question sets against the documents they cite.

    python eval/check_golden.py            # checks eval/golden.jsonl and eval/golden-large.jsonl
    python eval/check_golden.py -v         # also prints where each evidence snippet was found

For every answerable question and every entry of its ``relevant`` list this checks that:

* ``doc_id`` names exactly one file in the corpus (id = file name stem);
* ``evidence`` (a verbatim snippet, at most 120 characters) occurs in that document, after
  normalising both sides (Unicode NFKC, which also expands ligatures such as "ﬁ"; a hyphen at a
  PDF line end followed by a lower-case letter joins the two lines, keeping the hyphen; runs of
  whitespace collapse to one space, so PDF line breaks do not matter). Table rows are compared in
  pipe form, "cell | cell | cell": Markdown rows as written, DOCX rows rendered that way;
* for PDFs: ``page`` (physical, 1-based) is in range, the evidence is on that page, ``page_label``
  equals ``doc[page - 1].get_label()``, and the evidence does not also occur on another page;
* ``section`` (when given) is the innermost heading above the evidence: Markdown ATX headings,
  setext headings in .txt files, Heading/Title paragraph styles in DOCX; for the generated PDFs the
  headings of their source in eval/corpus/src (matched as whole lines of the page text), and for
  other PDFs (R-intro) the entries of the PDF outline, located on their pages by their numbered
  heading text;
* kind ``table``: the evidence lies inside a table row (Markdown pipe row, DOCX table row, or, for
  the generated PDFs, a page whose source holds a table; not checked for R-intro);
* kind ``deep``: the evidence starts at least 400 words into the document;
* kind ``multi``: the question cites at least two documents;
* kind ``document`` ("which document…", eval/golden-documents.jsonl): each entry names a whole
  document, only its ``doc_id`` (no page, section or evidence);
* the evidence occurs in no other document of the corpus that the question does not cite.

Unanswerable questions must have ``relevant: []`` and no evidence. The script exits non-zero on any
failure, and also checks the minimum counts the evaluation relies on.

``eval/golden-near-miss.jsonl`` holds only unanswerable questions, each imitating one document. For it
the script checks that every line is a JSON object; that ids are unique, also across the other golden
files; that ``answerable`` is false, ``relevant`` is ``[]`` and there is no evidence; that ``kind`` is
``near-miss``, ``gap`` one of the gap kinds and ``missing`` a sentence; that ``about`` names a document
of eval/corpus/documents; that every document is imitated at least once and there are at least 40
questions; and, as a heuristic guard against a question that quotes its answer, that no run of 8 or
more consecutive words of the question (case and punctuation ignored) occurs in any document's text.
That absence of an answer can only be judged by reading: the guard catches copying, not answers.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import docx
import pymupdf


def say(msg: str) -> None:
    sys.stdout.write(msg + "\n")


def warn(msg: str) -> None:
    sys.stderr.write(msg + "\n")


EVAL = Path(__file__).resolve().parent
KINDS = {"fact", "table", "deep", "paraphrase", "multi", "document"}
DEEP_MIN_WORDS = 400
MAX_EVIDENCE = 120
# what a near-miss question asks for that its document lacks; "entry" is a table row, glossary entry,
# release or list item that does not exist
GAPS = {"number", "name", "date", "step", "entry", "why", "comparison"}
NEAR_MISS_MIN = 40
PYTHON_DOCS_MIN = 20  # answerable questions, and as many near misses, over the Python docs pool
VERBATIM_RUN = 8  # words: a run this long shared with the corpus suggests the question quotes an answer


def norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = text.replace("\u00ad", "")  # soft hyphen
    # a hyphenated compound broken at the end of a PDF line ("entry-\nlevel") reads "entry-level"
    text = re.sub(r"(?<=[A-Za-z])-\s*\n\s*(?=[a-z])", "-", text)
    return re.sub(r"\s+", " ", text).strip()


def strip_inline(text: str) -> str:
    text = re.sub(r"\*\*(.+?)\*\*", r"\1", text)
    return re.sub(r"\*(.+?)\*", r"\1", text)


@dataclass
class Doc:
    doc_id: str
    fmt: str
    text: str  # normalised full text
    headings: list[tuple[int, str]] = field(default_factory=list)  # (offset in text, title)
    table_spans: list[tuple[int, int]] = field(default_factory=list)  # offsets of table rows/cells
    pages: list[tuple[int, int, str]] = field(default_factory=list)  # (start, end, label) per page
    page_texts: list[str] = field(default_factory=list)
    table_pages: set[int] = field(default_factory=set)  # 1-based pages holding a table
    unlocated_pages: set[int] = field(default_factory=set)  # pages with an outline heading not found
    has_source: bool = False  # a generated PDF whose Markdown source tells where its tables are

    def section_at(self, offset: int) -> str | None:
        best = None
        for pos, title in self.headings:
            if pos <= offset:
                best = title
        return best

    def in_table(self, start: int, end: int) -> bool:
        return any(a <= start and end <= b for a, b in self.table_spans)

    def words_before(self, offset: int) -> int:
        return len(self.text[:offset].split())


class Builder:
    """Accumulate normalised text while remembering where headings and table rows start."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.headings: list[tuple[int, str]] = []
        self.tables: list[tuple[int, int]] = []

    def add(self, text: str, heading: bool = False, table: bool = False) -> None:
        t = norm(text)
        if not t:
            return
        if self.parts:
            self.parts.append(" ")
            self.length += 1
        start = self.length
        self.parts.append(t)
        self.length += len(t)
        if heading:
            self.headings.append((start, t))
        if table:
            self.tables.append((start, self.length))

    def doc(self, doc_id: str, fmt: str) -> Doc:
        return Doc(doc_id, fmt, "".join(self.parts), self.headings, self.tables)


def load_markdown(path: Path) -> Doc:
    b = Builder()
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip().startswith("```"):
            fenced = not fenced
            b.add(line)
            continue
        m = None if fenced else re.match(r"^(#{1,6})\s+(.*)$", line.strip())
        if m:
            b.add(strip_inline(m.group(2)), heading=True)
        elif not fenced and line.strip().startswith("|"):
            if not re.fullmatch(r"[\s|:-]+", line):
                b.add(line, table=True)
        else:
            b.add(line)
    return b.doc(path.stem, "md")


def load_text(path: Path) -> Doc:
    b = Builder()
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and re.fullmatch(r"(=+|-+)", nxt.strip()) and len(nxt.strip()) >= 3:
            b.add(line, heading=True)
            i += 2
            continue
        b.add(line)
        i += 1
    return b.doc(path.stem, "txt")


def load_docx(path: Path) -> Doc:
    b = Builder()
    d = docx.Document(str(path))
    for block in d.iter_inner_content():
        if isinstance(block, docx.table.Table):
            # a row is rendered as its cells joined by " | ", the same form as a Markdown pipe row
            for row in block.rows:
                b.add(" | ".join(norm(cell.text) for cell in row.cells), table=True)
        else:
            style = block.style.name if block.style is not None else ""
            b.add(block.text, heading=style.startswith("Heading") or style == "Title")
    return b.doc(path.stem, "docx")


def pdf_source_headings(doc_id: str) -> tuple[list[str], set[int]] | None:
    """Headings (in order) and 1-based pages holding a table, from a generated PDF's source."""
    src = EVAL / "corpus" / "src" / f"{doc_id}.md"
    if not src.exists():
        return None
    headings: list[str] = []
    table_pages: set[int] = set()
    page = 1
    for line in src.read_text(encoding="utf-8").splitlines():
        if line.strip() == "<!-- pagebreak -->":
            page += 1
        elif m := re.match(r"^(#{1,6})\s+(.*)$", line.strip()):
            headings.append(norm(strip_inline(m.group(2))))
        elif line.strip().startswith("|"):
            table_pages.add(page)
    return headings, table_pages


def load_pdf(path: Path) -> Doc:
    pdf = pymupdf.open(str(path))
    b = Builder()
    pages: list[tuple[int, int, str]] = []
    page_texts: list[str] = []
    raw_lines: list[list[str]] = []
    for page in pdf:
        raw = page.get_text()
        b.add(raw)
        pages.append((b.length - len(norm(raw)), b.length, page.get_label()))
        page_texts.append(norm(raw))
        raw_lines.append([norm(x) for x in raw.splitlines()])
    doc = b.doc(path.stem, "pdf")
    doc.pages, doc.page_texts = pages, page_texts
    source = pdf_source_headings(path.stem)
    if source is None:
        # a PDF from elsewhere (R-intro): take headings from its outline, located on their pages
        for level, title, pno in pdf.get_toc():
            t = norm(title)
            if not 1 <= pno <= len(pages):
                continue
            if level == 1:
                pat = r"(?:^|\s)" + re.escape(t) + r"(?=\s|$)"
            else:  # numbered in the text: "2.7 Index vectors; ..." or "B.1 Invoking R ..."
                pat = r"(?:^|\s)(?:[A-Z]|\d+)(?:\.\d+)+ " + re.escape(t) + r"(?=\s|$)"
            m = re.search(pat, page_texts[pno - 1])
            if m is None:
                doc.unlocated_pages.add(pno)
                continue
            local = m.start() + (1 if m.group(0)[:1].isspace() else 0)
            doc.headings.append((pages[pno - 1][0] + local, t))
        doc.headings.sort()
    else:
        headings, doc.table_pages = source
        doc.has_source = True
        # locate each heading as a whole line, in order, so a table of contents does not match
        pos = (0, -1)  # (page index, line index) of the previous heading
        for h in headings:
            found = None
            for pi in range(pos[0], len(pages)):
                lines = raw_lines[pi]
                first = pos[1] + 1 if pi == pos[0] else 0
                k = next((k for k in range(first, len(lines)) if lines[k] == h), None)
                if k is not None:
                    found = (pi, k)
                    break
            if found is None:
                raise SystemExit(f"{path.name}: heading {h!r} from the source is not a line of any page")
            pi, k = found
            local = sum(len(x) + 1 for x in raw_lines[pi][:k] if x)
            assert page_texts[pi][local : local + len(h)] == h
            doc.headings.append((pages[pi][0] + local, h))
            pos = found
    return doc


def load_corpus(folder: Path) -> dict[str, Doc]:
    loaders = {".md": load_markdown, ".txt": load_text, ".docx": load_docx, ".pdf": load_pdf}
    docs: dict[str, Doc] = {}
    for path in sorted(folder.iterdir()):
        if path.suffix in loaders and path.name != "README.md":
            if path.stem in docs:
                raise SystemExit(f"duplicate document id {path.stem!r} in {folder}")
            docs[path.stem] = loaders[path.suffix](path)
    return docs


def check_file(golden: Path, docs: dict[str, Doc], verbose: bool) -> tuple[list[str], list[dict]]:
    errors: list[str] = []
    rows = [json.loads(line) for line in golden.read_text(encoding="utf-8").splitlines() if line.strip()]
    seen: set[str] = set()
    for q in rows:
        qid = q.get("id", "?")

        def err(msg: str, qid: str = qid) -> None:
            errors.append(f"{golden.name} {qid}: {msg}")

        if qid in seen:
            err("duplicate id")
        seen.add(qid)
        for key in ("question", "answerable", "relevant", "answer", "kind"):
            if key not in q:
                err(f"missing field {key!r}")
        if q.get("kind") not in KINDS:
            err(f"unknown kind {q.get('kind')!r}")
        if not q.get("answerable"):
            if q.get("relevant") or q.get("evidence"):
                err("unanswerable question must have relevant: [] and no evidence")
            continue
        rel = q.get("relevant") or []
        if not rel:
            err("answerable question without relevant documents")
            continue
        if q.get("kind") == "document":
            for r in rel:
                if set(r) != {"doc_id"} or r["doc_id"] not in docs:
                    err(f"a document target is only the doc_id of a corpus document, not {r}")
            continue
        if q.get("evidence") != rel[0].get("evidence"):
            err("top-level evidence must equal relevant[0].evidence")
        if q.get("kind") == "multi" and len({r.get("doc_id") for r in rel}) < 2:
            err("kind multi must cite at least two documents")
        cited = {r.get("doc_id") for r in rel}
        for r in rel:
            did = r.get("doc_id")
            doc = docs.get(did)
            if doc is None:
                err(f"unknown doc_id {did!r}")
                continue
            ev_raw = r.get("evidence") or ""
            ev = norm(ev_raw)
            if not ev:
                err(f"{did}: missing evidence")
                continue
            if len(ev_raw) > MAX_EVIDENCE:
                err(f"{did}: evidence longer than {MAX_EVIDENCE} characters")
            if "page" not in r and "section" not in r:
                err(f"{did}: needs page or section")
            offsets = [m.start() for m in re.finditer(re.escape(ev), doc.text)]
            if not offsets:
                err(f"{did}: evidence not found: {ev_raw!r}")
                continue
            where = offsets
            if doc.fmt == "pdf":
                page, label = r.get("page"), r.get("page_label")
                if not isinstance(page, int) or not 1 <= page <= len(doc.pages):
                    err(f"{did}: page {page!r} out of range 1..{len(doc.pages)}")
                    continue
                start, end, real_label = doc.pages[page - 1]
                if label != real_label:
                    err(f"{did}: page {page} has label {real_label!r}, golden says {label!r}")
                if ev not in doc.page_texts[page - 1]:
                    err(f"{did}: evidence not on physical page {page}: {ev_raw!r}")
                    continue
                others = [i + 1 for i, t in enumerate(doc.page_texts) if ev in t and i + 1 != page]
                if others:
                    err(f"{did}: evidence also occurs on page(s) {others}; choose a unique snippet")
                where = [o for o in offsets if start <= o < end] or offsets
                if q.get("kind") == "table" and doc.has_source and page not in doc.table_pages:
                    err(f"{did}: kind table but page {page} holds no table")
            else:
                if "page" in r or "page_label" in r:
                    err(f"{did}: page/page_label are only for PDFs")
            if "section" in r and doc.unlocated_pages:
                # an outline heading between the found section heading and the evidence could not be
                # placed in the text, so the innermost section cannot be trusted
                head = max((h for h in doc.headings if h[0] <= where[0]), default=(0, ""))[0]
                head_page = next(i + 1 for i, (a, b, _) in enumerate(doc.pages) if head <= b)
                if any(head_page <= p <= r["page"] for p in doc.unlocated_pages):
                    err(f"{did}: cannot verify section: an outline heading near page {r['page']} was not located")
            if "section" in r:
                want = norm(r["section"])
                got = [doc.section_at(o) for o in where]
                if want not in got:
                    err(f"{did}: section is {got[0]!r}, golden says {r['section']!r}")
                else:
                    where = [o for o, g in zip(where, got, strict=True) if g == want]
            in_row = any(doc.in_table(o, o + len(ev)) for o in where)
            if q.get("kind") == "table" and doc.fmt != "pdf" and r is rel[0] and not in_row:
                err(f"{did}: kind table but the evidence is not inside a table row")
            if q.get("kind") == "deep" and r is rel[0]:
                words = doc.words_before(where[0])
                if words < DEEP_MIN_WORDS:
                    err(f"{did}: kind deep but the evidence starts only {words} words in")
            for other_id, other in docs.items():
                if other_id not in cited and ev in other.text:
                    err(f"evidence {ev_raw!r} also occurs in uncited document {other_id!r}")
            if verbose:
                loc = f"p{r.get('page')}({r.get('page_label')})" if doc.fmt == "pdf" else ""
                say(f"  ok {qid} {did} {loc} [{doc.section_at(where[0])}] @{doc.words_before(where[0])}w")
    return errors, rows


def words(text: str) -> list[str]:
    """Lower-case words of normalised text, punctuation dropped, for the verbatim-run guard."""
    return re.findall(r"\w+", norm(text).lower())


def runs(tokens: list[str], n: int = VERBATIM_RUN) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def check_near_miss(
    golden: Path, docs: dict[str, Doc], taken: set[str], minimum: int = NEAR_MISS_MIN, *, every_document: bool = True
) -> tuple[list[str], list[dict]]:
    """Check a near-miss file against ``docs``; ``taken`` holds the ids of the other golden files.

    ``every_document``: each document of ``docs`` must be imitated by at least one question (the committed
    corpus); a set over a pool of documents imitates some of them.
    """
    errors: list[str] = []
    rows: list[dict] = []
    for n, line in enumerate(golden.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.append(f"{golden.name}:{n}: not valid JSON ({exc})")
            continue
        if not isinstance(row, dict):
            errors.append(f"{golden.name}:{n}: not a JSON object")
            continue
        rows.append(row)
    corpus_runs = {did: runs(words(doc.text)) for did, doc in docs.items()}
    seen: set[str] = set()
    for q in rows:
        qid = q.get("id", "?")

        def err(msg: str, qid: str = qid) -> None:
            errors.append(f"{golden.name} {qid}: {msg}")

        if qid in seen:
            err("duplicate id")
        elif qid in taken:
            err("id already used in another golden file")
        seen.add(qid)
        for key in ("id", "question", "answerable", "relevant", "kind", "gap", "about", "missing"):
            if key not in q:
                err(f"missing field {key!r}")
        if q.get("answerable") is not False:
            err("a near-miss question must have answerable: false")
        if q.get("relevant") != [] or "evidence" in q:
            err("a near-miss question must have relevant: [] and no evidence")
        if q.get("kind") != "near-miss":
            err(f"kind must be 'near-miss', not {q.get('kind')!r}")
        if q.get("gap") not in GAPS:
            err(f"unknown gap {q.get('gap')!r}; one of {sorted(GAPS)}")
        if not str(q.get("missing") or "").strip():
            err("missing must say what the documents lack")
        if q.get("about") not in docs:
            err(f"about names no document of the corpus: {q.get('about')!r}")
        qruns = runs(words(str(q.get("question", ""))))
        for did, doc_runs in corpus_runs.items():
            shared = qruns & doc_runs
            if shared:
                err(f"{VERBATIM_RUN} or more words quoted verbatim from {did!r}: {' '.join(min(shared))!r}")
    if every_document:
        covered = {q.get("about") for q in rows}
        errors += [f"{golden.name}: no near-miss question about {did!r}" for did in sorted(set(docs) - covered)]
    if len(rows) < minimum:
        errors.append(f"{golden.name}: only {len(rows)} questions, need at least {minimum}")
    return errors, rows


def summarise(name: str, rows: list[dict], docs: dict[str, Doc]) -> str:
    kinds = Counter(q["kind"] for q in rows if q.get("answerable"))
    unans = sum(1 for q in rows if not q.get("answerable"))
    pdf_page = sum(
        1
        for q in rows
        if q.get("answerable") and any(docs[r["doc_id"]].fmt == "pdf" for r in q["relevant"] if r["doc_id"] in docs)
    )
    used = {r["doc_id"] for q in rows for r in q.get("relevant", [])}
    return (
        f"{name}: {len(rows)} questions, {len(rows) - unans} answerable ({dict(sorted(kinds.items()))}), "
        f"{unans} unanswerable, {pdf_page} cite a PDF page; {len(used)}/{len(docs)} documents cited"
    )


def check_python_docs(folder: Path, taken: set[str], verbose: bool) -> list[str]:
    """eval/python-docs.jsonl (answerable) and eval/python-docs-near-miss.jsonl over the Python docs pool.

    The pool is Python's own documentation, which no golden set was written from, so the agent's figures on
    these questions say how the answer checks carry to documents they were not tuned on.
    """
    if not folder.is_dir():
        return [f"--python-docs {folder}: no such folder; make it with scripts/python_docs_pool.py --out {folder}"]
    docs = load_corpus(folder)
    errors, rows = check_file(EVAL / "python-docs.jsonl", docs, verbose)
    if any(not q.get("answerable") for q in rows):
        errors.append("python-docs.jsonl: its unanswerable questions belong in python-docs-near-miss.jsonl")
    if len(rows) < PYTHON_DOCS_MIN:
        errors.append(f"python-docs.jsonl: only {len(rows)} questions, need at least {PYTHON_DOCS_MIN}")
    say(summarise("python-docs.jsonl", rows, docs))
    ids = taken | {str(q.get("id")) for q in rows}
    near_errors, near = check_near_miss(
        EVAL / "python-docs-near-miss.jsonl", docs, ids, PYTHON_DOCS_MIN, every_document=False
    )
    imitated = len({q.get("about") for q in near})
    say(f"python-docs-near-miss.jsonl: {len(near)} near-miss questions about {imitated} documents")
    return errors + near_errors


def main() -> int:
    ap = argparse.ArgumentParser(description="Verify eval/golden*.jsonl against the corpus")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument(
        "--python-docs",
        type=Path,
        help="the Python documentation pool (scripts/python_docs_pool.py --out DIR) that eval/python-docs*.jsonl "
        "are about; without it those two files are not checked",
    )
    args = ap.parse_args()
    errors: list[str] = []
    sets = [
        # file, corpus folder, minimum counts: total, unanswerable, table, deep, PDF-page questions
        (
            EVAL / "golden.jsonl",
            EVAL / "corpus" / "documents",
            dict(total=70, unanswerable=12, table=4, deep=8, pdf=10),
        ),
        (EVAL / "golden-large.jsonl", EVAL / "corpus-large", dict(total=30, unanswerable=5, pdf=25)),
        (EVAL / "golden-documents.jsonl", EVAL / "corpus" / "documents", dict(total=20)),
    ]
    taken: set[str] = set()
    for golden, folder, minimum in sets:
        docs = load_corpus(folder)
        errs, rows = check_file(golden, docs, args.verbose)
        errors += errs
        taken |= {str(q.get("id")) for q in rows}
        answerable = [q for q in rows if q.get("answerable")]
        counts = {
            "total": len(rows),
            "unanswerable": len(rows) - len(answerable),
            "table": sum(q["kind"] == "table" for q in answerable),
            "deep": sum(q["kind"] == "deep" for q in answerable),
            "pdf": sum(
                any(r["doc_id"] in docs and docs[r["doc_id"]].fmt == "pdf" for r in q["relevant"]) for q in answerable
            ),
        }
        for key, need in minimum.items():
            if counts[key] < need:
                errors.append(f"{golden.name}: only {counts[key]} {key} questions, need at least {need}")
        say(summarise(golden.name, rows, docs))
    near_miss = EVAL / "golden-near-miss.jsonl"
    docs = load_corpus(EVAL / "corpus" / "documents")
    errs, rows = check_near_miss(near_miss, docs, taken)
    errors += errs
    gaps = Counter(str(q.get("gap")) for q in rows)
    say(
        f"{near_miss.name}: {len(rows)} unanswerable near-miss questions ({dict(sorted(gaps.items()))}); "
        f"{len({q.get('about') for q in rows} & set(docs))}/{len(docs)} documents imitated"
    )
    if args.python_docs is None:
        say("python-docs*.jsonl: not checked (give --python-docs DIR, made by scripts/python_docs_pool.py)")
    else:
        errors += check_python_docs(args.python_docs, taken | {str(q.get("id")) for q in rows}, args.verbose)
    for e in errors:
        warn("FAIL " + e)
    if errors:
        warn(f"{len(errors)} problem(s)")
        return 1
    say("all golden labels verified")
    return 0


if __name__ == "__main__":
    sys.exit(main())
