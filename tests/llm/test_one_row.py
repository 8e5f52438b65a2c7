"""One row is one row (issue 30): an OpenAI-compatible service added as a registry row shows
up in every generated docs table and runs the whole provider contract, with nothing else
written for it.

The throwaway row is added with ``registry.extra_row`` here, and, for the contract suite,
in a pytest run of its own that loads this module as a plugin (``-p``) with
``ZERDA_TEST_EXTRA_ROW`` set: the row is then in the registry before the mock server and the
contract module read it.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

from zerda.llm import registry
from zerda.llm.registry import Media, docs, frozen_map

ROOT = Path(__file__).resolve().parents[2]
NAME = "throwaway"
ROW = registry.compatible_row(
    NAME,
    "Throwaway (OpenAI-compatible)",
    "https://api.throwaway.invalid/v1",
    "THROWAWAY_API_KEY",
    "throwaway-1",
    max_tokens_field="max_tokens",
    parallel_tool_calls=True,
    user=Media(parts=frozenset({"image"}), media_types=frozen_map({"image": ("image/png",)})),
)

# Loaded as a plugin with the variable set: the row stays for the whole run.
_PLUGIN_ROW = contextlib.ExitStack()
if os.environ.get("ZERDA_TEST_EXTRA_ROW") == NAME:
    _PLUGIN_ROW.enter_context(registry.extra_row(ROW))


def test_the_row_is_a_row_inside_the_block_only() -> None:
    assert NAME not in registry.NAMES
    with registry.extra_row(ROW):
        assert registry.get(NAME) is ROW
        assert registry.NAMES[-1] == NAME
        assert NAME in registry.compatible()
    assert NAME not in registry.NAMES
    assert NAME not in registry.compatible()


def test_every_generated_table_lists_the_row() -> None:
    without = {key: table() for key, table in registry.DOCS_TABLES.items()}
    with registry.extra_row(ROW):
        for key, table in registry.DOCS_TABLES.items():
            text = table()
            assert f"`{NAME}`" in text, key
            assert text != without[key], key


def test_regenerating_the_pages_adds_the_row_where_every_row_is_listed() -> None:
    # Each page's generated tables, regenerated with the row, gain it; the rest of the page
    # is left as it was.
    pages = [p for p in docs.pages(ROOT) if p.exists() and docs.GENERATED.search(p.read_text())]
    assert {m[2] for p in pages for m in docs.GENERATED.finditer(p.read_text())} == set(
        registry.DOCS_TABLES
    )
    with registry.extra_row(ROW):
        for page in pages:
            text = page.read_text()
            new = docs.regenerate(text)
            assert f"`{NAME}`" in new and f"`{NAME}`" not in text, page.name
            assert docs.GENERATED.sub("", new) == docs.GENERATED.sub("", text), page.name


def test_the_contract_suite_runs_on_the_row() -> None:
    env = {**os.environ, "ZERDA_TEST_EXTRA_ROW": NAME, "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "tests.llm.test_one_row",
            "tests/llm/providers/test_contract.py",
            "-k",
            NAME,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    # Every contract test ran for the row: as many as for the openai row it is built like.
    assert " passed" in summary and "deselected" in summary, summary
    passed = int(summary.split(" passed")[0].split()[-1])
    assert passed >= 50, summary
