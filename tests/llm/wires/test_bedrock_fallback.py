"""Bedrock with its fast path off (DESIGN §22): boto3's documented ``converse`` /
``converse_stream`` with botocore's own validation, serializer and parser, and the
documented iteration of its ``EventStream``; and a botocore lacking a name of the table
is served the same way. The registry-wide parity test (test_fast_path_off.py) compares
bodies and results; this file checks what it cannot see: which path ran."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from zerda.llm import create_interface
from zerda.llm._fastpath import PrivateName
from zerda.testing import MockLLMServer

pytest.importorskip("boto3")
from zerda.llm.wires.bedrock import fastpath as bedrock_fastpath  # noqa: E402
from zerda.llm.wires.bedrock import stream as bedrock_stream  # noqa: E402
from zerda.llm.wires.bedrock.interface import AWSInterface  # noqa: E402

MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
CALL = {"id": "tooluse_1", "name": "get_weather", "arguments": {"city": "Paris"}}
TOOLS = [{"name": "get_weather", "description": "Weather", "parameters": {"type": "object"}}]


def _refuse(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the fast path ran")


def _no_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("_split_prebuilt", "_check_native", "_register_prebuilt", "_register_reader"):
        monkeypatch.setattr(bedrock_fastpath, name, _refuse)
    monkeypatch.setattr(bedrock_stream, "_read_events", _refuse)


def _results(server: MockLLMServer, llm: Any) -> list[Any]:
    server.reset()
    server.set_default("bedrock", text="Hello there", tool_calls=[CALL], fragments=3)

    async def both() -> list[Any]:
        generated = await llm.generate_async("hi", tools=TOOLS)
        return [generated, [e async for e in llm.stream_async("hi", tools=TOOLS)]]

    out = [llm.generate("hi", tools=TOOLS), list(llm.stream("hi", tools=TOOLS))]
    return out + asyncio.run(both())


def test_fast_path_false_is_boto3s_documented_calls(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = create_interface("bedrock", model=MODEL, **server.client_options("bedrock"))
    expected = _results(server, fast)
    bodies = [r.body for r in server.requests]
    _no_fast_path(monkeypatch)
    llm = create_interface(
        "bedrock", model=MODEL, fast_path=False, **server.client_options("bedrock")
    )
    assert _results(server, llm) == expected
    assert [r.body for r in server.requests] == bodies
    assert llm._checks_native is False  # botocore validates: parameter_validation is on
    assert not any(r.get("error") for r in expected if isinstance(r, dict))


def test_the_documented_stream_is_botocores_event_stream_iterated(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    iterated: list[int] = []
    from botocore.eventstream import EventStream

    real = EventStream.__iter__

    def spy(self: Any) -> Any:
        iterated.append(1)
        return real(self)

    monkeypatch.setattr(EventStream, "__iter__", spy)
    monkeypatch.setattr(bedrock_stream, "_read_events", _refuse)
    server.reset()
    server.enqueue("bedrock", text="streamed", fragments=2)
    llm = create_interface(
        "bedrock", model=MODEL, fast_path=False, **server.client_options("bedrock")
    )
    assert list(llm.stream("hi"))[-1]["result"]["content"] == "streamed"
    assert iterated == [1]


def test_a_mistyped_field_is_refused_by_botocore_with_the_fast_path_off(
    server: MockLLMServer,
) -> None:
    server.reset()
    llm = create_interface(
        "bedrock", model=MODEL, fast_path=False, **server.client_options("bedrock")
    )
    result = llm.generate("hi", inferenceConfig={"maxTokens": "many"})
    assert result["error"]["type"] == "invalid_request"
    assert "inferenceConfig.maxTokens" in result["error"]["message"]
    assert server.requests_for("bedrock") == []


def test_a_botocore_lacking_a_listed_name_gets_the_documented_calls(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    gone = PrivateName("botocore.eventstream", "EventStream._no_such_member", "renamed")
    monkeypatch.setattr(AWSInterface, "fast_path_names", (*bedrock_fastpath.PRIVATE_NAMES, gone))
    _no_fast_path(monkeypatch)
    server.reset()
    server.enqueue("bedrock", text="one")
    server.enqueue("bedrock", text="two", fragments=2)
    with caplog.at_level(logging.DEBUG, logger="zerda"):
        llm = create_interface("bedrock", model=MODEL, **server.client_options("bedrock"))
        again = create_interface("bedrock", model=MODEL, **server.client_options("bedrock"))
        # Decided on first use (not in the constructor), once per table and process.
        assert llm.fast_path is True and llm._fast is False and again._fast is False
    assert llm.generate("hi", raise_errors=True)["content"] == "one"
    assert list(llm.stream("hi"))[-1]["result"]["content"] == "two"
    logs = [r for r in caplog.records if "_no_such_member" in r.getMessage()]
    assert [r.levelno for r in logs] == [logging.DEBUG]  # found once, said once


def test_zerda_fast_path_0_turns_it_off(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ZERDA_FAST_PATH", "0")
    _no_fast_path(monkeypatch)
    server.reset()
    server.enqueue("bedrock", text="off")
    llm = create_interface("bedrock", model=MODEL, **server.client_options("bedrock"))
    assert llm.generate("hi", raise_errors=True)["content"] == "off"


def test_a_pickle_decides_again_where_it_is_loaded(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pickle

    llm = create_interface("bedrock", model=MODEL, **server.client_options("bedrock"))
    assert llm._fast is True  # decided on first use, here
    data = pickle.dumps(llm)
    gone = PrivateName("botocore.eventstream", "EventStream._no_such_member", "renamed")
    monkeypatch.setattr(AWSInterface, "fast_path_names", (*bedrock_fastpath.PRIVATE_NAMES, gone))
    assert llm._fast is True  # kept: a live interface does not decide again
    assert pickle.loads(data)._fast is False
