"""The provider hooks are abstract: a provider class missing one cannot be instantiated,
and the error names what is missing. And the request module stands alone: base.py and
loop.py do not import each other."""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from zerda.llm import BaseLLMInterface
from zerda.llm.base import Request
from zerda.llm.registry import ProviderSpec, Traits

SPEC = ProviderSpec(
    name="minimal",
    cls="tests.llm.test_hooks:Complete",
    extra="minimal",
    sdk_module="",
    sdk_package="",
    env_keys=(),
    default_base_url=None,
    wire="openai",
    demo_model="m",
    title="Minimal",
    traits=Traits(),
)


class WithoutMapResponse(BaseLLMInterface):
    """Every hook but _map_response."""

    spec = SPEC

    def _make_client(self) -> object:
        return object()

    def _make_async_client(self) -> object:
        return object()

    def _build_request(self, req: Request) -> dict[str, Any]:
        return {"text": req.messages[-1]["content"]}

    def _call(self, kwargs: dict[str, Any]) -> Any:
        return kwargs

    async def _call_async(self, kwargs: dict[str, Any]) -> Any:
        return kwargs

    def _map_stop_reason(self, native: Any) -> str:
        return "end_turn"

    @contextlib.contextmanager
    def _open_stream(self, kwargs: dict[str, Any]) -> Iterator[Iterator[Any]]:
        yield iter([kwargs["text"]])

    def _open_stream_async(self, kwargs: dict[str, Any]) -> Any:
        raise NotImplementedError

    def _feed(self, acc: Any, chunk: Any) -> list[dict[str, Any]]:
        return acc.text(chunk)  # type: ignore[no-any-return]


class Complete(WithoutMapResponse):
    def _map_response(self, raw: Any) -> dict[str, Any]:
        return self._make_result(raw["text"], [], "stop", None)


HOOKS = {
    "_build_request",
    "_call",
    "_call_async",
    "_feed",
    "_make_async_client",
    "_make_client",
    "_map_response",
    "_map_stop_reason",
    "_open_stream",
    "_open_stream_async",
}


def test_the_provider_hooks_are_abstract() -> None:
    assert BaseLLMInterface.__abstractmethods__ == HOOKS


def test_a_provider_missing_a_hook_cannot_be_instantiated() -> None:
    with pytest.raises(TypeError) as caught:
        WithoutMapResponse("m")
    assert str(caught.value) == (
        "WithoutMapResponse cannot be instantiated: it does not implement the provider "
        "hook(s) _map_response (abstract in BaseLLMInterface; see docs/adding-a-provider.md)"
    )


def test_the_base_itself_names_every_hook() -> None:
    with pytest.raises(TypeError, match=", ".join(sorted(HOOKS))):
        BaseLLMInterface("m")  # type: ignore[abstract]


def test_a_provider_with_every_hook_works() -> None:
    llm = Complete("m")
    assert llm.generate("hi")["content"] == "hi"
    assert [e["type"] for e in llm.stream("hi")] == ["text", "done"]


# --- imports ---------------------------------------------------------------------------------

LLM = Path(__file__).resolve().parents[2] / "src" / "zerda" / "llm"


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, at any level (function bodies and TYPE_CHECKING too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def test_the_loop_does_not_import_the_base() -> None:
    for module in ["loop.py", *(p.name for p in LLM.glob("_loop_*.py"))]:
        assert "zerda.llm.base" not in imported_modules(LLM / module), module


def test_the_request_module_imports_neither_the_base_nor_the_loop() -> None:
    imports = imported_modules(LLM / "_request.py")
    assert not imports & {"zerda.llm.base", "zerda.llm.loop"}
    assert "zerda.llm._request" in imported_modules(LLM / "base.py")
    # The loop's state (the loop's own module since issue 32) normalises the run's tools.
    assert "zerda.llm._request.normalize_tools" in imported_modules(LLM / "_loop_state.py")
