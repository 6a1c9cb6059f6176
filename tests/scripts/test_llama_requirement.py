"""scripts/llama_requirement.py: the llama-cpp-python pin, read from pyproject.toml's "local" extra."""

from __future__ import annotations

from pathlib import Path

from tests.scripts.script_module import load_script

llama_requirement = load_script(Path(__file__).resolve().parents[2] / "scripts" / "llama_requirement.py")


def test_the_pin_is_the_local_extra_s_and_exact(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        '[project]\nname = "x"\n[project.optional-dependencies]\n'
        'local = ["numpy>=1", "llama-cpp-python[server]==9.8.7"]\napp = ["llama-cpp-python==1.0"]\n',
        encoding="utf-8",
    )
    assert llama_requirement.llama_requirement(pyproject) == "llama-cpp-python[server]==9.8.7"


def test_the_repository_pins_one_exact_version() -> None:
    # setup.sh compares the installed version with the text after "==": a range would rebuild every run.
    requirement = llama_requirement.llama_requirement()
    assert "==" in requirement and not any(c in requirement for c in "<>~,")
