"""Gemini's fast-path stream reads each SSE chunk's JSON (issue 37, wires/gemini/stream.py):
no google-genai GenerateContentResponse is built for a chunk, and what a stream gives is what
the documented ``generate_content_stream`` gives (events, results, continued hops, errors),
on the gemini and vertex rows, sync and async; include_raw is each chunk as the API sent it."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest

from zerda.llm import create_interface
from zerda.testing import MockLLMServer

genai = pytest.importorskip("google.genai")
from google.genai import _api_client, types  # noqa: E402

from zerda.llm.wires.gemini import stream as gemini_stream  # noqa: E402

MODEL = "gemini-2.5-flash"
TOOLS = [
    {
        "name": "get_weather",
        "description": "Weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
]
# text in fragments, reasoning, two calls (one signed), usage with thoughts.
SCRIPT: dict[str, Any] = {
    "text": "Let me check the weather.",
    "reasoning": "The user wants weather.",
    "tool_calls": [
        {"name": "get_weather", "arguments": {"city": "Oslo"}, "id": "c1"},
        {"name": "get_weather", "arguments": {"city": "Bergen"}},
    ],
    "provider_data": {"gemini": {"thought_signatures": ["c2ln", None]}},
    "usage": {"input_tokens": 21, "output_tokens": 9, "reasoning_tokens": 3},
    "fragments": 3,
}
SSE = {"content-type": "text/event-stream"}


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as srv:
        yield srv


def _make(server: MockLLMServer, row: str = "gemini", **options: Any) -> Any:
    return create_interface(row, MODEL, max_retries=0, **server.client_options(row), **options)


def _sse(*chunks: Any) -> str:
    return "".join(f"data: {json.dumps(c)}\r\n\r\n" for c in chunks)


def _events(llm: Any, is_async: bool, **kwargs: Any) -> list[dict[str, Any]]:
    if not is_async:
        return list(llm.stream("hi", **kwargs))

    async def run() -> list[dict[str, Any]]:
        return [e async for e in llm.stream_async("hi", **kwargs)]

    return asyncio.run(run())


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every GenerateContentResponse google-genai builds (its ``_from_response``, pydantic's
    ``model_validate`` and ``__init__``) and every SdkHttpResponse, by name."""
    built: list[str] = []
    response = types.GenerateContentResponse
    for name in ("_from_response", "model_validate"):
        real = getattr(response, name).__func__

        def counted(cls: Any, *args: Any, _real: Any = real, _name: str = name, **kw: Any) -> Any:
            built.append(_name)
            return _real(cls, *args, **kw)

        monkeypatch.setattr(response, name, classmethod(counted))
    for cls in (response, _api_client.SdkHttpResponse):
        init = cls.__init__

        def counted_init(self: Any, *args: Any, _init: Any = init, **kw: Any) -> None:
            built.append(f"{type(self).__name__}()")
            _init(self, *args, **kw)

        monkeypatch.setattr(cls, "__init__", counted_init)
    return built


# --- no SDK response per chunk --------------------------------------------------------------


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("row", ["gemini", "vertex"])
def test_the_fast_path_stream_builds_no_sdk_response(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch, row: str, is_async: bool
) -> None:
    fast, documented = _make(server, row), _make(server, row, fast_path=False)
    # Decided on first use: here, before the counters wrap the SDK's __init__ that the
    # table of private names inspects.
    assert fast._fast is True and documented._fast is False
    server.reset()
    server.enqueue(row, **SCRIPT)
    server.enqueue(row, **SCRIPT)
    built = _counting(monkeypatch)
    events = _events(fast, is_async, tools=TOOLS)
    assert built == []
    assert _events(documented, is_async, tools=TOOLS) == events
    assert built.count("_from_response") >= 4  # one a chunk: the counter sees the SDK's
    done = events[-1]["result"]
    assert done["content"] == SCRIPT["text"] and done["reasoning"] == SCRIPT["reasoning"]
    assert done["provider_data"] == SCRIPT["provider_data"]
    assert done["usage"]["reasoning_tokens"] == 3


def _worded_apart(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events without the wording of a malformed response's message (google-genai's
    pydantic refusal on the documented call, the field Zerda read on the fast path)."""
    error = events[-1]["result"].get("error")
    if error and " sent a malformed response: " in error["message"]:
        error["message"] = error["message"].split(": ", 1)[0] + ": ..."
    return events


# --- the same stream as the documented call ---------------------------------------------------

HOSTED_SCRIPT: dict[str, Any] = {
    "text": "Oslo is sunny today.",
    "server_tool_calls": [
        {"type": "web_search", "input": {"queries": ["oslo weather"]}},
        {"type": "code_execution", "input": {"code": "print(1)"}, "output": "1\n"},
    ],
    "citations": [{"url": "https://w.example/oslo", "title": "Oslo", "start": 0, "end": 8}],
    "fragments": 2,
}


@pytest.mark.parametrize("row", ["gemini", "vertex"])
@pytest.mark.parametrize(
    "script",
    [
        SCRIPT,
        HOSTED_SCRIPT,
        {"native_stop_reason": "SAFETY", "text": "I"},
        {"text": "Hello there", "fragments": 3, "cut_after": 2},  # truncated
        {"text": "x", "tool_calls": [{"name": "f", "arguments": '{"a": 1'}]},  # args as text
    ],
    ids=["calls", "hosted", "filtered", "truncated", "argument-text"],
)
def test_a_stream_gives_what_the_documented_stream_gives(
    server: MockLLMServer, row: str, script: dict[str, Any]
) -> None:
    tools: list[Any] = list(TOOLS)
    if script is HOSTED_SCRIPT:
        tools += [{"type": "web_search"}, {"type": "code_execution"}]
    results = []
    for options in ({}, {"fast_path": False}):
        llm = _make(server, row, **options)
        server.reset()
        server.enqueue(row, **script)
        server.enqueue(row, **script)
        events = _events(llm, False, tools=tools)
        assert _events(llm, True, tools=tools) == events
        results.append(_worded_apart(events))
    assert results[0] == results[1]


def test_an_error_event_mid_stream_is_the_documented_error_with_the_text_kept(
    server: MockLLMServer,
) -> None:
    error = {"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}
    body = _sse({"candidates": [{"content": {"role": "model", "parts": [{"text": "Hel"}]}}]}, error)
    dones = []
    for options in ({}, {"fast_path": False}):
        server.reset()
        server.enqueue_raw(200, body, SSE, provider="gemini")
        dones.append(_events(_make(server, **options), False)[-1]["result"])
    assert dones[0] == dones[1]
    assert dones[0]["content"] == "Hel" and dones[0]["error"]["status_code"] == 503


# --- include_raw ----------------------------------------------------------------------------

RAW_CHUNKS = [
    {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [
                        {
                            "functionCall": {"name": "get_weather", "args": {"at": {"x": 1}}},
                            "thoughtSignature": "c2lnbmF0dXJl",
                        }
                    ],
                },
                # The Gemini API's name, which google-genai renamed (citations) in its object.
                "citationMetadata": {"citationSources": [{"uri": "https://c.example"}]},
            }
        ],
        "modelVersion": MODEL,
    },
    {
        "candidates": [
            {"content": {"role": "model", "parts": [{"text": ""}]}, "finishReason": "STOP"}
        ],
        "usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 2, "totalTokenCount": 6},
        "responseId": "r1",
    },
]


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_include_raw_is_each_chunk_as_sent_and_shares_nothing(
    server: MockLLMServer, is_async: bool
) -> None:
    server.reset()
    server.enqueue_raw(200, _sse(*RAW_CHUNKS), SSE, provider="gemini")
    done = _events(_make(server), is_async, include_raw=True)[-1]["result"]
    assert done["raw"] == RAW_CHUNKS
    assert done["provider_data"] == {"gemini": {"thought_signatures": ["c2lnbmF0dXJl"]}}
    done["tool_calls"][0]["arguments"]["at"]["x"] = 2  # the caller's to change
    assert done["raw"] == RAW_CHUNKS


# --- continued streams (google-genai's StreamContinuation, over JSON) -------------------------

TOKEN = "dG9rZW4tMQ=="  # b"token-1"


def _text_chunk(text: str, **candidate: Any) -> dict[str, Any]:
    return {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, **candidate}]}


def _usage(prompt: int, out: int) -> dict[str, Any]:
    details = [{"modality": "TEXT", "tokenCount": prompt}]
    return {
        "promptTokenCount": prompt,
        "candidatesTokenCount": out,
        "totalTokenCount": prompt + out,
        "promptTokensDetails": details,
    }


CONTINUED = {
    # A checkpoint, then the connection ends without a finish reason: resumed from it.
    "dropped-after-a-checkpoint": [
        _sse(
            {**_text_chunk("Hel"), "usageMetadata": _usage(3, 1)},
            _text_chunk("", continuationToken=TOKEN),
        ),
        _sse({**_text_chunk("lo", finishReason="STOP"), "usageMetadata": _usage(3, 2)}),
    ],
    # The finish reason CONTINUATION with a token: cleared, and asked for again.
    "continuation": [
        _sse(
            {
                **_text_chunk("Hel", finishReason="CONTINUATION", continuationToken=TOKEN),
                "usageMetadata": _usage(3, 1),
            }
        ),
        _sse({**_text_chunk("lo", finishReason="STOP"), "usageMetadata": _usage(3, 2)}),
    ],
    # A checkpoint, then hops that bring nothing: three reconnects, then a truncated stream.
    "no-progress": [_sse(_text_chunk("Hel", continuationToken=TOKEN)), "", "", "", ""],
    # A token with a final finish reason: not resumed.
    "finished": [_sse(_text_chunk("Hello", finishReason="STOP", continuationToken=TOKEN))],
}


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("name", CONTINUED)
def test_a_continued_stream_is_what_generate_content_stream_gives(
    server: MockLLMServer, name: str, is_async: bool
) -> None:
    seen = []
    for options in ({}, {"fast_path": False}):
        server.reset()
        for body in CONTINUED[name]:
            server.enqueue_raw(200, body, SSE, provider="gemini")
        events = _events(_make(server, **options), is_async, include_raw=True)
        done = events[-1]["result"]
        done.pop("raw", None)  # google-genai's objects, dumped, against the JSON as sent
        seen.append((events, [r.body for r in server.requests_for("gemini")]))
    assert seen[0] == seen[1]
    bodies = seen[0][1]
    assert len(bodies) == len(CONTINUED[name]) and "continuationToken" not in bodies[0]
    if name != "finished":
        assert bodies[1]["continuationToken"] == TOKEN


def test_continued_hops_add_their_usage_as_google_genai_does() -> None:
    before = {**_usage(3, 1), "trafficType": "ON_DEMAND"}
    summed = gemini_stream.summed_usage(before, _usage(4, 2))
    assert summed == {
        "promptTokenCount": 7,
        "candidatesTokenCount": 3,
        "totalTokenCount": 10,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 7}],
        "trafficType": "ON_DEMAND",
    }
    assert before == {**_usage(3, 1), "trafficType": "ON_DEMAND"}  # not changed


# --- chunks that do not fit the API's shapes ------------------------------------------------

FIRST = _text_chunk("Hel")
BROKEN = {
    "finish-reason-an-integer": {"candidates": [{"finishReason": 1}]},
    "parts-not-a-list": {"candidates": [{"content": {"parts": {"text": "x"}}}]},
    "signature-not-base64": {
        "candidates": [
            {"content": {"parts": [{"functionCall": {"name": "f"}, "thoughtSignature": "!!"}]}}
        ]
    },
    "usage-count-text": {"usageMetadata": {"promptTokenCount": "many"}},
    "call-without-a-name": {"candidates": [{"content": {"parts": [{"functionCall": {}}]}}]},
    "candidates-an-object": {"candidates": {"content": {}}},
    "a-json-array": [FIRST],
}


@pytest.mark.parametrize("name", BROKEN)
def test_a_chunk_that_does_not_fit_is_a_malformed_response_with_the_text_kept(
    server: MockLLMServer, name: str
) -> None:
    body = _sse(FIRST, BROKEN[name])
    for row, is_async in (("gemini", False), ("vertex", True)):
        server.reset()
        server.enqueue_raw(200, body, SSE, provider=row)
        done = _events(_make(server, row), is_async)[-1]["result"]
        assert (done["content"], done["stop_reason"]) == ("Hel", "error")
        assert done["error"]["type"] == "server"
        assert done["error"]["message"].startswith(f"{row} sent a malformed response: ")
    # The documented call keeps the text too (google-genai crashes on some of these: an
    # "unknown" error there).
    server.reset()
    server.enqueue_raw(200, body, SSE, provider="gemini")
    done = _events(_make(server, fast_path=False), False)[-1]["result"]
    assert (done["content"], done["stop_reason"]) == ("Hel", "error")


def test_reading_a_chunk_leaves_it_as_it_was(server: MockLLMServer) -> None:
    llm = _make(server)
    from zerda.llm._stream import StreamAccumulator

    acc = StreamAccumulator("gemini")
    chunks = copy.deepcopy(RAW_CHUNKS)
    for chunk in chunks:
        llm._feed(acc, chunk)
    assert chunks == RAW_CHUNKS


# --- import + client ------------------------------------------------------------------------


def test_building_an_interface_loads_no_batch_machinery() -> None:
    """import + client (benchmarks/bench_imports.py) loads what a call needs: the batch
    protocol (zerda.llm.batch, the JSONL writer) waits for a batch."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from zerda.llm import create_interface\n"
        "llm = create_interface('gemini', 'gemini-2.5-flash', api_key='k')\n"
        "llm.client\n"
        "print(sorted(m for m in sys.modules if m.endswith('batch')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    loaded = out.stdout.strip().splitlines()[-1]
    for name in ("zerda.llm.batch", "zerda.llm.wires.gemini.batch", "zerda.llm.wires.openai.batch"):
        assert f"'{name}'" not in loaded, loaded
