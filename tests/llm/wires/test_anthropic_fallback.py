"""Anthropic with its fast path off (DESIGN §22): ``client.messages.create()`` (with
``stream=True`` for streams), never ``client.post``, on the first-party client and on the
SDK's Bedrock and Vertex AI clients; an SDK lacking a name of the table is served the same
way. The registry-wide parity test (test_fast_path_off.py) compares bodies and results."""

from __future__ import annotations

import asyncio
import logging
import warnings
from typing import Any

import pytest

from zerda.llm import create_interface
from zerda.llm._fastpath import PrivateName
from zerda.testing import MockLLMServer

pytest.importorskip("anthropic")
from zerda.llm.wires.anthropic import fastpath as anthropic_fastpath  # noqa: E402
from zerda.llm.wires.anthropic.interface import AnthropicInterface  # noqa: E402

MODELS = {
    "anthropic": "claude-haiku-4-5",
    "anthropic-bedrock": "anthropic.claude-haiku-4-5-20251001-v1:0",
    "anthropic-vertex": "claude-haiku-4-5@20251001",
}
CALL = {"id": "toolu_1", "name": "get_weather", "arguments": {"city": "Paris"}}
TOOLS = [{"name": "get_weather", "description": "Weather", "parameters": {"type": "object"}}]


def _make(server: MockLLMServer, row: str, **options: Any) -> Any:
    return create_interface(row, model=MODELS[row], **server.client_options(row), **options)


def _spy_create(llm: Any, monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Counts messages.create() calls (their stream flag) and refuses client.post."""
    calls: list[bool] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("client.post was called: the fast path ran")

    for client in (llm.client, llm.async_client):
        real = client.messages.create

        def spy(*args: Any, _real: Any = real, **kwargs: Any) -> Any:
            calls.append(bool(kwargs.get("stream")))
            return _real(*args, **kwargs)

        monkeypatch.setattr(client.messages, "create", spy)
        monkeypatch.setattr(client, "post", refuse)
    return calls


def _results(server: MockLLMServer, row: str, llm: Any) -> list[Any]:
    server.reset()
    server.set_default(row, text="Hello there", tool_calls=[CALL], fragments=3)

    async def both() -> list[Any]:
        generated = await llm.generate_async("hi", tools=TOOLS, temperature=0.5)
        return [generated, [e async for e in llm.stream_async("hi", tools=TOOLS)]]

    out = [llm.generate("hi", tools=TOOLS, temperature=0.5), list(llm.stream("hi", tools=TOOLS))]
    return out + asyncio.run(both())


@pytest.mark.parametrize("row", list(MODELS))
def test_fast_path_false_calls_messages_create(
    server: MockLLMServer, row: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = _results(server, row, _make(server, row))
    bodies = [(r.path, r.body) for r in server.requests]
    llm = _make(server, row, fast_path=False)
    calls = _spy_create(llm, monkeypatch)
    assert _results(server, row, llm) == expected
    assert [(r.path, r.body) for r in server.requests] == bodies
    assert calls == [False, True, False, True]


def test_an_argument_create_does_not_take_is_refused_the_same_way(server: MockLLMServer) -> None:
    server.reset()
    fast = _make(server, "anthropic").generate("hi", top_kk=5)["error"]
    documented = _make(server, "anthropic", fast_path=False).generate("hi", top_kk=5)["error"]
    assert documented == fast
    assert fast["type"] == "invalid_request" and "top_kk" in fast["message"]
    assert server.requests_for("anthropic") == []


def test_create_gives_its_own_warning_for_a_deprecated_model(server: MockLLMServer) -> None:
    import anthropic

    model = next(iter(anthropic._data.DEPRECATED_MODELS))
    server.reset()
    server.set_default("anthropic", text="ok")
    llm = create_interface(
        "anthropic", model=model, fast_path=False, **server.client_options("anthropic")
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        llm.generate("hi", raise_errors=True)
    assert any(issubclass(w.category, DeprecationWarning) for w in caught)


def test_an_sdk_lacking_a_listed_name_gets_messages_create(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    gone = PrivateName("anthropic", "_constants.NO_SUCH_CONSTANT", "renamed")
    table = (*anthropic_fastpath.PRIVATE_NAMES, gone)
    monkeypatch.setattr(AnthropicInterface, "fast_path_names", table)
    server.reset()
    server.enqueue("anthropic", text="one")
    with caplog.at_level(logging.DEBUG, logger="zerda"):
        llm = _make(server, "anthropic")
        calls = _spy_create(llm, monkeypatch)
        assert llm.generate("hi", raise_errors=True)["content"] == "one"
    assert llm.fast_path is True and llm._fast is False and calls == [False]
    logs = [r for r in caplog.records if "NO_SUCH_CONSTANT" in r.getMessage()]
    assert [r.levelno for r in logs] == [logging.DEBUG]
