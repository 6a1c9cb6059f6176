"""scripts/python_docs_pool.py: Python's reST documentation becomes Markdown the knowledge base's loader reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from sextant.kb.loaders import load_file
from tests.scripts.script_module import load_script

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "python_docs_pool.py"

python_docs_pool = load_script(SCRIPT)

FAQ = """\
===============
Programming FAQ
===============

.. only:: html

   .. contents::

General Questions
=================

.. _faq-debugger:

How do I find the :mod:`pdb` debugger?
--------------------------------------

.. index::
   single: debugger

Use :func:`breakpoint` or see :ref:`the tutorial <tut-debug>`.

Deeper
^^^^^^

Text with :meth:`~object.__eq__`.
"""


def test_adornments_become_atx_headings_in_the_order_the_file_first_uses_each_style() -> None:
    markdown = python_docs_pool.to_markdown(FAQ)
    headings = [line for line in markdown.splitlines() if line.startswith("#")]
    assert headings == [
        "# Programming FAQ",
        "## General Questions",
        "### How do I find the pdb debugger?",
        "#### Deeper",
    ]


def test_roles_become_their_text_and_prose_free_directives_are_left_out() -> None:
    markdown = python_docs_pool.to_markdown(FAQ)
    assert "Use breakpoint or see the tutorial." in markdown
    assert "Text with object.__eq__." in markdown
    assert "_faq-debugger" not in markdown and "single: debugger" not in markdown and ".. index" not in markdown


def test_the_loader_reads_the_headings_as_sections(tmp_path: Path) -> None:
    sources = tmp_path / "_sources"
    (sources / "faq").mkdir(parents=True)
    (sources / "faq" / "programming.rst.txt").write_text(FAQ)
    python_docs_pool.main(["--sources", str(sources), "--out", str(tmp_path / "pool")])

    doc = load_file(tmp_path / "pool" / "faq-programming.md")
    assert doc.title == "Programming FAQ"
    assert "How do I find the pdb debugger?" in [s.title for s in doc.sections]


def test_files_of_the_same_name_in_two_parts_keep_distinct_ids(tmp_path: Path) -> None:
    sources = tmp_path / "_sources"
    for part in ("faq", "howto"):
        (sources / part).mkdir(parents=True)
        (sources / part / "index.rst.txt").write_text(f"{part.upper()} contents\n============\n\nText.\n")
    python_docs_pool.main(["--sources", str(sources), "--out", str(tmp_path / "pool")])

    pool = tmp_path / "pool"
    assert sorted(p.name for p in pool.iterdir()) == ["faq-index.md", "howto-index.md"]
    assert load_file(pool / "howto-index.md").title == "HOWTO contents"


def test_no_sources_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=r"apt-get install python3\.11-doc"):
        python_docs_pool.main(["--sources", str(tmp_path), "--out", str(tmp_path / "pool")])
