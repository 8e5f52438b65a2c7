"""Every Python example in README.md and docs/ runs, against MockLLMServer.

The blocks of one page run in order in one namespace, as a reader would paste them. Every
interface an example creates is pointed at a MockLLMServer that answers each provider with a
short text (unless the example already points it at 127.0.0.1), so examples that show real
providers run offline and never reach the network. Snippets on the provider pages may use
``get_weather`` (the function from tool-calling.md) and ``server`` (a running MockLLMServer)
without defining them. ``test_*`` functions an example defines are run too, with the
``mock_llm_server`` fixture and their ``parametrize`` cases. A block preceded by
``<!-- not-run: reason -->`` is skipped; one preceded by ``<!-- file: NAME -->`` is not run
but written to NAME in the directory the page's examples run in (an MCP server script that
another example starts).
"""

from __future__ import annotations

import inspect
import re
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
        server.set_default(text="Done.")
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
    namespace: dict[str, Any] = {
        "__name__": f"docs_{page.stem}",
        "get_weather": get_weather,
        "server": offline,
    }
    for i, block in enumerate(blocks):
        code = compile(block, f"{page.name}[python block {i}]", "exec")
        exec(code, namespace)  # noqa: S102 - running our own documentation is the point
    for name, fn in list(namespace.items()):
        if name.startswith("test_") and callable(fn):
            run_example_test(fn, offline)


def get_weather(city: str, unit: str = "celsius") -> dict[str, Any]:
    """Current weather for a city."""
    return {"city": city, "temp": 18, "unit": unit}


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
    server.set_default(text="Done.")


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
