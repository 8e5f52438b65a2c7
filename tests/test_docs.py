"""Every Python example in README.md and docs/ runs, against MockLLMServer.

The blocks of one page run in order in one fresh namespace, as a reader would paste them:
a block may use what an earlier block of its page defined (a page is read top to bottom,
and repeating its setup in every block would bury each block's point), and nothing else:
no name comes from another page or from this test. ``test_blocks_define_what_they_use``
checks that statically too, so a name used only on a path the run does not take (a branch,
a function never called) is caught.

Every interface an example creates is pointed at a MockLLMServer that answers like a model
(``answer_like_a_model``: a call to an offered tool, schema-valid JSON for
``response_format``, text after a tool's result, in JSON and streams), unless the example
already points it at 127.0.0.1, so examples that show real providers run offline, never
reach the network, and meet the tool calls a real model would make. ``test_*`` functions
an example defines are run too, with the ``mock_llm_server`` fixture and their
``parametrize`` cases. A block preceded by ``<!-- not-run: reason -->`` is skipped (only
what cannot run offline, said in the reason); one preceded by ``<!-- file: NAME -->`` is not
run but written to NAME in the directory the page's examples run in (an MCP server script
that another example starts).
"""

from __future__ import annotations

import builtins
import inspect
import re
import symtable
from pathlib import Path
from typing import Any

import pytest

from zerda.llm import registry
from zerda.llm.base import BaseLLMInterface
from zerda.testing import MockLLMServer

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(r"(<!-- (?:not-run:|file:)[^>]*-->\s*)?```python\n(.*?)```", re.S)
FILE = re.compile(r"<!-- file: (\S+) -->\s*```python\n(.*?)```", re.S)


def python_blocks(page: Path) -> list[str]:
    return [m.group(2) for m in BLOCK.finditer(page.read_text()) if not m.group(1)]


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> Any:
    # Bedrock examples rely on the AWS credential chain and region from the environment.
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    with MockLLMServer() as server:
        server.answer_like_a_model()
        original = BaseLLMInterface.__init__

        def init(self: BaseLLMInterface, *args: Any, **kwargs: Any) -> None:
            if kwargs.get("client") is None and "127.0.0.1" not in (kwargs.get("base_url") or ""):
                # An AWS profile named in an example does not exist here.
                kwargs = {k: v for k, v in kwargs.items() if k != "profile"}
                # base_url and api_key only: Bedrock's region and credentials are its own
                # constructor's (set in the environment above), not BaseLLMInterface options.
                options = server.client_options(kwargs.get("provider") or self.provider)
                kwargs.update({k: v for k, v in options.items() if k in ("base_url", "api_key")})
            original(self, *args, **kwargs)

        monkeypatch.setattr(BaseLLMInterface, "__init__", init)
        yield server


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_examples_run(
    page: Path, offline: MockLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocks = python_blocks(page)
    if not blocks:
        pytest.skip("no Python examples")
    files = FILE.findall(page.read_text())
    if files:
        monkeypatch.chdir(tmp_path)
        for name, text in files:
            (tmp_path / name).write_text(text)
    namespace = run_blocks(page, blocks)
    for name, fn in list(namespace.items()):
        if name.startswith("test_") and callable(fn):
            run_example_test(fn, offline)


def run_blocks(page: Path, blocks: list[str]) -> dict[str, Any]:
    """Runs ``blocks`` in order in a fresh namespace, which it returns; a MockLLMServer an
    example started and left running is stopped."""
    namespace: dict[str, Any] = {"__name__": f"docs_{page.stem}"}
    try:
        for i, block in enumerate(blocks):
            code = compile(block, f"{page.name}[python block {i}]", "exec")
            exec(code, namespace)  # noqa: S102 - running our own documentation is the point
    finally:
        for value in namespace.values():
            if isinstance(value, MockLLMServer):
                value.stop()
    return namespace


def test_the_streaming_example_survives_a_tool_call(offline: MockLLMServer) -> None:
    """Issue 36: streaming.md's first example once read ``event["result"]`` in an ``else:``
    branch that a ``tool_call_delta`` event reaches (a KeyError on the first tool call),
    and the doc tests missed it: their mock answered every request with text. Their mock
    now answers like a model, so the example meets the call and its result."""
    page = ROOT / "docs" / "streaming.md"
    sync = next(b for b in python_blocks(page) if "llm.stream(messages, tools=tools)" in b)
    namespace = run_blocks(page, [sync])
    assert [c["name"] for c in namespace["result"]["tool_calls"]] == ["get_weather"]
    assert namespace["messages"][-1]["role"] == "tool"
    stream = namespace["llm"].stream(namespace["messages"][:1], tools=namespace["tools"])
    kinds = {event["type"] for event in stream}
    assert {"tool_call_delta", "tool_call", "done"} <= kinds  # what the example must pass by


def names_used_and_defined(block: str, where: str) -> tuple[set[str], set[str]]:
    """The global names ``block`` reads (at its top level and inside its functions and
    classes) and the ones its top level defines (assigned, imported, def, class)."""
    top = symtable.symtable(block, where, "exec")
    defined = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()}
    defined |= {s.get_name() for s in top.get_symbols() if s.is_namespace()}
    used: set[str] = set()
    tables = [top]
    while tables:
        table = tables.pop()
        used |= {
            s.get_name()
            for s in table.get_symbols()
            if s.is_referenced() and (table is top or s.is_global())
        }
        tables.extend(table.get_children())
    return used, defined


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_blocks_define_what_they_use(page: Path) -> None:
    """Each block reads only names that it, an earlier block of its page or Python's
    builtins define: it runs as pasted (see the module docstring)."""
    defined_before = set(dir(builtins)) | {"__name__", "__file__"}
    undefined = {}
    for i, block in enumerate(python_blocks(page)):
        used, defined = names_used_and_defined(block, f"{page.name}[python block {i}]")
        missing = sorted(used - defined - defined_before)
        if missing:
            undefined[f"python block {i}"] = missing
        defined_before |= defined
    assert undefined == {}, f"{page.name}: names used but never defined on the page"


def test_the_name_check_finds_an_undefined_name() -> None:
    """The check is real: a name read only inside a function, or in a branch, is found."""
    used, defined = names_used_and_defined(
        "import os\ndef f():\n    return server.url\nif os.sep:\n    x = 1\nelse:\n"
        "    print(event['result'], x)\n",
        "example",
    )
    assert used - defined - set(dir(builtins)) == {"server", "event"}


def run_example_test(fn: Any, server: MockLLMServer) -> None:
    """Calls an example's test function once per parametrize case, like pytest would."""
    cases: list[dict[str, Any]] = [{}]
    for mark in getattr(fn, "pytestmark", []):
        if mark.name == "parametrize":
            names = [n.strip() for n in mark.args[0].split(",")]
            values = [v if len(names) > 1 else (v,) for v in mark.args[1]]
            cases = [{**c, **dict(zip(names, v, strict=True))} for c in cases for v in values]
    wants_server = "mock_llm_server" in inspect.signature(fn).parameters
    for case in cases:
        server.reset()
        fn(**case, **({"mock_llm_server": server} if wants_server else {}))
    server.reset()
    server.answer_like_a_model()


def test_every_doc_page_is_linked_from_another_page() -> None:
    # A feature a user cannot find does not exist.
    for page in PAGES[1:]:
        others = " ".join(p.read_text() for p in PAGES if p != page)
        assert page.name in others, f"{page.relative_to(ROOT)} is linked from no other page"


GENERATED = re.compile(r"<!-- registry:(\w+)[^>]*-->\n(.*?)\n<!-- /registry -->", re.S)


def test_docs_tables_are_the_registry() -> None:
    # The docs' provider tables are generated from the registry: a row added, or a trait
    # changed, without the docs following fails here (`python -m zerda.llm.registry`
    # rewrites them).
    found = {}
    for page in PAGES:
        for match in GENERATED.finditer(page.read_text()):
            found[match.group(1)] = match.group(2)
            expected = registry.DOCS_TABLES[match.group(1)]()
            assert match.group(2) == expected, (
                f"{page.name}: run `python -m zerda.llm.registry`, or paste:\n{expected}"
            )
    assert set(found) == set(registry.DOCS_TABLES)


LINK = re.compile(r"\]\(([^)#\s]+)(#[^)]*)?\)")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_docs_stand_on_their_own(page: Path) -> None:
    # A reader has the repository, not the project's working notes: no link or mention may
    # lead outside it.
    text = page.read_text()
    for outside in ("DESIGN.md", "DESIGN §", "shared/fixtures", "../shared"):
        assert outside not in text, f"{page.name} mentions {outside!r}"
    for target, _ in LINK.findall(text):
        if "://" in target or target.startswith("mailto:"):
            continue
        resolved = (page.parent / target).resolve()
        assert resolved.is_relative_to(ROOT), f"{page.name} links outside the repo: {target}"
        assert resolved.exists(), f"{page.name} links to a missing file: {target}"
