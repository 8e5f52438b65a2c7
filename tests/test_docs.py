"""Every Python example in README.md and docs/ runs, against MockLLMServer.

The blocks of one page run in order in one namespace, as a reader would paste them. Every
interface an example creates without a ``base_url`` is pointed at a MockLLMServer that
answers each provider with a short text, so examples that show real providers run offline.
A block preceded by ``<!-- not-run: reason -->`` is skipped.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from zerda.llm.base import BaseLLMInterface
from zerda.testing import MockLLMServer

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(r"(<!-- not-run:[^>]*-->\s*)?```python\n(.*?)```", re.S)


def python_blocks(page: Path) -> list[str]:
    return [m.group(2) for m in BLOCK.finditer(page.read_text()) if not m.group(1)]


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> Any:
    with MockLLMServer() as server:
        server.set_default(text="Done.")
        original = BaseLLMInterface.__init__

        def init(self: BaseLLMInterface, *args: Any, **kwargs: Any) -> None:
            if kwargs.get("base_url") is None and kwargs.get("client") is None:
                kwargs.update(server.client_options(self.provider))
            original(self, *args, **kwargs)

        monkeypatch.setattr(BaseLLMInterface, "__init__", init)
        yield server


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_examples_run(page: Path, offline: MockLLMServer) -> None:
    blocks = python_blocks(page)
    if not blocks:
        pytest.skip("no Python examples")
    namespace: dict[str, Any] = {"__name__": f"docs_{page.stem}"}
    for i, block in enumerate(blocks):
        code = compile(block, f"{page.name}[python block {i}]", "exec")
        exec(code, namespace)  # noqa: S102 - running our own documentation is the point


def test_every_doc_page_is_linked_from_another_page() -> None:
    # A feature a user cannot find does not exist.
    for page in PAGES[1:]:
        others = " ".join(p.read_text() for p in PAGES if p != page)
        assert page.name in others, f"{page.relative_to(ROOT)} is linked from no other page"
