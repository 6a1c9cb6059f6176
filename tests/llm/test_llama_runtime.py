"""The one module that reaches into llama-cpp-python: its version guard and its interface, on SmolLM2-135M."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from llama_cpp import Llama, LlamaGrammar

from sextant.llm import llama_runtime
from sextant.llm.llama_runtime import PINNED_VERSION, LlamaRuntime, LlamaVersionError, check_version
from tests.llm.conftest import loaded
from tests.llm.llama_replies import QUESTIONS, STATEMENTS, reply

REPO = Path(__file__).resolve().parents[2]


def test_another_llama_cpp_python_is_refused_before_anything_loads_naming_both_versions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(llama_runtime, "version", lambda name: "0.3.99" if name == "llama-cpp-python" else "?")
    with pytest.raises(LlamaVersionError, match=r"llama-cpp-python 0\.3\.36.*0\.3\.99 is installed"):
        check_version()
    with pytest.raises(LlamaVersionError):  # not llama.cpp's error about a file that does not exist
        LlamaRuntime(model_path=str(REPO / "no-such-model.gguf"), verbose=False)


def test_the_installed_version_is_the_pinned_one_and_the_pin_is_pyprojects() -> None:
    check_version()
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    pins = [re.fullmatch(r"llama-cpp-python(\[\w+\])?==(.+)", line) for line in extras["local"]]
    assert [pin.group(2) for pin in pins if pin] == [PINNED_VERSION]


@pytest.mark.parametrize(("given", "expected"), [(None, "PASSIVE"), ("ACTIVE", "ACTIVE")])
def test_openmp_threads_sleep_while_waiting_unless_the_user_chose(given: str | None, expected: str) -> None:
    # libgomp reads the policy once, as llama_cpp loads it: only a fresh interpreter shows what it read.
    env = {key: value for key, value in os.environ.items() if key != "OMP_WAIT_POLICY"}
    if given is not None:
        env["OMP_WAIT_POLICY"] = given
    code = "import os, sextant.llm.llama_runtime; print(os.environ['OMP_WAIT_POLICY'])"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == expected


@pytest.fixture(scope="module")
def runtimes(smollm2: Path) -> Iterator[dict[str, Llama]]:
    with loaded(Llama, smollm2) as library, loaded(LlamaRuntime, smollm2) as runtime:
        yield {"library": library, "runtime": runtime}


@pytest.mark.parametrize("schema", [STATEMENTS, None], ids=["statements", "no-grammar"])
def test_without_strategies_the_runtime_decodes_as_the_library_does(
    runtimes: dict[str, Llama], schema: dict[str, Any] | None
) -> None:
    assert reply(runtimes["runtime"], QUESTIONS[0], schema) == reply(runtimes["library"], QUESTIONS[0], schema)


def _runtime(runtimes: dict[str, Llama]) -> LlamaRuntime:
    runtime = runtimes["runtime"]
    assert isinstance(runtime, LlamaRuntime)
    return runtime


def test_the_cache_is_read_on_and_cut_back_to_a_prefix(runtimes: dict[str, Llama]) -> None:
    runtime = _runtime(runtimes)
    tokens = runtime.tokenize(b"Descale the espresso machine every two months.")
    runtime.reset()
    runtime.evaluate(tokens[:4])
    runtime.evaluate(tokens[4:], every_position=True)
    assert runtime.cached_tokens() == tokens
    assert runtime.keep_cached(3) and runtime.cached_tokens() == tokens[:3]
    runtime.evaluate(tokens[3:])
    assert runtime.cached_tokens() == tokens


def test_a_token_the_grammar_rejects_gives_way_to_the_best_it_allows(runtimes: dict[str, Llama]) -> None:
    runtime = _runtime(runtimes)
    runtime.reset()
    runtime.evaluate(runtime.tokenize(b"The capital of France is"))
    logits = runtime.logits_at(-1)
    assert runtime.greedy_step(None).choose(logits) == int(logits.argmax())
    step = runtime.greedy_step(LlamaGrammar.from_string('root ::= "zebra"', verbose=False))
    token = step.choose(logits)
    step.close()
    assert int(logits.argmax()) != token  # the model's own choice was refused ...
    assert b"zebra".startswith(runtime.detokenize([token]))  # ... for the best token the grammar allows
    allowed = [t for t in range(runtime.n_vocab()) if b"zebra".startswith(runtime.detokenize([t]) or b"#")]
    assert token == max(allowed, key=lambda t: logits[t])


def test_a_shared_reader_reads_as_the_runtimes_own_context_does_and_leaves_it_alone(
    runtimes: dict[str, Llama],
) -> None:
    runtime = _runtime(runtimes)
    prompt = runtime.tokenize(b"Is water wet? Answer yes or no.")
    runtime.reset()
    runtime.evaluate(runtime.tokenize(b"Something else entirely"))
    cached = runtime.cached_tokens()
    shared = runtime.shared_reader(runtime.n_ctx())
    try:
        beside = shared.last_logits(prompt)
    finally:
        shared.close()
    assert runtime.cached_tokens() == cached  # the runtime's cache was not touched
    assert (runtime.reader().last_logits(prompt) == beside).all()  # bit for bit, in the runtime's own context
    assert runtime.cached_tokens() == []  # which now holds the prompt, not what the runtime had read


def test_the_runtime_is_the_one_module_that_reaches_into_llama_cpp_python() -> None:
    private = re.compile(r"llama_cpp\._internals|\._(ctx|model|batch|grammar|root|input_ids|sampler)\b|\bn_tokens =")
    importing = [path for path in (REPO / "sextant").rglob("*.py") if "llama_cpp" in path.read_text(encoding="utf-8")]
    sources = {*importing, *(REPO / "sextant" / "llm").glob("*.py")}
    reaching = {path.name for path in sources if private.search(path.read_text(encoding="utf-8"))}
    assert reaching == {"llama_runtime.py"}


def test_a_runtime_is_built_with_the_strategies_composed_for_it(smollm2: Path) -> None:
    given: list[LlamaRuntime] = []

    def compose(runtime: LlamaRuntime) -> llama_runtime.Strategies:
        given.append(runtime)
        return llama_runtime.Strategies()

    with loaded(partial(LlamaRuntime, compose=compose), smollm2) as runtime:
        assert given == [runtime] and runtime.strategies == llama_runtime.Strategies()
        assert runtime.draft_model is None
