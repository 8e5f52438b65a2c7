"""Gemini's hosted tools (issue 31, DESIGN §18) on the gemini and vertex rows: the native
tools sent for each unified one and option, the refusals, what Zerda reads from the answer
(code execution parts, server-side tool invocations, grounding, URL context) from scripted
mock answers and from the recorded exchanges, generate and stream alike, and the kept
parts sent back to Gemini as they came."""

from __future__ import annotations

import asyncio
import base64
import copy
import json
from pathlib import Path
from typing import Any

import pytest

from zerda.llm import create_interface
from zerda.llm.errors import InvalidRequestError
from zerda.testing import MockLLMServer

pytest.importorskip("google.genai")
from zerda.llm.wires.gemini import hosted  # noqa: E402

RECORDED = Path(__file__).resolve().parents[4] / ".." / "shared" / "fixtures" / "recorded"
GEMINI = RECORDED / "gemini"
MODEL = "gemini-2.5-flash"
FUNCTION = {"name": "get_weather", "description": "Weather", "parameters": {"type": "object"}}


def _make(server: MockLLMServer, row: str, model: str = MODEL, **options: Any) -> Any:
    return create_interface(row, model, max_retries=0, **server.client_options(row), **options)


def _sent(server: MockLLMServer, row: str, llm: Any, **kwargs: Any) -> dict[str, Any]:
    server.reset()
    server.enqueue(row, text="ok")
    result = llm.generate("hi", **kwargs)
    assert result["stop_reason"] == "end_turn", result.get("error")
    body: dict[str, Any] = server.last_request(row).body
    return body


# --- the request ---------------------------------------------------------------------------


@pytest.mark.parametrize("fast_path", [True, False])
def test_each_hosted_tool_is_its_native_tool_on_the_gemini_api(
    server: MockLLMServer, fast_path: bool
) -> None:
    llm = _make(server, "gemini", fast_path=fast_path)
    tools = [
        {"type": "web_search"},
        {"type": "web_fetch"},
        {"type": "code_execution"},
        {"type": "file_search", "vector_store_ids": ["fileSearchStores/a"], "max_num_results": 3},
    ]
    body = _sent(server, "gemini", llm, tools=tools)
    assert body["tools"] == [
        {"googleSearch": {}},
        {"urlContext": {}},
        {"codeExecution": {}},
        {"fileSearch": {"file_search_store_names": ["fileSearchStores/a"], "top_k": 3}},
    ]
    assert "toolConfig" not in body  # no functions: nothing to combine


@pytest.mark.parametrize("fast_path", [True, False])
def test_functions_beside_hosted_tools_ask_for_the_combination(
    server: MockLLMServer, fast_path: bool
) -> None:
    """google-genai's converter puts the functions after the built-in tools (as the
    recordings show: pydantic-ai__google.test_structured_output.*); the Gemini API gets
    includeServerSideToolInvocations (https://ai.google.dev/gemini-api/docs/tool-combination),
    with the tool_choice's config beside it."""
    llm = _make(server, "gemini", fast_path=fast_path)
    body = _sent(
        server, "gemini", llm, tools=[{"type": "web_search"}, FUNCTION], tool_choice="auto"
    )
    assert [list(t) for t in body["tools"]] == [["googleSearch"], ["functionDeclarations"]]
    assert body["toolConfig"] == {
        "functionCallingConfig": {"mode": "AUTO"},
        "includeServerSideToolInvocations": True,
    }
    body = _sent(server, "gemini", llm, tools=[FUNCTION, {"type": "code_execution"}])
    assert body["toolConfig"] == {"includeServerSideToolInvocations": True}


@pytest.mark.parametrize("fast_path", [True, False])
def test_vertex_maps_blocked_domains_and_never_asks_for_the_combination(
    server: MockLLMServer, fast_path: bool
) -> None:
    """Vertex AI's GoogleSearch.exclude_domains; no includeServerSideToolInvocations there
    (recording pydantic-ai__test_google.test_google_vertex_tool_combination_omits_include_server_side_tool_invocations__i00)."""
    llm = _make(server, "vertex", fast_path=fast_path)
    tools = [FUNCTION, {"type": "web_search", "blocked_domains": ["a.com"]}]
    body = _sent(server, "vertex", llm, tools=tools, tool_choice="auto")
    assert body["tools"][:1] == [{"googleSearch": {"exclude_domains": ["a.com"]}}]
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "AUTO"}}
    body = _sent(server, "vertex", llm, tools=[{"type": "web_fetch"}, {"type": "code_execution"}])
    assert body["tools"] == [{"urlContext": {}}, {"codeExecution": {}}]


@pytest.mark.parametrize("fast_path", [True, False])
def test_a_native_tool_goes_as_it_is(server: MockLLMServer, fast_path: bool) -> None:
    llm = _make(server, "gemini", fast_path=fast_path)
    native = {"googleMaps": {"enableWidget": True}}
    body = _sent(server, "gemini", llm, tools=[{"type": "native", "tool": native}])
    assert body["tools"] == [native]
    assert native == {"googleMaps": {"enableWidget": True}}  # the caller's dict untouched


@pytest.mark.parametrize(
    ("row", "tool", "words"),
    [
        ("gemini", {"type": "web_search", "max_uses": 2}, "'max_uses'"),
        ("gemini", {"type": "web_search", "allowed_domains": ["a.com"]}, "'allowed_domains'"),
        ("gemini", {"type": "web_search", "blocked_domains": ["a.com"]}, "'blocked_domains'"),
        ("gemini", {"type": "web_search", "user_location": {"city": "Paris"}}, "user_location"),
        ("gemini", {"type": "web_fetch", "max_content_tokens": 9}, "'max_content_tokens'"),
        ("vertex", {"type": "web_search", "max_uses": 2}, "its options for 'web_search'"),
        ("vertex", {"type": "file_search", "vector_store_ids": ["s"]}, "rows that run it"),
        ("gemini", {"type": "mcp", "url": "https://m.example", "name": "m"}, "rows that run"),
    ],
)
def test_options_gemini_does_not_honour_are_refused_before_sending(
    server: MockLLMServer, row: str, tool: dict[str, Any], words: str
) -> None:
    llm = _make(server, row)
    server.reset()
    with pytest.raises(InvalidRequestError) as info:
        llm.generate("hi", tools=[tool], raise_errors=True)
    assert words in str(info.value)
    assert server.requests == []


# --- scripted answers ----------------------------------------------------------------------

TEXT = "Paris is the capital — of France. ünïcode 🎉 here."
CALLS = [
    {"type": "code_execution", "id": "c1", "input": {"code": "print(1)", "language": "PYTHON"}},
    {
        "type": "web_search",
        "input": {"queries": ["capital of france"]},
        "output": "Wiki (https://en.wikipedia.org/wiki/Paris)\nBrit (https://britannica.com/p)",
    },
    {"type": "web_fetch", "input": {"urls": ["https://a.example"]}},
]
CITATIONS = [
    {
        "url": "https://en.wikipedia.org/wiki/Paris",
        "title": "Wiki",
        "text": "Paris is the capital",
        "start": 0,
        "end": 20,
    },
    {
        "url": "https://britannica.com/p",
        "title": "Brit",
        "text": "ünïcode 🎉",
        "start": 34,
        "end": 43,
    },
]
EXPECTED_CALLS = [
    {
        "id": "c1",
        "type": "code_execution",
        "name": "code_execution",
        "input": {"code": "print(1)", "language": "PYTHON"},
        "output": None,
    },
    {
        "id": None,
        "type": "web_search",
        "name": "google_search",
        "input": {"queries": ["capital of france"]},
        "output": CALLS[1]["output"],
    },
    {
        "id": None,
        "type": "web_fetch",
        "name": "url_context",
        "input": {"urls": ["https://a.example"]},
        "output": "https://a.example (URL_RETRIEVAL_STATUS_SUCCESS)",
    },
]


def _four(llm: Any, server: MockLLMServer, row: str, script: dict[str, Any]) -> list[Any]:
    """generate, stream, generate_async, stream_async of the same scripted answer."""
    server.reset()
    server.set_default(row, **script)
    kwargs = {"tools": [{"type": "web_search"}, {"type": "code_execution"}]}

    async def both() -> list[Any]:
        generated = await llm.generate_async("hi", **kwargs)
        return [generated, [e async for e in llm.stream_async("hi", **kwargs)]]

    return [llm.generate("hi", **kwargs), list(llm.stream("hi", **kwargs)), *asyncio.run(both())]


@pytest.mark.parametrize("row", ["gemini", "vertex"])
def test_scripted_calls_and_citations_come_back_the_same_four_ways(
    server: MockLLMServer, row: str
) -> None:
    llm = _make(server, row)
    script = {"text": TEXT, "server_tool_calls": CALLS, "citations": CITATIONS, "fragments": 4}
    generated, events, generated_async, events_async = _four(llm, server, row, script)
    assert generated["server_tool_calls"] == EXPECTED_CALLS
    assert generated["citations"] == CITATIONS
    assert generated["message"]["server_tool_calls"] == EXPECTED_CALLS
    keys = ("content", "server_tool_calls", "citations", "provider_data", "message")
    for other in (events[-1]["result"], generated_async, events_async[-1]["result"]):
        assert {k: other[k] for k in keys} == {k: generated[k] for k in keys}
    assert events == events_async
    streamed = [e for e in events if e["type"] in ("server_tool_call", "citation")]
    assert [e.get("server_tool_call") or e.get("citation") for e in streamed] == [
        *EXPECTED_CALLS,
        *CITATIONS,
    ]
    # The code ran before the text: its call is out before the first text delta.
    kinds = [e["type"] for e in events]
    assert kinds.index("server_tool_call") < kinds.index("text")


def test_scripted_server_side_tool_invocations(server: MockLLMServer) -> None:
    """Calls with ids (or inputs grounding cannot hold) are toolCall/toolResponse parts."""
    llm = _make(server, "gemini", "gemini-3-flash-preview")
    calls = [
        {"type": "web_search", "id": "s1", "input": {"query": "x"}, "output": "found it"},
        {"type": "file_search", "id": "f1", "input": {}, "output": None},
    ]
    generated, events, *_ = _four(llm, server, "gemini", {"text": "A.", "server_tool_calls": calls})
    assert generated["server_tool_calls"] == [
        {
            "id": "s1",
            "type": "web_search",
            "name": "google_search",
            "input": {"query": "x"},
            "output": "found it",
        },
        {"id": "f1", "type": "file_search", "name": "file_search", "input": {}, "output": None},
    ]
    parts = generated["provider_data"]["gemini"]["parts"]
    assert [list(p) for p in parts] == [["toolCall"], ["toolResponse"]] * 2 + [["text"]]
    assert events[-1]["result"]["server_tool_calls"] == generated["server_tool_calls"]


def test_an_answer_without_hosted_tools_keeps_its_old_shape(server: MockLLMServer) -> None:
    llm = _make(server, "gemini")
    server.enqueue("gemini", text="plain")
    result = llm.generate("hi")
    assert "server_tool_calls" not in result and "citations" not in result
    assert "provider_data" not in result
    server.enqueue("gemini", text="plain")
    assert llm.generate("hi", tools=[{"type": "web_search"}])["server_tool_calls"] == []


# --- the collector on plain JSON and on google-genai objects ------------------------------


def _sdk_candidate(candidate: dict[str, Any]) -> Any:
    from google.genai import models, types

    body = {"candidates": [candidate]}
    response = types.GenerateContentResponse._from_response(
        response=models._GenerateContentResponse_from_mldev(body, None, None), kwargs={}
    )
    return response.candidates[0]


def _collect(candidate: Any, parts: list[Any], text: str) -> tuple[Any, ...]:
    collector = hosted.Collector()
    calls = [call for part in parts for call in collector.part(part)]
    collector.candidate(candidate)
    more, citations = collector.finish(text)
    return calls + more, citations, collector.provider_parts()


def test_json_dicts_and_sdk_objects_read_alike() -> None:
    """The accessors read google-genai's objects and the API's plain JSON the same way (a
    fast path that hands JSON to the parser changes nothing)."""
    candidate = {
        "content": {
            "role": "model",
            "parts": [
                {"executableCode": {"code": "print(2)", "language": "PYTHON", "id": "e1"}},
                {"codeExecutionResult": {"outcome": "OUTCOME_FAILED", "id": "e1"}},
                {"toolCall": {"id": "t1", "toolType": "GOOGLE_SEARCH_WEB", "args": {"q": 1}}},
                {"toolResponse": {"id": "t1", "toolType": "GOOGLE_SEARCH_WEB", "response": {}}},
                {"text": "Süß", "thoughtSignature": "c2ln"},
            ],
        },
        "groundingMetadata": {
            "webSearchQueries": ["", "q"],
            "groundingChunks": [{"web": {"uri": "https://u", "title": "T"}}],
            "groundingSupports": [
                {"segment": {"endIndex": 5, "text": "Süß"}, "groundingChunkIndices": [0, 7]}
            ],
        },
    }
    sdk = _sdk_candidate(copy.deepcopy(candidate))
    plain = _collect(candidate, candidate["content"]["parts"], "Süß")
    assert _collect(sdk, list(sdk.content.parts), "Süß") == plain
    calls, citations, parts = plain
    assert calls == [
        {
            "id": "e1",
            "type": "code_execution",
            "name": "code_execution",
            "input": {"code": "print(2)", "language": "PYTHON"},
            "output": "OUTCOME_FAILED",
        },
        {
            "id": "t1",
            "type": "web_search",
            "name": "google_search",
            "input": {"q": 1},
            "output": "T (https://u)",
        },
    ]
    # UTF-8 bytes 0..5 of "Süß" are its 3 characters; chunk 7 does not exist: skipped.
    assert citations == [{"url": "https://u", "title": "T", "text": "Süß", "start": 0, "end": 3}]
    assert parts == candidate["content"]["parts"]


def test_an_unknown_part_is_an_other_call_and_kept() -> None:
    part = {"mediaProcessing": {"id": "m1", "kind": "resize"}}
    calls, citations, parts = _collect({}, [part, {"text": "done"}], "done")
    assert calls == [
        {
            "id": "m1",
            "type": "other",
            "name": "media_processing",
            "input": {"id": "m1", "kind": "resize"},
            "output": None,
        }
    ]
    assert citations == [] and parts == [part, {"text": "done"}]


def test_a_tool_response_s_readable_part() -> None:
    """Its output text, else its fields as JSON without the search suggestions' HTML."""
    invoked = {"toolCall": {"id": "t", "toolType": "URL_CONTEXT", "args": {"u": 1}}}
    answers = [
        ({"output": "page text"}, "page text"),
        ({"search_suggestions": "<div/>", "n": 1}, '{"n": 1}'),
        ({"search_suggestions": "<div/>"}, None),
    ]
    for response, output in answers:
        answered = {"toolResponse": {"id": "t", "response": response}}
        calls, _, _ = _collect({}, [invoked, answered], "")
        assert [(c["type"], c["name"], c["output"]) for c in calls] == [
            ("web_fetch", "url_context", output)
        ]


def test_stream_texts_are_kept_as_one_part_with_the_last_signature() -> None:
    parts = [
        {"executableCode": {"code": "x"}},
        {"text": ""},  # an empty text beside a part, as streams send it
        {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1"}},
        {"text": "a"},
        {"text": "b"},
        {"text": "", "thoughtSignature": "c2ln"},
    ]
    _, _, kept = _collect({}, parts, "ab")
    assert kept == [parts[0], parts[2], {"text": "ab", "thoughtSignature": "c2ln"}]


# --- recorded exchanges --------------------------------------------------------------------


def _fixture(name: str) -> dict[str, Any]:
    path = GEMINI / f"{name}.json"
    if not path.is_file():
        pytest.skip(f"{GEMINI} is absent")
    data: dict[str, Any] = json.loads(path.read_text())
    return data


_CE = "pydantic-ai__google.test_code_execution."
_SO = "pydantic-ai__google.test_structured_output."
_TG = "pydantic-ai__test_google."
# Per recording: the calls Zerda reads (id, type, name) and how many citations. The
# recordings' derived.server_tool_calls count each executableCode and each
# codeExecutionResult part ("code_execution" twice a run) and one "grounding" per
# grounded answer; toolCall/toolResponse parts without grounding they do not count
# (marked "invocation" here: Zerda lists the search the model ran).
RECORDED_CALLS: dict[str, tuple[list[tuple[Any, str, str]], int]] = {
    f"{_CE}test_code_execution__i00": (
        [
            ("h0mwtrhs", "code_execution", "code_execution"),
            ("7lr99y60", "code_execution", "code_execution"),
        ],
        0,
    ),
    f"{_CE}test_code_execution__i01": (
        [
            ("l5m4dm9r", "code_execution", "code_execution"),
            ("tu0hnkbw", "code_execution", "code_execution"),
        ],
        0,
    ),
    f"{_CE}test_code_execution_stream__i00": (
        [("8xju7mua", "code_execution", "code_execution")],
        0,
    ),
    f"{_SO}test_auto_mode_with_function_and_builtin_tools__i01": (
        [("4f244mfi", "web_search", "google_search")],  # invocation
        0,
    ),
    f"{_SO}test_function_tools_with_builtin_tools__i00": (
        [("93z4z1x3", "web_search", "google_search")],  # invocation
        0,
    ),
    f"{_SO}test_function_tools_with_builtin_tools__i01": (
        [(None, "web_search", "google_search")],
        1,
    ),
    f"{_SO}test_native_output_with_builtin_tools_stream__i00": (
        [("d6vd9r5q", "web_search", "google_search")],
        4,
    ),
    f"{_SO}test_native_output_with_function_and_builtin_tools__i01": (
        [("ccnih13d", "web_search", "google_search")],
        5,
    ),
    f"{_SO}test_tool_output_with_builtin_tools__i00": (
        [("jtmvhz2z", "web_search", "google_search")],  # invocation
        0,
    ),
    f"{_TG}test_google_model_file_search_grounding_gemini_3_True__i03": (
        [("tju3qkc9", "file_search", "file_search")],
        1,
    ),
    f"{_TG}test_google_model_file_search_tool_stream__i03": (
        [(None, "code_execution", "code_execution"), (None, "file_search", "file_search")],
        2,
    ),
    f"{_TG}test_google_model_web_fetch_tool_stream__i00": (
        [(None, "web_fetch", "url_context")],
        1,
    ),
    f"{_TG}test_google_model_web_search_tool_stream__i00": (
        [(None, "web_search", "google_search")],
        9,
    ),
    f"{_TG}test_google_vertex_tool_combination_omits_include_server_side_tool_invocations__i01": (
        [(None, "web_search", "google_search")],
        16,
    ),
}


def _derived_count(calls: list[dict[str, Any]], invocations: int) -> int:
    """What derived.server_tool_calls counts for Zerda's calls (see RECORDED_CALLS)."""
    code = [c for c in calls if c["type"] == "code_execution"]
    two = sum(2 if c["output"] is not None else 1 for c in code)
    return two + len(calls) - len(code) - invocations


def _answer(server: MockLLMServer, fixture: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    row = "vertex" if "/projects/" in fixture["request"]["path"] else "gemini"
    llm = _make(server, row, fixture["model"])
    server.reset()
    server.enqueue_recorded(fixture, provider=row)
    if fixture["streaming"]:
        events = list(llm.stream("hi", **kwargs))
        result: dict[str, Any] = events[-1]["result"]
        streamed = [e["server_tool_call"] for e in events if e["type"] == "server_tool_call"]
        assert streamed == result.get("server_tool_calls", [])
        cited = [e["citation"] for e in events if e["type"] == "citation"]
        assert cited == result.get("citations", [])
        return result
    return llm.generate("hi", **kwargs)


@pytest.mark.parametrize("name", sorted(RECORDED_CALLS))
def test_recorded_hosted_answers(server: MockLLMServer, name: str) -> None:
    fixture = _fixture(name)
    result = _answer(server, fixture)
    assert result["stop_reason"] != "error", result.get("error")
    calls = result.get("server_tool_calls", [])
    expected, citations = RECORDED_CALLS[name]
    assert [(c["id"], c["type"], c["name"]) for c in calls] == expected
    invocations = 1 if "invocation" in _comment(name) else 0
    assert _derived_count(calls, invocations) == len(fixture["derived"]["server_tool_calls"])
    found = result.get("citations", [])
    assert len(found) == citations
    for cited in found:  # the offsets hold the text Gemini says they hold
        assert result["content"][cited["start"] : cited["end"]] == cited["text"]
    assert result["content"] == (fixture["derived"]["text"] or None)
    # toolUsePromptTokenCount (the tools' results read) is input.
    assert result["usage"]["input_tokens"] == fixture["derived"]["usage_norm"]["input_tokens"]


def _comment(name: str) -> str:
    """The invocation-only recordings (see RECORDED_CALLS)."""
    invocation_only = (
        "auto_mode_with_function_and_builtin_tools__i01",
        "function_tools_with_builtin_tools__i00",
        "tool_output_with_builtin_tools__i00",
    )
    return "invocation" if name.endswith(invocation_only) else ""


def test_recorded_code_execution_details(server: MockLLMServer) -> None:
    fixture = _fixture(f"{_CE}test_code_execution__i00")
    result = _answer(server, fixture)
    parts = fixture["response"]["body"]["candidates"][0]["content"]["parts"]
    assert result["server_tool_calls"][1] == {
        "id": "7lr99y60",
        "type": "code_execution",
        "name": "code_execution",
        "input": {
            "code": "import datetime\nprint(datetime.datetime.now())\n",
            "language": "PYTHON",
        },
        "output": "2026-05-05 20:40:33.367937\n",
    }
    assert result["provider_data"] == {"gemini": {"parts": parts}}


def test_recorded_grounding_details(server: MockLLMServer) -> None:
    fixture = _fixture(f"{_TG}test_google_model_web_search_tool_stream__i00")
    result = _answer(server, fixture)
    call = result["server_tool_calls"][0]
    assert call["input"] == {"queries": ["weather in San Francisco today"]}
    assert call["output"].split("\n")[1].startswith("timeanddate.com (https://vertexaisearch.")
    # A support citing chunks 4 and 1: two citations over the same span, multi-byte
    # characters before it ("°F" in the text): 755..881 bytes.
    cited = [c for c in result["citations"] if c["text"].startswith("Hourly")]
    assert [c["title"] for c in cited] == ["accuweather.com", "timeanddate.com"]
    assert cited[0]["end"] - cited[0]["start"] == len(cited[0]["text"])


def test_include_raw_is_the_recorded_body(server: MockLLMServer) -> None:
    fixture = _fixture(f"{_SO}test_function_tools_with_builtin_tools__i01")
    assert _answer(server, fixture, include_raw=True)["raw"] == fixture["response"]["body"]


# --- history -------------------------------------------------------------------------------


def _signatures_as_bytes(value: Any) -> Any:
    """The request JSON with signatures as bytes and snake_case keys in camelCase (the API
    reads both spellings of a field and both base64 alphabets)."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            key = hosted._camel(key)
            if key == "thoughtSignature":
                out[key] = base64.b64decode(item, altchars=b"-_")
            else:
                out[key] = _signatures_as_bytes(item)
        return out
    if isinstance(value, list):
        return [_signatures_as_bytes(v) for v in value]
    return value


@pytest.mark.parametrize(
    ("first", "then", "follow_up", "kwargs"),
    [
        (
            f"{_CE}test_code_execution__i00",
            f"{_CE}test_code_execution__i01",
            [{"role": "user", "content": "What day is tomorrow?"}],
            {"system": "You are a helpful chatbot.", "tools": [{"type": "code_execution"}]},
        ),
        (
            f"{_SO}test_function_tools_with_builtin_tools__i00",
            f"{_SO}test_function_tools_with_builtin_tools__i01",
            [
                {
                    "role": "tool",
                    "tool_call_id": "oqeiriep",
                    "name": "calculator",
                    "content": {"return_value": "4"},
                }
            ],
            {},
        ),
    ],
)
def test_the_same_provider_gets_the_parts_back_as_recorded(
    server: MockLLMServer, first: str, then: str, follow_up: list[Any], kwargs: dict[str, Any]
) -> None:
    """The follow-up request Gemini accepted in the recording is the one Zerda sends."""
    answered, recorded = _fixture(first), _fixture(then)
    prompt = answered["request"]["body"]["contents"][0]["parts"][0]["text"]
    result = _answer(server, answered)
    history = [{"role": "user", "content": prompt}, result["message"], *follow_up]
    llm = _make(server, "gemini", answered["model"])
    server.enqueue("gemini", text="ok")
    assert llm.generate(history, **kwargs)["stop_reason"] == "end_turn"
    sent = server.last_request("gemini").body["contents"]
    assert _signatures_as_bytes(sent) == _signatures_as_bytes(
        recorded["request"]["body"]["contents"]
    )


def test_vertex_gets_no_gemini_api_invocation_parts(server: MockLLMServer) -> None:
    """Vertex AI has no toolCall/toolResponse parts (the mock refuses them there, as
    google-genai does): the turn goes as text, its search's readable part, and its call."""
    result = _answer(server, _fixture(f"{_SO}test_function_tools_with_builtin_tools__i00"))
    history = [
        {"role": "user", "content": "2+2? And Tokyo's weather."},
        result["message"],
        {"role": "tool", "tool_call_id": "oqeiriep", "name": "calculator", "content": "4"},
    ]
    llm = _make(server, "vertex", "gemini-3-flash-preview")
    server.enqueue("vertex", text="ok")
    assert llm.generate(history)["stop_reason"] == "end_turn"
    text, call = server.last_request("vertex").body["contents"][1]["parts"]
    assert text == {"text": '[web_search: google_search {"queries": ["current weather in Tokyo"]}]'}
    assert call["functionCall"]["name"] == "calculator" and call["thoughtSignature"]


def test_an_edited_turn_sends_its_own_text(server: MockLLMServer) -> None:
    result = _answer(server, _fixture(f"{_CE}test_code_execution__i00"))
    message = {**result["message"], "content": "Edited."}
    llm = _make(server, "gemini", "gemini-3-flash-preview")
    server.enqueue("gemini", text="ok")
    llm.generate([{"role": "user", "content": "Day?"}, message, {"role": "user", "content": "?"}])
    parts = server.last_request("gemini").body["contents"][1]["parts"]
    assert parts[0] == {"text": "Edited."}
    assert [next(iter(p)) for p in parts[1:]] == ["executableCode", "codeExecutionResult"] * 2


def test_another_provider_gets_the_readable_part_as_text(server: MockLLMServer) -> None:
    result = _answer(server, _fixture(f"{_CE}test_code_execution__i00"))
    llm = create_interface(
        "anthropic", "claude-sonnet-4-5", max_retries=0, **server.client_options("anthropic")
    )
    server.enqueue("anthropic", text="ok")
    history = [
        {"role": "user", "content": "Day?"},
        result["message"],
        {"role": "user", "content": "?"},
    ]
    assert llm.generate(history)["stop_reason"] == "end_turn"
    sent = server.last_request("anthropic").body["messages"][1]["content"]
    text = sent if isinstance(sent, str) else "".join(b.get("text", "") for b in sent)
    assert "print(datetime.datetime.now())" in text
    assert "2026-05-05 20:40:33.367937" in text
    assert text.endswith(result["content"])


# --- the mock refuses what the APIs refuse -------------------------------------------------


@pytest.mark.parametrize(
    ("row", "tool", "message"),
    [
        ("gemini", {"googleSearch": {"excludeDomains": ["a.com"]}}, "tools[0].google_search"),
        ("gemini", {"enterpriseWebSearch": {}}, 'Unknown name "enterpriseWebSearch"'),
        ("gemini", {"fileSearch": {}}, "file_search_store_names is not specified"),
        ("vertex", {"fileSearch": {"fileSearchStoreNames": ["s"]}}, 'Unknown name "fileSearch"'),
    ],
)
def test_the_mock_refuses_tools_the_api_lacks(
    server: MockLLMServer, row: str, tool: dict[str, Any], message: str
) -> None:
    llm = _make(server, row)
    server.reset()
    server.enqueue(row, text="never")
    result = llm.generate("hi", tools=[{"type": "native", "tool": tool}])
    assert result["error"]["type"] == "invalid_request"
    assert message in result["error"]["message"]
    server.reset()


def test_vertex_refuses_server_side_tool_parts_and_the_combination_flag() -> None:
    from zerda.testing._script import RecordedRequest
    from zerda.testing.wires.gemini.validate_hosted import vertex_server_side_parts_absent

    def rule(body: dict[str, Any]) -> Any:
        req = RecordedRequest("vertex", "POST", "/v1/x:generateContent", {}, {}, body)
        rejection = vertex_server_side_parts_absent(req)
        return None if rejection is None else (rejection.status, rejection.message)

    part = {"toolCall": {"id": "t", "tool_type": "GOOGLE_SEARCH_WEB"}}
    contents = [{"role": "user", "parts": [{"text": "a"}]}, {"role": "model", "parts": [part]}]
    assert rule({"contents": contents}) == (
        400,
        "Invalid JSON payload received. Unknown name \"toolCall\" at 'contents[1].parts[0]': "
        "Cannot find field.",
    )
    flag = {"includeServerSideToolInvocations": True}
    assert rule({"contents": contents[:1], "toolConfig": flag})[0] == 400
    assert rule({"contents": contents[:1], "toolConfig": {}}) is None


def test_the_documented_calls_send_the_same_replayed_turn(server: MockLLMServer) -> None:
    """fast_path=False (google-genai's generate_content) sends the kept parts as the fast
    path does."""
    result = _answer(server, _fixture(f"{_SO}test_function_tools_with_builtin_tools__i00"))
    history = [
        {"role": "user", "content": "2+2?"},
        result["message"],
        {"role": "tool", "tool_call_id": "oqeiriep", "name": "calculator", "content": "4"},
    ]
    bodies = []
    for fast_path in (True, False):
        llm = _make(server, "gemini", "gemini-3-flash-preview", fast_path=fast_path)
        server.reset()
        server.enqueue("gemini", text="ok")
        tools = [FUNCTION, {"type": "web_search"}]
        assert llm.generate(history, tools=tools)["stop_reason"] == "end_turn"
        bodies.append(server.last_request("gemini").body)
    assert bodies[0] == bodies[1]
    assert [next(iter(p)) for p in bodies[0]["contents"][1]["parts"]] == [
        "functionCall",
        "thoughtSignature",
        "thoughtSignature",
    ]


def test_url_context_metadata_is_the_output_of_its_invocation() -> None:
    parts = [
        {"toolCall": {"id": "u", "toolType": "URL_CONTEXT", "args": {}}},
        {"toolResponse": {"id": "u", "toolType": "URL_CONTEXT", "response": {}}},
    ]
    metadata = {
        "urlMetadata": [
            {"retrievedUrl": "https://a", "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_ERROR"}
        ]
    }
    calls, _, _ = _collect({"urlContextMetadata": metadata}, parts, "")
    assert calls == [
        {
            "id": "u",
            "type": "web_fetch",
            "name": "url_context",
            "input": {},
            "output": "https://a (URL_RETRIEVAL_STATUS_ERROR)",
        }
    ]
