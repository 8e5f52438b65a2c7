"""Issue 11 item 5: each small decision is written once, in ``zerda.llm.base`` or
``zerda.llm.errors``, and every provider module calls it: the retry decision
(``errors.retry_delay``, run by ``BaseLLMInterface._retrying``), the broken-body decision
(``errors.malformed_response``), tool output as text (``base.tool_output_text``) and the
truncated-stream rule (``errors.stream_ended_early``, applied by the base class once a
provider's ``_feed`` has not marked its final event).

The behaviour is tested per provider elsewhere (test_retry_policy, test_provider_output);
these tests keep the decisions from being written again in a provider module.
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

SRC = Path(base.__file__).resolve().parent / "providers"
MODULES = sorted(p for p in SRC.glob("*.py") if p.name != "__init__.py")
# Modules whose provider sends tool outputs as text (Gemini sends objects: {"result": ...}).
TEXT_TOOL_OUTPUT = {"_openai_compat.py", "anthropic.py", "aws.py", "ollama.py"}


def names_used(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    used |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    return used


def functions_defined(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {
        n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    }


def test_every_provider_module_is_checked() -> None:
    assert {p.name for p in MODULES} >= {
        "_openai_compat.py",
        "openai.py",
        "groq.py",
        "mistral.py",
        "ollama.py",
        "anthropic.py",
        "aws.py",
        "gemini.py",
    }


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_no_provider_module_decides_retries_itself(path: Path) -> None:
    defined = functions_defined(path)
    assert "_retry_delay" not in defined and "_is_retryable" not in defined
    assert "backoff_delay" not in names_used(path)
    assert "max_retries=self.max_retries" not in path.read_text()


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_no_provider_module_writes_tool_output_as_text_itself(path: Path) -> None:
    text = path.read_text()
    assert "default=str" not in text
    assert not {"_json_text", "_tool_output_text"} & functions_defined(path)
    if path.name in TEXT_TOOL_OUTPUT:
        assert "tool_output_text" in names_used(path)


@pytest.mark.parametrize(
    "name", ["_openai_compat.py", "mistral.py", "ollama.py", "anthropic.py", "aws.py", "gemini.py"]
)
def test_every_provider_reports_broken_bodies_through_the_one_helper(name: str) -> None:
    assert "malformed_response" in names_used(SRC / name)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_provider_names_its_final_stream_event(provider: str) -> None:
    cls = interface_class(provider)
    assert cls.stream_final_event != base.BaseLLMInterface.stream_final_event
    module = inspect.getsourcefile(next(c for c in cls.__mro__ if "_feed" in vars(c)))
    assert module is not None and "acc.finished = True" in Path(module).read_text()


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
