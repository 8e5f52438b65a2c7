"""Issue 11 item 5: each small decision is written once, in the core (``zerda.llm.errors``,
``zerda.llm.messages``) or the shared interface, and every wire folder calls it: the retry decision
(``errors.retry_delay``, run by ``BaseLLMInterface._retrying``), the broken-body decision
(``errors.malformed_response``), tool output as text (``messages.tool_output_text``) and the
truncated-stream rule (``errors.stream_ended_early``, applied by the base class once a
provider's ``_feed`` has not marked its final event).

The behaviour is tested per provider elsewhere (test_retry_policy, test_provider_output);
these tests keep the decisions from being written again in a wire.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path
from typing import Any

import pytest

from tests.reliability._support import PROVIDERS, Interfaces
from zerda.llm import base, errors
from zerda.llm.providers import interface_class
from zerda.testing import MockLLMServer

WIRES_DIR = Path(base.__file__).resolve().parent / "wires"
# One entry per wire folder: a decision may live in any module of the folder.
WIRES = sorted(p for p in WIRES_DIR.iterdir() if p.is_dir() and (p / "__init__.py").exists())
# Wires whose provider sends tool outputs as text (Gemini sends objects: {"result": ...}).
TEXT_TOOL_OUTPUT = {"openai", "openai_responses", "anthropic", "bedrock", "ollama"}


def _trees(wire: Path) -> list[ast.AST]:
    return [ast.parse(f.read_text()) for f in sorted(wire.glob("*.py"))]


def _source(wire: Path) -> str:
    return "\n".join(f.read_text() for f in sorted(wire.glob("*.py")))


def names_used(wire: Path) -> set[str]:
    used: set[str] = set()
    for tree in _trees(wire):
        used |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        used |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    return used


def functions_defined(wire: Path) -> set[str]:
    return {
        n.name
        for tree in _trees(wire)
        for n in ast.walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    }


def test_every_wire_folder_is_checked() -> None:
    assert {p.name for p in WIRES} >= {
        "openai",
        "openai_responses",
        "azure",
        "groq",
        "mistral",
        "ollama",
        "anthropic",
        "bedrock",
        "gemini",
    }


@pytest.mark.parametrize("wire", WIRES, ids=lambda p: p.name)
def test_no_wire_decides_retries_itself(wire: Path) -> None:
    defined = functions_defined(wire)
    assert "_retry_delay" not in defined and "_is_retryable" not in defined
    assert "backoff_delay" not in names_used(wire)
    assert "max_retries=self.max_retries" not in _source(wire)


@pytest.mark.parametrize("wire", WIRES, ids=lambda p: p.name)
def test_no_wire_writes_tool_output_as_text_itself(wire: Path) -> None:
    assert "default=str" not in _source(wire)
    assert not {"_json_text", "_tool_output_text"} & functions_defined(wire)
    if wire.name in TEXT_TOOL_OUTPUT:
        assert "tool_output_text" in names_used(wire)


@pytest.mark.parametrize("name", ["openai", "mistral", "ollama", "anthropic", "bedrock", "gemini"])
def test_every_wire_reports_broken_bodies_through_the_one_helper(name: str) -> None:
    assert "malformed_response" in names_used(WIRES_DIR / name)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_provider_names_its_final_stream_event(provider: str) -> None:
    cls = interface_class(provider)
    assert cls.stream_final_event != base.BaseLLMInterface.stream_final_event
    module = inspect.getsourcefile(next(c for c in cls.__mro__ if "_feed" in vars(c)))
    assert module is not None
    # In the wire's folder: its interface's _feed, or the stream module it hands chunks to.
    wire = sorted(Path(module).parent.glob("*.py"))
    assert [p.name for p in wire if "acc.finished = True" in p.read_text()] != []


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_truncation_rule_is_the_shared_one(
    server: MockLLMServer, llms: Interfaces, provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.reliability.test_provider_output import enqueue_without_final_event
    from zerda.testing import Script

    calls: list[tuple[Any, ...]] = []

    def recording(*args: Any) -> errors.ServerError:
        calls.append(args)
        return errors.stream_ended_early(*args)

    monkeypatch.setattr(base, "stream_ended_early", recording)
    enqueue_without_final_event(server, provider, Script(text="cut short", fragments=2))

    events = list(llms.get(provider, max_retries=0).stream("hi"))

    assert calls == [(provider, interface_class(provider).stream_final_event)]
    assert events[-1]["result"]["error"]["type"] == "server"


def test_the_decisions_live_in_base_and_errors() -> None:
    for module, names in [
        (errors, ["retry_delay", "malformed_response", "stream_ended_early", "MAX_RETRY_AFTER"]),
        (base, ["tool_output_text", "MAX_SCHEMA_DEPTH"]),
    ]:
        for name in names:
            assert hasattr(module, name), name
    assert importlib.import_module("zerda.llm._retry").__doc__.count("decided once") == 1
