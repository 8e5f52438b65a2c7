"""Gemini with its fast path off (DESIGN §22): google-genai's documented
``models.generate_content`` / ``generate_content_stream`` (``client.aio.models`` for the
async methods), never Zerda's own post through ``_api_client``, on the Gemini API and on
Vertex AI; a google-genai lacking a name of the table is served the same way. The
registry-wide parity test (test_fast_path_off.py) compares bodies and results."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from zerda.llm import create_interface
from zerda.llm._fastpath import PrivateName
from zerda.testing import MockLLMServer

pytest.importorskip("google.genai")
from zerda.llm.wires.gemini import batch as gemini_batch  # noqa: E402
from zerda.llm.wires.gemini import fastpath as gemini_fastpath  # noqa: E402
from zerda.llm.wires.gemini import sdk as gemini_sdk  # noqa: E402
from zerda.llm.wires.gemini.interface import GeminiInterface  # noqa: E402

MODEL = "gemini-2.5-flash"
CALL = {"id": "c1", "name": "get_weather", "arguments": {"city": "Paris"}}
TOOLS = [{"name": "get_weather", "description": "Weather", "parameters": {"type": "object"}}]
KWARGS: dict[str, Any] = {
    "tools": TOOLS,
    "tool_choice": {"name": "get_weather"},
    "temperature": 1,
    "system": "Be brief.",
    "top_k": 3,
    "safety_settings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}],
}
HISTORY = [
    {"role": "user", "content": "Weather?"},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "c1", "name": "get_weather", "content": {"t": 18}},
]


def _refuse(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the fast path ran")


def _no_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("send", "send_async", "send_streamed", "send_streamed_async", "convert_config"):
        monkeypatch.setattr(gemini_sdk, name, _refuse)
    monkeypatch.setattr(gemini_sdk, "rest_tools", _refuse)


def _spy_models(llm: Any, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    for where, models in (("sync", llm.client.models), ("async", llm.async_client.models)):
        for name in ("generate_content", "generate_content_stream"):
            real = getattr(models, name)

            def spy(
                *args: Any, _real: Any = real, _name: str = f"{where} {name}", **kw: Any
            ) -> Any:
                calls.append(_name)
                return _real(*args, **kw)

            monkeypatch.setattr(models, name, spy)
    return calls


def _make(server: MockLLMServer, row: str, **options: Any) -> Any:
    return create_interface(
        row, model=MODEL, max_retries=0, **server.client_options(row), **options
    )


def _results(server: MockLLMServer, row: str, llm: Any) -> list[Any]:
    server.reset()
    server.set_default(row, text="Hello there", tool_calls=[CALL], fragments=3)

    async def both() -> list[Any]:
        generated = await llm.generate_async(HISTORY, **KWARGS)
        return [generated, [e async for e in llm.stream_async(HISTORY, **KWARGS)]]

    out = [llm.generate(HISTORY, **KWARGS), list(llm.stream(HISTORY, **KWARGS))]
    return out + asyncio.run(both())


@pytest.mark.parametrize("row", ["gemini", "vertex"])
def test_fast_path_false_calls_generate_content(
    server: MockLLMServer, row: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = _results(server, row, _make(server, row))
    bodies = [(r.path, r.body) for r in server.requests]
    _no_fast_path(monkeypatch)
    llm = _make(server, row, fast_path=False)
    calls = _spy_models(llm, monkeypatch)
    assert _results(server, row, llm) == expected
    assert [(r.path, r.body) for r in server.requests] == bodies
    assert calls == [
        "sync generate_content",
        "sync generate_content_stream",
        "async generate_content",
        "async generate_content_stream",
    ]
    assert not any(r.get("error") for r in expected if isinstance(r, dict))


def test_a_config_field_the_sdk_refuses_is_the_same_error(server: MockLLMServer) -> None:
    server.reset()
    fast = _make(server, "gemini").generate("hi", top_k="many")["error"]
    documented = _make(server, "gemini", fast_path=False).generate("hi", top_k="many")["error"]
    assert documented == fast
    assert fast["type"] == "invalid_request" and "top_k" in fast["message"]
    assert server.requests_for("gemini") == []


def test_a_per_call_timeout_reaches_the_documented_call(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm = _make(server, "gemini", fast_path=False)
    seen: list[Any] = []
    build = llm.client._api_client._build_request

    def spy(method: str, path: str, body: Any, http_options: Any = None) -> Any:
        built = build(method, path, body, http_options)
        seen.append(built.timeout)
        return built

    monkeypatch.setattr(llm.client._api_client, "_build_request", spy)
    server.reset()
    server.enqueue("gemini", text="ok")
    llm.generate("hi", timeout=2.5, raise_errors=True)
    assert seen == [2.5]


def test_batch_takes_the_documented_requests_as_they_are() -> None:
    llm = create_interface("gemini", model=MODEL, api_key="k", fast_path=False)
    native = llm._native_request([{"role": "user", "content": "hi"}], {})
    fast = create_interface("gemini", model=MODEL, api_key="k")
    fast_native = fast._native_request([{"role": "user", "content": "hi"}], {})
    [(_, documented)] = gemini_batch.sdk_items([("a", native)])
    [(_, converted)] = gemini_batch.sdk_items([("a", fast_native)])
    assert documented is native
    assert documented["contents"] == converted["contents"]
    assert documented["config"].model_dump(exclude_none=True) == converted["config"].model_dump(
        exclude_none=True
    )


def test_a_genai_lacking_a_listed_name_gets_generate_content(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    gone = PrivateName("google.genai.models", "_GenerateContentResponse_from_nowhere", "renamed")
    table = (*gemini_fastpath.GENERATE_NAMES, gone)
    monkeypatch.setattr(GeminiInterface, "fast_path_names", table)
    _no_fast_path(monkeypatch)
    server.reset()
    server.enqueue("gemini", text="one")
    server.enqueue("gemini", text="two", fragments=2)
    with caplog.at_level(logging.DEBUG, logger="zerda"):
        llm = _make(server, "gemini")
        assert llm.generate("hi", raise_errors=True)["content"] == "one"
        assert list(llm.stream("hi"))[-1]["result"]["content"] == "two"
    assert llm.fast_path is True and llm._fast is False
    logs = [r for r in caplog.records if "_from_nowhere" in r.getMessage()]
    assert [r.levelno for r in logs] == [logging.DEBUG]


def test_a_file_batch_without_the_sdk_converter_is_refused_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The batch-file converter has no documented twin: without it, a file batch is refused
    before anything is sent, naming the missing name (never a crash mid-way)."""
    from zerda.llm._fastpath import PrivateName
    from zerda.llm.errors import InvalidRequestError
    from zerda.llm.wires.gemini import batch, fastpath

    gone = PrivateName("google.genai.batches", "_No_Such_Converter", "a test's missing name")
    monkeypatch.setattr(fastpath, "BATCH_FILE_NAMES", (*fastpath.BATCH_FILE_NAMES, gone))
    with pytest.raises(InvalidRequestError, match=r"google\.genai\.batches\._No_Such_Converter"):
        batch._rest_request(None, {"contents": [], "config": None})


def test_the_batch_file_names_are_in_the_wire_table() -> None:
    from zerda.llm.wires.gemini import fastpath

    assert set(fastpath.BATCH_FILE_NAMES) <= set(fastpath.PRIVATE_NAMES)
    assert not set(fastpath.BATCH_FILE_NAMES) & set(fastpath.GENERATE_NAMES)
