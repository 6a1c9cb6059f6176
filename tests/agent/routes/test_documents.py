"""Documents over HTTP: text ingested, files uploaded, the list, and each page as text or as an image."""

from __future__ import annotations

from typing import Any

import pytest

from sextant.agent.deps import KB_RETRY_S
from sextant.agent.uploads import MAX_UPLOAD_FILES
from sextant.kb.knowledge_base import KnowledgeBase
from tests.agent.app_client import REPO, ClientFor, agent_state

pytestmark = pytest.mark.slow


def test_upload_parses_files_on_the_server_keeping_pages(client_for: Any) -> None:
    client = client_for()
    pdf = REPO / "eval" / "corpus" / "documents" / "lighthouse-history.pdf"
    files = [
        ("files", ("lighthouse-history.pdf", pdf.read_bytes(), "application/pdf")),
        ("files", ("notes.exe", b"MZ", "application/octet-stream")),
        ("files", ("empty.md", b"", "text/markdown")),
    ]
    body = client.post("/upload", files=files).json()
    by_name = {r["name"]: r for r in body["results"]}
    assert by_name["lighthouse-history.pdf"]["status"] == "added"
    assert by_name["notes.exe"]["status"] == "refused" and "unsupported" in by_name["notes.exe"]["reason"]
    assert by_name["empty.md"]["status"] == "refused"
    docs = {d["id"]: d for d in client.get("/documents").json()["documents"]}
    assert docs["lighthouse-history"]["pages"] > 1
    page = client.get("/documents/lighthouse-history/pages/2").json()
    assert page["page"] == 2 and page["text"]
    assert client.get("/documents/lighthouse-history/pages/999").status_code == 404


def test_a_pdf_page_is_an_image_with_the_quote_highlighted_and_no_image_is_a_404(
    client_for: Any, kb: KnowledgeBase
) -> None:
    client = client_for()  # the fixture ingests the espresso guide as text
    pdf = REPO / "eval" / "corpus" / "documents" / "lighthouse-history.pdf"
    client.post("/upload", files=[("files", ("lighthouse-history.pdf", pdf.read_bytes(), "application/pdf"))])
    quote = "The final account, signed off in 1850, records a total cost of 11,460 pounds"  # "ﬁ", "ﬀ" in the PDF
    response = client.get("/documents/lighthouse-history/pages/2/image", params={"quote": quote})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "image/png" and response.content.startswith(b"\x89PNG\r\n\x1a\n")
    assert int(response.headers["x-sextant-highlights"]) >= 2  # the quote runs over two lines
    plain = client.get("/documents/lighthouse-history/pages/2/image")
    assert plain.status_code == 200 and plain.headers["x-sextant-highlights"] == "0"

    for path, why in [
        ("/documents/espresso/pages/1/image", "only PDFs have them"),
        ("/documents/lighthouse-history/pages/999/image", "has no page 999"),
        ("/documents/nothing-here/pages/1/image", "no document with id 'nothing-here'"),
    ]:
        missing = client.get(path)
        assert missing.status_code == 404 and missing.json()["detail"].startswith("no page image: "), missing.text
        assert why in missing.json()["detail"]
    assert client.get("/documents/lighthouse-history/pages/2/image", params={"quote": "x" * 2001}).status_code == 422

    # A kept file that cannot be rendered is the knowledge base's failure, not a missing page.
    kept = kb.originals.get("lighthouse-history")
    assert kept is not None
    kept.write_bytes(b"%PDF-1.7 damaged beyond repair")
    failed = client.get("/documents/lighthouse-history/pages/2/image")
    assert failed.status_code == 502 and "could not be rendered" in failed.json()["detail"]


def test_an_upload_whose_every_file_is_refused_is_a_4xx_carrying_the_reasons(client_for: Any) -> None:
    client = client_for()
    files = [("files", ("notes.exe", b"MZ", "application/octet-stream")), ("files", ("empty.md", b"", "text/markdown"))]
    response = client.post("/upload", files=files)
    assert response.status_code == 422
    assert "notes.exe: unsupported file type" in response.json()["detail"]
    assert "empty.md: the file is empty" in response.json()["detail"]


def test_ingest_reports_added_unchanged_and_replaced_and_the_list_shows_each_document(client_for: ClientFor) -> None:
    client = client_for()
    taxes = {"id": "taxes", "title": "Taxes", "content": "File by April 15."}
    statuses = []
    for document in (taxes, taxes, {**taxes, "content": "File by April 30."}):
        response = client.post("/ingest", json={"documents": [document]})
        assert response.status_code == 200, response.text
        assert response.json()["request_id"] == response.headers["x-request-id"]
        statuses.append(response.json()["results"][0]["status"])
    assert statuses == ["added", "unchanged", "replaced"]
    listed = {d["id"]: d for d in client.get("/documents").json()["documents"]}
    assert set(listed) == {"espresso", "taxes"} and listed["taxes"]["title"] == "Taxes"


def test_a_page_is_read_as_text_and_one_that_is_not_there_is_a_404_naming_it(client_for: ClientFor) -> None:
    client = client_for()
    pages = [
        {"id": "taxes", "title": "Taxes", "content": text, "page": n}
        for n, text in ((1, "Intro."), (2, "File by April 15."))
    ]
    assert client.post("/ingest", json={"documents": pages}).status_code == 200
    page = client.get("/documents/taxes/pages/2")
    assert page.status_code == 200 and page.json() == {"document_id": "taxes", "page": 2, "text": "File by April 15."}
    missing = client.get("/documents/taxes/pages/7")
    assert missing.status_code == 404 and missing.json()["detail"] == "'taxes' has no page 7 (it has 2 pages)"
    for path in ("/documents/taxes/pages/0", "/documents/bad%20id/pages/1"):
        assert client.get(path).status_code == 422, path


def test_a_page_the_knowledge_base_fails_to_read_is_a_502_never_a_missing_page(
    client_for: ClientFor, kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = client_for()
    pages = [{"id": "taxes", "title": "Taxes", "content": "File by April 15.", "page": 1}]
    assert client.post("/ingest", json={"documents": pages}).status_code == 200

    def broken(*_: object) -> str:
        raise RuntimeError("an index out of step with the store")

    monkeypatch.setattr(kb, "page_text", broken)
    failed = client.get("/documents/taxes/pages/1")
    assert failed.status_code == 502 and failed.json()["detail"].startswith("the knowledge base failed: reading")


def test_while_the_knowledge_base_is_down_documents_and_pages_are_a_503_never_a_missing_page(
    client_for: ClientFor,
) -> None:
    client = client_for()
    agent_state(client).kb.reason = "the knowledge base stopped answering"  # as the supervisor marks a hung process
    for path in ("/documents", "/documents/espresso/pages/1", "/documents/espresso/pages/1/image"):
        response = client.get(path)
        assert response.status_code == 503, path
        assert response.json()["detail"] == "the knowledge base is unavailable: the knowledge base stopped answering"
        assert response.headers["retry-after"] == str(KB_RETRY_S)


def test_more_files_than_one_upload_may_carry_are_refused_before_any_is_read(client_for: ClientFor) -> None:
    client = client_for()
    notes = [("files", (f"n{i}.md", b"# Note\nA short note.", "text/markdown")) for i in range(MAX_UPLOAD_FILES + 1)]
    response = client.post("/upload", files=notes)
    assert response.status_code == 413 and response.json()["detail"] == f"at most {MAX_UPLOAD_FILES} files per upload"
    assert {d["id"] for d in client.get("/documents").json()["documents"]} == {"espresso"}
