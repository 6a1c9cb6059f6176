"""``server.json``, the MCP Registry entry: valid against the registry's published schema and true to the package.

``tests/schemas/server.schema.2025-12-11.json`` is the registry's schema byte for byte (checked by its sha256,
published with it); the registry is not reachable from the tests.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import tomllib
from typing import Any

import jsonschema
import pytest

from sextant.settings import KbSettings
from tests.conftest import REPO
from tests.kb.kb_process import server_command

SCHEMA = REPO / "tests" / "schemas" / "server.schema.2025-12-11.json"
PUBLISHED_SHA256 = "3fba09590c99f61735d234822279f4223fab9e300c0a81e81c91ab62a4114de0"


@pytest.fixture(scope="module")
def entry() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((REPO / "server.json").read_text(encoding="utf-8"))
    return loaded


def test_the_entry_is_valid_against_the_registry_s_published_schema(entry: dict[str, Any]) -> None:
    assert hashlib.sha256(SCHEMA.read_bytes()).hexdigest() == PUBLISHED_SHA256
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert entry["$schema"] == schema["$id"]
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())
    assert [error.message for error in validator.iter_errors(entry)] == []
    # The validator does refuse what the registry refuses.
    assert list(validator.iter_errors(entry | {"name": "sextant-kb"}))


def test_the_entry_names_this_package_its_version_and_the_readme_s_marker(entry: dict[str, Any]) -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert entry["version"] == project["version"]
    for package in entry["packages"]:
        assert (package["registryType"], package["identifier"]) == ("pypi", project["name"])
        assert (package["version"], package["runtimeHint"]) == (project["version"], "uvx")
    assert {p["transport"]["type"] for p in entry["packages"]} == {"stdio", "streamable-http"}
    # The registry proves the PyPI package is ours by this line in its description (the README).
    assert f"mcp-name: {entry['name']}" in (REPO / "README.md").read_text(encoding="utf-8")


def test_every_argument_and_variable_the_entry_names_is_real(entry: dict[str, Any]) -> None:
    usage = subprocess.run([server_command(), "--help"], capture_output=True, text=True, check=True).stdout
    settings = {f"SEXTANT_{name.upper()}" for name in KbSettings.model_fields}
    for package in entry["packages"]:
        for argument in package.get("packageArguments", []):
            assert argument["name"] in usage, argument["name"]
        for variable in package.get("environmentVariables", []):
            assert variable["name"] in settings, variable["name"]
    (http,) = [p for p in entry["packages"] if p["transport"]["type"] == "streamable-http"]
    (header,) = http["transport"]["headers"]
    assert (header["name"], header["value"]) == ("Authorization", "Bearer {token}") and header["isSecret"]
