from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest
from opentelemetry import context, trace

from sextant.logs import configure_logging, request_id


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    yield
    root.handlers[:] = saved_handlers  # later tests must not log into this test's captured stream
    root.setLevel(saved_level)


def test_json_logs_are_one_object_per_line_on_stderr_with_the_request_id(
    capsys: pytest.CaptureFixture[str], restore_logging: None
) -> None:
    configure_logging("INFO", "json")
    logging.getLogger("sextant.test").info('a "quoted" message')
    token = request_id.set("req-42")
    try:
        logging.getLogger("sextant.test").warning("inside a request")
    finally:
        request_id.reset(token)
    captured = capsys.readouterr()
    assert captured.out == ""
    first, second = (json.loads(line) for line in captured.err.strip().splitlines()[-2:])
    assert (first["level"], first["logger"], first["message"]) == ("INFO", "sextant.test", 'a "quoted" message')
    assert "request_id" not in first
    assert second["request_id"] == "req-42"


def test_text_logs_name_the_request(capsys: pytest.CaptureFixture[str], restore_logging: None) -> None:
    configure_logging("INFO", "text")
    token = request_id.set("req-7")
    try:
        logging.getLogger("sextant.test").info("hello")
    finally:
        request_id.reset(token)
    assert capsys.readouterr().err.strip().endswith("hello [request req-7]")


def test_lines_inside_a_trace_name_its_trace_id(capsys: pytest.CaptureFixture[str], restore_logging: None) -> None:
    span = trace.SpanContext(trace_id=0x4BF92F3577B34DA6A3CE929D0E0E4736, span_id=0xF067AA0BA902B7, is_remote=True)
    configure_logging("INFO", "json")
    token = context.attach(trace.set_span_in_context(trace.NonRecordingSpan(span)))
    try:
        logging.getLogger("sextant.test").info("traced")
    finally:
        context.detach(token)
    logging.getLogger("sextant.test").info("untraced")
    traced, untraced = (json.loads(line) for line in capsys.readouterr().err.strip().splitlines()[-2:])
    assert traced["trace_id"] == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert "trace_id" not in untraced
