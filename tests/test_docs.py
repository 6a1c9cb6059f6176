"""The README and docs/ against the tree: the layout, the command list and every relative link.

The Layout page (docs/layout.md) is read as Markdown tables: a row's first cell names a folder, its
middle cell names things inside it, its last cell says where its tests are. The Commands table's first
cell is a command, its third the file that holds it.
"""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
LAYOUT = DOCS / "layout.md"

_CODE = re.compile(r"`([^`]+)`")
# A backticked name that is a path: a folder (ends in /) or a file with an extension, no spaces.
_PATH = re.compile(r"^\.?[\w*.-]+(/[\w*.-]+)*(/|\.[A-Za-z]+)$")
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def _rows(text: str, header: str) -> list[list[str]]:
    """The body rows of the Markdown table whose header row starts with `header`."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def _code(cell: str) -> list[str]:
    return _CODE.findall(cell)


def _exists(name: str, folder: Path) -> bool:
    """`name` inside `folder`, else from the repository's root; a glob matches at least one path."""
    for base in (folder, REPO):
        if "*" in name:
            if any(base.rglob(name.rstrip("/"))):
                return True
        elif (base / name).exists():
            return True
    return False


def _folder_rows() -> list[list[str]]:
    return _rows(LAYOUT.read_text(encoding="utf-8"), "| folder |")


def _named_folders() -> set[str]:
    return {_code(row[0])[0] for row in _folder_rows()}


def test_every_path_the_layout_names_exists() -> None:
    text = LAYOUT.read_text(encoding="utf-8")
    missing = []
    for row in _folder_rows():
        folder = REPO / _code(row[0])[0]
        if not folder.is_dir():
            missing.append(row[0])
        missing += [name for cell in row[1:] for name in _code(cell) if _PATH.match(name) and not _exists(name, folder)]
    missing += [row[0] for row in _rows(text, "| file |") if not (REPO / _code(row[0])[0]).exists()]
    missing += [row[2] for row in _rows(text, "| command |") if not (REPO / _code(row[2])[0]).is_file()]
    assert not missing, f"docs/layout.md names paths that do not exist: {missing}"


def test_the_layout_lists_every_package_folder() -> None:
    packages = {f"{init.parent.relative_to(REPO).as_posix()}/" for init in (REPO / "sextant").rglob("__init__.py")}
    missing = sorted(packages - _named_folders())
    assert not missing, f"package folders missing from docs/layout.md: {missing}"


def test_the_layout_lists_every_top_level_folder() -> None:
    try:
        tracked = subprocess.run(
            ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True, timeout=60
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tracked folders are unknown")
    folders = {f"{path.split('/')[0]}/" for path in tracked if "/" in path}
    missing = sorted(name for name in folders - _named_folders() if (REPO / name).is_dir())
    assert not missing, f"top-level folders missing from docs/layout.md: {missing}"


def test_the_layout_says_where_every_test_is() -> None:
    named = {name.rstrip("/") for row in _folder_rows() for name in _code(row[-1])}
    python = {path.parent.relative_to(REPO).as_posix() for path in (REPO / "tests").rglob("test_*.py")}
    missing = sorted(folder for folder in python if folder not in named)
    frontend = [
        path.relative_to(REPO).as_posix()
        for pattern in ("*.test.ts", "*.test.tsx", "*.e2e.mjs")
        for path in (REPO / "frontend").rglob(pattern)
        if "node_modules" not in path.parts
    ]
    missing += sorted(path for path in frontend if not any(path.startswith(f"{folder}/") for folder in named))
    assert not missing, f"tests in places docs/layout.md does not name: {missing}"


def test_every_command_is_in_the_command_list() -> None:
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    listed = {_code(row[0])[0]: _code(row[2])[0] for row in _rows(LAYOUT.read_text(encoding="utf-8"), "| command |")}
    wrong = {}
    for name, target in scripts.items():
        module = target.split(":")[0]
        where = f"{module.replace('.', '/')}.py"
        if listed.get(name) != where:
            wrong[name] = where
    shell = [f"scripts/{p.name}" for p in (REPO / "scripts").glob("*.sh")] + ["start_all_services.sh"]
    wrong |= {name: name for name in shell if listed.get(name) != name}
    assert not wrong, f"commands missing from docs/layout.md's list, or listed with the wrong file: {wrong}"


def _github_anchor(heading: str) -> str:
    """The fragment GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))
    return {_github_anchor(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", text, re.M)}


def _markdown_files() -> list[Path]:
    return [REPO / "README.md", *sorted(DOCS.glob("*.md"))]


@pytest.mark.parametrize("page", _markdown_files(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_relative_link_points_at_something(page: Path) -> None:
    broken = []
    for target in _LINK.findall(_FENCE.sub("", page.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z][a-z+.-]*:", target):  # https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        linked = (page.parent / file).resolve() if file else page
        if not linked.exists() or (anchor and linked.suffix == ".md" and anchor not in _anchors(linked)):
            broken.append(target)
    assert not broken, f"{page.name}: links to nothing: {broken}"


def test_the_readme_fits_one_screen_and_keeps_the_two_commands() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 60
    for command in ('bash scripts/quickstart.sh "', "bash scripts/test.sh\n"):
        assert command in readme
    links = set(_LINK.findall(readme))
    pages = {f"docs/{p.name}" for p in DOCS.glob("*.md")}
    assert not pages - links, f"docs pages the README does not link: {sorted(pages - links)}"
