"""Remote embedders (``sextant.kb.embed_remote``, ``embed_gemini``) against a protocol double on loopback.

Sleeps and the clock are injected (``FakeTime``): backoff and pacing are asserted as the pauses asked for, never
as time that passed.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import math
import random
import subprocess
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from mcp import Client, StdioServerParameters

from sextant.kb.chroma_client import StoreError, close_client, open_client
from sextant.kb.documents import LoadedDocument
from sextant.kb.embed_remote import Pacer, RemoteOptions, remote_model, retry_after_s
from sextant.kb.embeddings import Embedder, EmbedderError
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.live_collections import read_manifest
from sextant.kb.migrate import migrate
from sextant.settings import KbSettings
from tests.kb.embedding_server_double import EmbeddingServerDouble, vector_of
from tests.kb.kb_process import server_command, server_environment, tool_command

KEY = "sk-test-7f3a9c"  # a secret that must never be written anywhere
GENAI = importlib.util.find_spec("google.genai") is not None

TOPICS = {
    "espresso": "Descale the espresso machine every eight weeks with citric acid; backflush the group head weekly.",
    "bees": "In spring the beekeeper checks the queen is laying; swarm control starts in May with extra supers.",
    "bread": "A sourdough starter is fed flour and water daily; the dough proves overnight in a cool kitchen.",
    "bikes": "Clean and lubricate the bicycle chain every few hundred kilometres; check tyre pressure weekly.",
}


class FakeTime:
    """A clock that moves only when something sleeps on it; every pause is kept."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


class MaxJitter(random.Random):
    """Jitter at its top: each backoff is its full envelope, ``base * 2**attempt``."""

    def random(self) -> float:
        return 1.0


@pytest.fixture
def double() -> Iterator[EmbeddingServerDouble]:
    with EmbeddingServerDouble(dim=48, api_key=KEY) as server:
        yield server


Remote = Callable[..., Embedder]


@pytest.fixture
def remote(double: EmbeddingServerDouble) -> Iterator[Remote]:
    """Build remote embedders against the double (``openai:`` at its /v1, ``gemini:`` at its root); closed after."""
    made: list[Embedder] = []

    def make(name: str = "openai:toy-embed", *, time: FakeTime | None = None, **options: Any) -> Embedder:
        url = double.openai_url if name.startswith("openai:") else double.base_url
        opts = RemoteOptions(**{"url": url, "api_key": KEY, **options})
        time = time or FakeTime()
        model = remote_model(name, opts, sleep=time.sleep, clock=time.clock, rng=MaxJitter())
        made.append(Embedder(name, model=model))
        return made[-1]

    yield make
    for embedder in made:
        embedder.close()


def _unit(texts: list[str], dim: int) -> np.ndarray:
    v = np.asarray([vector_of(t, dim) for t in texts], dtype=np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


# ---- batching and the two sides ---------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 7, 8, 9, 25])
def test_n_texts_go_in_ceil_n_over_batch_requests_and_come_back_in_order(
    remote: Remote, double: EmbeddingServerDouble, n: int
) -> None:
    embedder = remote(batch=8)
    double.requests.clear()  # the dimension probe made at start-up
    texts = [f"note {i} about descaling the machine number {i}" for i in range(n)]
    v = embedder.embed(texts)
    assert len(double.requests) == math.ceil(n / 8)
    assert [len(r.texts) for r in double.requests][:-1] == [8] * (len(double.requests) - 1)
    assert double.texts() == texts
    np.testing.assert_allclose(v, _unit(texts, 48), atol=1e-6)  # the double answers out of order: sorted by index
    assert (embedder.dim, embedder.runtime, embedder.precision) == (48, "remote", "openai")


def test_questions_and_passages_get_their_own_prefix(remote: Remote, double: EmbeddingServerDouble) -> None:
    embedder = remote(query_prefix="search_query: ", document_prefix="search_document: ")
    double.requests.clear()
    embedder.embed(["Descale monthly."])
    embedder.embed_query("how often to descale")
    assert double.texts() == ["search_document: Descale monthly.", "search_query: how often to descale"]


def test_the_key_is_sent_as_a_bearer_token_and_dimensions_are_asked_for(
    remote: Remote, double: EmbeddingServerDouble
) -> None:
    embedder = remote(dimensions=12)
    assert embedder.dim == 12
    assert double.requests[0].headers["Authorization"] == f"Bearer {KEY}"
    assert double.requests[0].body == {"model": "toy-embed", "input": ["dimension probe"], "dimensions": 12}


def test_chunks_are_cut_with_the_packaged_tokenizer_within_the_configured_window(remote: Remote) -> None:
    embedder = remote(window=1024)
    text = "Café owners descale machines; " * 100
    spans = embedder.token_spans(text)
    assert len(spans) == embedder.count_tokens(text) > 256
    assert text[spans.starts[0] : spans.ends[0]] == "Café"
    assert embedder.max_tokens == 1022


@pytest.mark.skipif(not GENAI, reason="google-genai is not installed (the app extra)")
def test_gemini_batches_through_batch_embed_contents_with_a_task_type_per_side(
    remote: Remote, double: EmbeddingServerDouble
) -> None:
    embedder = remote("gemini:gemini-embedding-001", batch=4, dimensions=32)
    double.requests.clear()
    texts = [f"passage {i} on bees and swarms" for i in range(10)]
    v = embedder.embed(texts)
    q = embedder.embed_query("when do bees swarm")
    assert [r.protocol for r in double.requests] == ["gemini"] * 4 and double.texts() == [*texts, "when do bees swarm"]
    assert [len(r.texts) for r in double.requests] == [4, 4, 2, 1]
    tasks = [{req["taskType"] for req in r.body["requests"]} for r in double.requests]
    assert tasks == [{"RETRIEVAL_DOCUMENT"}] * 3 + [{"RETRIEVAL_QUERY"}]
    assert double.requests[0].headers["x-goog-api-key"] == KEY
    assert double.requests[0].body["requests"][0]["outputDimensionality"] == 32
    np.testing.assert_allclose(v, _unit(texts, 32), atol=1e-6)
    np.testing.assert_allclose(q, _unit(["when do bees swarm"], 32)[0], atol=1e-6)
    assert embedder.precision == "gemini"


@pytest.mark.skipif(not GENAI, reason="google-genai is not installed (the app extra)")
def test_gemini_retries_a_429_after_its_retry_after_and_refuses_a_bad_key(
    remote: Remote, double: EmbeddingServerDouble
) -> None:
    time = FakeTime()
    embedder = remote("gemini:gemini-embedding-001", time=time)
    double.fail(429, retry_after="3")
    double.fail(503)
    assert embedder.embed(["bees"]).shape == (1, 48)
    assert time.slept == [3.0, 1.0]  # Retry-After, then the second backoff's envelope (0.5 * 2**1)
    double.api_key = "another-key"
    with pytest.raises(EmbedderError, match="SEXTANT_EMBEDDER_API_KEY"):
        embedder.embed(["bees"])


def test_gemini_without_google_genai_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "google.genai" else real(name, *a)
    )
    with pytest.raises(EmbedderError, match=r"pip install 'sextant-kb\[app\]'"):
        remote_model("gemini:gemini-embedding-001", RemoteOptions(api_key=KEY))


# ---- retries and backoff ----------------------------------------------------------------------------------


def test_429_waits_what_retry_after_says_and_5xx_backs_off_exponentially(
    remote: Remote, double: EmbeddingServerDouble
) -> None:
    time = FakeTime()
    embedder = remote(time=time)
    double.requests.clear()
    double.fail(429, retry_after="7")
    double.fail(500)
    double.fail(502)
    double.fail(503)
    v = embedder.embed(["espresso"])
    np.testing.assert_allclose(v, _unit(["espresso"], 48), atol=1e-6)
    assert time.slept == [7.0, 1.0, 2.0, 4.0]  # then 0.5 * 2**attempt at full jitter
    assert len(double.requests) == 5


def test_jitter_keeps_each_backoff_between_half_and_all_of_its_envelope(
    double: EmbeddingServerDouble,
) -> None:
    time = FakeTime()
    opts = RemoteOptions(url=double.openai_url, api_key=KEY)
    model = remote_model("openai:toy", opts, sleep=time.sleep, clock=time.clock, rng=random.Random(0))
    try:
        double.fail(500, times=5)
        model.encode(["x"], "document", 1)
    finally:
        model.close()
    envelopes = [0.5 * 2**attempt for attempt in range(5)]
    assert all(e / 2 <= s < e for s, e in zip(time.slept, envelopes, strict=True))


def test_a_request_that_keeps_failing_ends_in_an_error_naming_the_setting(
    remote: Remote, double: EmbeddingServerDouble
) -> None:
    time = FakeTime()
    embedder = remote(time=time, retries=2)
    double.requests.clear()
    double.fail(503, times=3)
    with pytest.raises(EmbedderError, match=r"failed 3 times.*SEXTANT_EMBEDDER_RETRIES"):
        embedder.embed(["bees"])
    assert len(double.requests) == 3 and len(time.slept) == 2


def test_a_retry_after_past_five_minutes_is_a_spent_quota_said_at_once(
    remote: Remote, double: EmbeddingServerDouble
) -> None:
    time = FakeTime()
    embedder = remote(time=time)
    double.fail(429, retry_after="3600")
    with pytest.raises(EmbedderError, match="asks to wait 3600 s"):
        embedder.embed(["bees"])
    assert time.slept == []


def test_a_slow_answer_times_out_and_is_retried(remote: Remote, double: EmbeddingServerDouble) -> None:
    time = FakeTime()
    embedder = remote(time=time, timeout_s=0.2)
    double.requests.clear()
    double.stall(30)  # released when the double stops; the client gives up long before
    v = embedder.embed(["bread"])
    np.testing.assert_allclose(v, _unit(["bread"], 48), atol=1e-6)
    assert len(double.requests) == 2 and time.slept == [0.5]


def test_retry_after_reads_seconds_and_http_dates() -> None:
    now = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    assert retry_after_s("12") == 12.0 and retry_after_s("0.5") == 0.5
    assert retry_after_s(format_datetime(now + timedelta(seconds=90), usegmt=True), now=now) == 90.0
    assert retry_after_s(format_datetime(now - timedelta(seconds=90), usegmt=True), now=now) == 0.0
    assert retry_after_s("soon") is None and retry_after_s(None) is None


@pytest.mark.parametrize(("status", "hint"), [(401, "SEXTANT_EMBEDDER_API_KEY"), (404, "SEXTANT_EMBEDDER_URL")])
def test_a_refusal_is_not_retried_and_says_what_to_check(
    remote: Remote, double: EmbeddingServerDouble, status: int, hint: str
) -> None:
    time = FakeTime()
    embedder = remote(time=time)
    double.requests.clear()
    double.fail(status)
    with pytest.raises(EmbedderError, match=hint):
        embedder.embed(["bees"])
    assert len(double.requests) == 1 and time.slept == []


def test_a_missing_url_names_the_setting() -> None:
    with pytest.raises(EmbedderError, match="SEXTANT_EMBEDDER_URL"):
        remote_model("openai:nomic-embed-text", RemoteOptions())
    with pytest.raises(EmbedderError, match="names no model"):
        remote_model("openai:", RemoteOptions())


def test_the_key_is_never_logged_nor_in_an_error(
    remote: Remote, double: EmbeddingServerDouble, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    embedder = remote(retries=1)
    double.fail(500, times=2)
    with pytest.raises(EmbedderError) as failed:
        embedder.embed(["bees"])
    assert caplog.records and KEY not in caplog.text and KEY not in str(failed.value)
    assert KEY not in repr(RemoteOptions(url=double.openai_url, api_key=KEY))


# ---- the rate limit ---------------------------------------------------------------------------------------


def test_requests_per_minute_are_spaced_evenly() -> None:
    time = FakeTime()
    pacer = Pacer(rpm=120, tpm=0, clock=time.clock, sleep=time.sleep)
    for _ in range(5):
        pacer.wait(tokens=1000)
    assert time.slept == [0.5] * 4 and time.now == 2.0


def test_tokens_per_minute_space_requests_by_their_size() -> None:
    time = FakeTime()
    pacer = Pacer(rpm=600, tpm=6000, clock=time.clock, sleep=time.sleep)
    pacer.wait(tokens=1000)  # 10 s of the token budget; the request budget would allow 0.1 s
    pacer.wait(tokens=100)
    pacer.wait(tokens=0)
    assert time.slept == [10.0, 1.0]


def test_time_spent_elsewhere_counts_towards_the_next_request() -> None:
    time = FakeTime()
    pacer = Pacer(rpm=60, tpm=0, clock=time.clock, sleep=time.sleep)
    pacer.wait(tokens=0)
    time.now += 0.75  # the caller worked meanwhile
    pacer.wait(tokens=0)
    time.now += 5.0  # and was idle: no burst is saved up
    pacer.wait(tokens=0)
    pacer.wait(tokens=0)
    assert time.slept == [0.25, 1.0]


def test_an_embedder_paces_its_batches_and_counts_their_tokens(remote: Remote, double: EmbeddingServerDouble) -> None:
    time = FakeTime()
    embedder = remote(time=time, batch=2, rpm=60)
    embedder.embed([f"text {i}" for i in range(6)])
    assert time.slept == [1.0, 1.0, 1.0]  # the probe went at once; three batches a second apart
    tokens = FakeTime()
    by_tokens = remote(time=tokens, batch=2, tpm=60)  # a token a second
    by_tokens.embed(["one two three", "four five"])
    by_tokens.embed(["six"])
    # Each batch waits out the one before it: the probe's 4 tokens ([CLS] dimension probe [SEP]), then 5 + 2 * 2.
    assert tokens.slept == [4.0, 9.0]


# ---- the store's fingerprint and migrations ---------------------------------------------------------------


def _text(topic: str) -> str:
    return " ".join(f"{TOPICS[topic]} Note {i} on {topic}." for i in range(6))


def test_a_store_records_the_model_and_dimension_never_the_url_or_key(
    remote: Remote, double: EmbeddingServerDouble, tmp_path: Path
) -> None:
    settings = KbSettings(chroma_dir=tmp_path / "store", chunk_tokens=48, _env_file=None)
    embedder = remote("openai:model-a")
    with KnowledgeBase.open(settings, embedder=embedder) as kb:
        for topic in TOPICS:
            kb.ingest(topic, LoadedDocument(text=_text(topic), title=topic.title()))
        assert kb.search("how often to descale the espresso machine", k=1).hits[0].document_id == "espresso"
        stats = kb.stats()
        assert (stats.embedder, stats.dimension, stats.embedder_runtime) == ("openai:model-a", 48, "remote openai")
    client = open_client(path=settings.store_dir(), url=None)
    try:
        live = read_manifest(client).live
        meta = client.get_collection(live.chunks).metadata
    finally:
        close_client(client)
    assert (meta["embedder"], meta["dim"]) == ("openai:model-a", 48)
    stored = json.dumps(meta)
    assert KEY not in stored and double.base_url not in stored
    for path in settings.store_dir().rglob("*"):
        assert not path.is_file() or KEY.encode() not in path.read_bytes(), path

    with pytest.raises(StoreError, match=r"built with embedder 'openai:model-a'.*SEXTANT_EMBEDDER=openai:model-a"):
        KnowledgeBase.open(settings, embedder=remote("openai:model-b"))
    double.dims["model-a"] = 32  # the same name at another dimension is another embedder too
    with pytest.raises(StoreError, match=r"\(dimension 48\)"):
        KnowledgeBase.open(settings, embedder=remote("openai:model-a"))


@pytest.mark.slow
def test_a_store_moves_from_the_local_minilm_to_the_remote_model_and_back(
    remote: Remote, double: EmbeddingServerDouble, embedder: Embedder, tmp_path: Path
) -> None:
    local = KbSettings(chroma_dir=tmp_path / "store", chunk_tokens=48, lexical_refresh_s=0, _env_file=None)
    with KnowledgeBase.open(local, embedder=embedder) as kb:
        for topic in TOPICS:
            kb.ingest(topic, LoadedDocument(text=_text(topic), title=topic.title()))
        chunks = kb.stats().chunks
    away = remote("openai:toy-embed", batch=5)
    double.requests.clear()
    client = open_client(path=local.store_dir(), url=None)
    try:
        report = migrate(client, away, batch=8)
    finally:
        close_client(client)
    assert (report.old_embedder, report.new_embedder, report.embedded) == (embedder.name, "openai:toy-embed", chunks)
    assert len(double.texts()) == chunks and len(double.requests) == sum(
        math.ceil(len(b) / 5) for b in _batches(chunks, 8)
    )

    moved = local.model_copy(update={"embedder": "openai:toy-embed"})
    with KnowledgeBase.open(moved, embedder=away) as kb:
        assert kb.stats().dimension == 48
        assert kb.search("sourdough starter fed flour", k=1, mode="dense", abstain=False).hits[0].document_id == "bread"
    with pytest.raises(StoreError, match="built with embedder 'openai:toy-embed'"):
        KnowledgeBase.open(local, embedder=embedder)

    client = open_client(path=local.store_dir(), url=None)
    try:
        back = migrate(client, embedder)
    finally:
        close_client(client)
    assert back.new_embedder == embedder.name and back.embedded == chunks
    with KnowledgeBase.open(local, embedder=embedder) as kb:
        assert kb.search("bicycle chain lubricate", k=1, mode="dense", abstain=False).hits[0].document_id == "bikes"


def _batches(n: int, size: int) -> list[range]:
    return [range(lo, min(lo + size, n)) for lo in range(0, n, size)]


# ---- the real commands, configured from the environment ---------------------------------------------------


@pytest.mark.slow
@pytest.mark.anyio
async def test_sextant_ingest_and_sextant_kb_embed_through_the_endpoint_named_in_the_environment(
    double: EmbeddingServerDouble, tmp_path: Path
) -> None:
    docs = _topic_files(tmp_path)
    env = _remote_env(double, tmp_path, SEXTANT_EMBEDDER_BATCH="4", SEXTANT_LOG_LEVEL="DEBUG")
    ingest = subprocess.run(
        [tool_command("sextant-ingest"), str(docs), "-r"], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert ingest.returncode == 0, ingest.stderr
    assert "4 added" in ingest.stdout and KEY not in ingest.stderr + ingest.stdout
    assert len(double.texts()) > 4 and all(len(r.texts) <= 4 for r in double.requests)

    embedded = len(double.texts())
    params = StdioServerParameters(command=server_command(), env=env, cwd=str(tmp_path))
    async with Client(params, read_timeout_seconds=120) as client:
        found = await client.call_tool("kb_search", {"query": "swarm control starts in May", "k": 1, "mode": "dense"})
        assert found.structured_content is not None
        assert found.structured_content["hits"][0]["document_id"] == "bees"
        stats = await client.call_tool("kb_stats", {})
        assert stats.structured_content is not None
        assert stats.structured_content["embedder"] == "openai:toy-embed"
        assert stats.structured_content["embedder_runtime"] == "remote openai"
    assert double.texts()[embedded:] == ["dimension probe", "swarm control starts in May"]

    env["SEXTANT_EMBEDDER"] = "openai:other-model"
    refused = subprocess.run(
        [tool_command("sextant-ingest"), str(docs), "-r"], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert refused.returncode == 1 and "built with embedder 'openai:toy-embed'" in refused.stderr

    migrated = subprocess.run(
        [tool_command("sextant-kb-migrate"), "--embedder", "openai:other-model"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert migrated.returncode == 0, migrated.stderr
    assert "now embedded by 'openai:other-model'" in migrated.stdout
    assert {r.model for r in double.requests[-2:]} == {"other-model"}
    sent = len(double.requests)
    again = subprocess.run(
        [tool_command("sextant-ingest"), str(docs), "-r"], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    # The files count as changed (a document's content hash names its embedder, and the migration kept the old
    # hashes), but their chunks' vectors are the migrated ones, reused: only the start-up probe reaches the endpoint.
    assert again.returncode == 0 and "4 files:" in again.stdout, again.stderr
    assert [(r.model, r.texts) for r in double.requests[sent:]] == [("other-model", ["dimension probe"])]


def test_an_endpoint_that_gives_up_mid_run_stops_sextant_ingest_with_a_message(
    double: EmbeddingServerDouble, tmp_path: Path
) -> None:
    docs = _topic_files(tmp_path)
    double.fail(200)  # the start-up probe answers; every request after it fails
    double.fail(503, times=50)
    env = _remote_env(double, tmp_path, SEXTANT_EMBEDDER_RETRIES="0")
    ingest = subprocess.run(
        [tool_command("sextant-ingest"), str(docs), "-r"], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert ingest.returncode == 1
    assert "sextant-ingest: stopped: " in ingest.stderr and "Traceback" not in ingest.stderr
    assert "0 added" in ingest.stdout  # the summary of what was done before it stopped


def _topic_files(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for topic in TOPICS:
        # One sentence each: the double's word-hash vectors then clear the abstention threshold (cosine 0.30).
        (docs / f"{topic}.md").write_text(f"# {topic.title()}\n\n{TOPICS[topic]}\n", encoding="utf-8")
    return docs


def _remote_env(double: EmbeddingServerDouble, tmp_path: Path, **extra: str) -> dict[str, str]:
    """The commands' environment: a store under ``tmp_path`` embedded by ``double``."""
    return {
        **server_environment(tmp_path),
        "SEXTANT_EMBEDDER": "openai:toy-embed",
        "SEXTANT_EMBEDDER_URL": double.openai_url,
        "SEXTANT_EMBEDDER_API_KEY": KEY,
        "SEXTANT_PROVIDER": "none",
        **extra,
    }


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
