"""Hosted tools on the Chat Completions wire (DESIGN §18): the openai row's web search on
its search models (``web_search_options``), the refusals on the rows of this wire that run
no hosted tool (azure, xai and the other compatible rows), native tools passed through,
the mock's checks of web_search_options, url_citation annotations read as citations and as
the one web_search call they stand for (generate and stream, sync and async, fast path on
and off), the recorded refusal of a non-search model, and the round trip of a cited answer
to the same provider and to another."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from zerda.llm import create_interface, hosted
from zerda.llm.errors import InvalidRequestError
from zerda.llm.wires.openai import hosted as wire_hosted
from zerda.testing import MockLLMServer

SEARCH_MODEL = "gpt-4o-search-preview"
RECORDED = Path(__file__).resolve().parents[4] / ".." / "shared" / "fixtures" / "recorded"
NOT_SEARCH = "pydantic-ai__test_openai.test_openai_web_search_tool_model_not_supported__i00.json"
FUNCTION = {"name": "get_weather", "parameters": {"type": "object"}}

TEXT = "Fennecs live in the Sahara. They have big ears."
CITES = [
    {"url": "https://a.example/fennec", "title": "Fennec", "text": None, "start": 0, "end": 27},
    {"url": "https://b.example/ears", "title": "Ears", "text": None, "start": 28, "end": 47},
    {"url": "https://a.example/fennec", "title": "Fennec", "text": None, "start": 28, "end": 47},
]
# The one search the citations stand for: its sources, each once, in order.
SEARCH = {
    "id": None,
    "type": "web_search",
    "name": "web_search",
    "input": {},
    "output": "Fennec: https://a.example/fennec\nEars: https://b.example/ears",
}


def make(
    server: MockLLMServer, provider: str = "openai", model: str = SEARCH_MODEL, **kw: Any
) -> Any:
    options = {"max_retries": 0, "raise_errors": True, **kw}
    return create_interface(provider, model, **server.client_options(provider), **options)


def sent(server: MockLLMServer, provider: str = "openai") -> dict[str, Any]:
    body = server.last_request(provider).body
    assert isinstance(body, dict)
    return body


# --- the request ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "options"),
    [
        ({"type": "web_search"}, {}),
        (
            hosted.web_search(
                user_location={
                    "city": "Tamanrasset",
                    "region": "Tamanrasset",
                    "country": "DZ",
                    "timezone": "Africa/Algiers",
                }
            ),
            {
                "user_location": {
                    "type": "approximate",
                    "approximate": {
                        "city": "Tamanrasset",
                        "region": "Tamanrasset",
                        "country": "DZ",
                        "timezone": "Africa/Algiers",
                    },
                }
            },
        ),
        (
            hosted.web_search(user_location={"country": "DZ"}),
            {"user_location": {"type": "approximate", "approximate": {"country": "DZ"}}},
        ),
    ],
)
def test_web_search_is_the_bodys_web_search_options(
    server: MockLLMServer, tool: dict[str, Any], options: dict[str, Any]
) -> None:
    server.enqueue("openai", text="ok")
    tools = [tool]
    make(server).generate("fennec?", tools=tools)
    assert sent(server) == {
        "model": SEARCH_MODEL,
        "messages": [{"role": "user", "content": "fennec?"}],
        "web_search_options": options,
    }
    assert tools == [tool]  # the caller's list and dicts are not changed


def test_native_tools_go_in_tools_beside_functions(server: MockLLMServer) -> None:
    custom = {"type": "custom", "custom": {"name": "grammar_tool"}}
    server.enqueue("openai", text="ok")
    make(server, model="gpt-5").generate(
        "hi", tools=[FUNCTION, hosted.native(custom)], tool_choice="auto"
    )
    body = sent(server)
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "",
                "parameters": {"type": "object"},
            },
        },
        custom,
    ]
    assert body["tool_choice"] == "auto"
    assert "web_search_options" not in body


def test_native_tool_alone_is_the_tools_list(server: MockLLMServer) -> None:
    custom = {"type": "custom", "custom": {"name": "grammar_tool"}}
    server.enqueue("openai", text="ok")
    make(server, model="gpt-5").generate("hi", tools=[hosted.native(custom)])
    assert sent(server)["tools"] == [custom]


def test_web_search_options_pure_mapping() -> None:
    tool = {"type": "web_search", "user_location": {"city": "Paris"}}
    assert wire_hosted.map_web_search_options(tool) == {
        "web_search_options": {
            "user_location": {"type": "approximate", "approximate": {"city": "Paris"}}
        }
    }
    assert tool == {"type": "web_search", "user_location": {"city": "Paris"}}


# --- refusals before sending -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "model", "tool", "words"),
    [
        # Regular models do not take web_search_options (the recorded 400 below).
        (
            "openai",
            "gpt-4o",
            {"type": "web_search"},
            "only models matching '-search-(preview|api)'",
        ),
        # Chat Completions has no domain filter and no use limit.
        (
            "openai",
            SEARCH_MODEL,
            hosted.web_search(allowed_domains=["a.example"]),
            "'allowed_domains'",
        ),
        (
            "openai",
            SEARCH_MODEL,
            hosted.web_search(blocked_domains=["a.example"]),
            "'blocked_domains'",
        ),
        ("openai", SEARCH_MODEL, hosted.web_search(max_uses=2), "'max_uses'"),
        (
            "openai",
            SEARCH_MODEL,
            hosted.code_execution(),
            "does not run the hosted tool 'code_execution'",
        ),
        ("openai", SEARCH_MODEL, hosted.web_fetch(), "does not run the hosted tool 'web_fetch'"),
        # Azure's chat reference documents no hosted tool; xAI's chat runs functions only.
        ("azure", "gpt-4o-search-preview", {"type": "web_search"}, "azure does not run"),
        ("xai", "grok-4", {"type": "web_search"}, "xai does not run"),
        ("xai", "grok-4", hosted.code_execution(), "xai does not run"),
        ("openrouter", "openai/gpt-4o", {"type": "web_search"}, "openrouter does not run"),
    ],
)
def test_what_the_row_does_not_run_is_refused_before_sending(
    server: MockLLMServer, provider: str, model: str, tool: dict[str, Any], words: str
) -> None:
    server.reset()
    llm = make(server, provider, model)
    with pytest.raises(InvalidRequestError) as caught:
        llm.generate("hi", tools=[tool])
    assert words in caught.value.message
    assert caught.value.capability
    assert server.requests == []


def test_the_refusal_names_the_rows_that_run_it(server: MockLLMServer) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        make(server, "xai", "grok-4").generate("hi", tools=[{"type": "web_search"}])
    assert "openai" in caught.value.message.split("rows that run it:")[1]
    assert "groq" in caught.value.message.split("rows that run it:")[1]


# --- the mock validates like the API ---------------------------------------------------------


def test_mock_refuses_web_search_options_on_a_regular_model(server: MockLLMServer) -> None:
    # Sent as a native body field, past Zerda's own check.
    with pytest.raises(InvalidRequestError) as caught:
        make(server, model="gpt-4o").generate("hi", web_search_options={})
    assert caught.value.status_code == 400
    assert caught.value.message == "Web search options not supported with this model."
    assert server.last_request("openai").rejected_by == "web_search_options_on_search_models"


def test_mock_refuses_a_builtin_tool_type_on_chat_completions(server: MockLLMServer) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        make(server).generate("hi", tools=[hosted.native({"type": "web_search"})])
    assert "Supported values are: 'function' and 'custom'" in caught.value.message
    assert server.last_request("openai").rejected_by == "tool_types_known"


def test_mock_refuses_web_search_options_on_azure(server: MockLLMServer) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        make(server, "azure", "gpt-4o").generate("hi", web_search_options={})
    assert caught.value.message == "Unrecognized request argument supplied: web_search_options"
    assert server.last_request("azure").rejected_by == "no_web_search_options"


@pytest.mark.skipif(not (RECORDED / "openai" / NOT_SEARCH).is_file(), reason="no shared fixtures")
def test_recorded_refusal_of_a_regular_model() -> None:
    fixture = json.loads((RECORDED / "openai" / NOT_SEARCH).read_text(encoding="utf-8"))
    with MockLLMServer() as server:
        server.enqueue_recorded(fixture, provider="openai")
        llm = make(server, model="gpt-4o", raise_errors=False)
        result = llm.generate("What day is today?")
    assert result["stop_reason"] == "error"
    assert result["error"]["type"] == "invalid_request"
    assert result["error"]["message"] == "Web search options not supported with this model."


# --- the answer: citations and the search they stand for --------------------------------------


def _answer_body(annotations: list[Any]) -> dict[str, Any]:
    message = {"role": "assistant", "content": TEXT, "refusal": None, "annotations": annotations}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": SEARCH_MODEL,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 12, "total_tokens": 21},
    }


def _url(url: str, title: str, start: int, end: int) -> dict[str, Any]:
    cited = {"end_index": end, "start_index": start, "title": title, "url": url}
    return {"type": "url_citation", "url_citation": cited}


NATIVE = [
    _url("https://a.example/fennec", "Fennec", 0, 27),
    _url("https://b.example/ears", "Ears", 28, 47),
    _url("https://a.example/fennec", "Fennec", 28, 47),
]


def _fixture(body: Any, *, stream: bool = False) -> dict[str, Any]:
    if not stream:
        return {"response": {"status": 200, "body": body, "body_encoding": "json"}}
    text = "".join(f"data: {json.dumps(c)}\n\n" for c in body) + "data: [DONE]\n\n"
    headers = {"content-type": "text/event-stream"}
    return {"response": {"status": 200, "headers": headers, "body": text, "body_encoding": "text"}}


def test_annotations_are_citations_and_one_search(server: MockLLMServer) -> None:
    server.enqueue_recorded(_fixture(_answer_body(NATIVE)), provider="openai")
    result = make(server).generate("fennec?", tools=[{"type": "web_search"}])
    assert result["content"] == TEXT
    assert result["citations"] == CITES
    assert result["server_tool_calls"] == [SEARCH]
    assert result["message"]["server_tool_calls"] == [SEARCH]
    assert result["provider_data"] == {"openai": {"annotations": NATIVE}}
    assert [TEXT[c["start"] : c["end"]] for c in result["citations"]] == [
        "Fennecs live in the Sahara.",
        "They have big ears.",
        "They have big ears.",
    ]


def test_an_answer_without_citations_lists_no_search(server: MockLLMServer) -> None:
    server.enqueue_recorded(_fixture(_answer_body([])), provider="openai")
    result = make(server).generate("fennec?", tools=[{"type": "web_search"}])
    assert result["server_tool_calls"] == []
    assert result["citations"] == []
    assert "provider_data" not in result


def test_an_unknown_annotation_is_kept_not_cited(server: MockLLMServer) -> None:
    odd = {"type": "file_citation", "file_citation": {"file_id": "f1", "index": 3}}
    server.enqueue_recorded(_fixture(_answer_body([odd, NATIVE[0]])), provider="openai")
    result = make(server).generate("fennec?")
    assert result["citations"] == CITES[:1]
    assert result["provider_data"] == {"openai": {"annotations": [odd, NATIVE[0]]}}


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
            "model": SEARCH_MODEL, "choices": [choice]}  # fmt: skip


def test_a_stream_with_repeated_annotations_gives_generates_result(server: MockLLMServer) -> None:
    """Annotations ride on a delta (its last, with no text); one repeated on a later delta
    is the same citation, counted once."""
    chunks = [
        _chunk({"role": "assistant", "content": ""}),
        _chunk({"content": TEXT[:20]}),
        _chunk({"content": TEXT[20:], "annotations": NATIVE[:1]}),
        _chunk({"annotations": NATIVE}),
        _chunk({}, "stop"),
    ]
    server.enqueue_recorded(_fixture(chunks, stream=True), provider="openai")
    events = list(make(server).stream("fennec?"))
    result = events[-1]["result"]
    assert result["citations"] == CITES
    assert result["server_tool_calls"] == [SEARCH]
    assert result["provider_data"] == {"openai": {"annotations": NATIVE}}
    kinds = [e["type"] for e in events]
    assert kinds == ["text", "text", "citation", "citation", "citation", "server_tool_call", "done"]


async def _answers(llm: Any, mode: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    tools = [{"type": "web_search"}]
    if mode == "generate":
        return llm.generate("fennec?", tools=tools), []
    if mode == "generate_async":
        return await llm.generate_async("fennec?", tools=tools), []
    if mode == "stream":
        events = list(llm.stream("fennec?", tools=tools))
    else:
        events = [e async for e in llm.stream_async("fennec?", tools=tools)]
    return events[-1]["result"], events


@pytest.mark.parametrize("fast", [True, False])
async def test_scripted_citations_come_back_as_scripted(server: MockLLMServer, fast: bool) -> None:
    """The mock renders the script's citations as url_citation annotations (JSON, and a
    stream's delta after the text); Chat Completions has no search item, so the call the
    result lists is the one the citations stand for."""
    llm = make(server, fast_path=fast)
    results = []
    for mode in ("generate", "generate_async", "stream", "stream_async"):
        server.enqueue("openai", text=TEXT, citations=CITES, fragments=3)
        result, events = await _answers(llm, mode)
        assert result["citations"] == CITES
        assert result["server_tool_calls"] == [SEARCH]
        if events:
            assert [e["citation"] for e in events if e["type"] == "citation"] == CITES
            assert [e["server_tool_call"] for e in events if e["type"] == "server_tool_call"] == [
                SEARCH
            ]
            kinds = [e["type"] for e in events]
            assert kinds.index("citation") > max(i for i, k in enumerate(kinds) if k == "text")
        results.append({k: v for k, v in result.items() if k not in ("latency_ms", "raw")})
    assert all(r == results[0] for r in results)


def test_include_raw_keeps_the_annotations(server: MockLLMServer) -> None:
    server.enqueue_recorded(_fixture(_answer_body(NATIVE)), provider="openai")
    result = make(server).generate("fennec?", include_raw=True)
    assert result["raw"]["choices"][0]["message"]["annotations"] == NATIVE


# --- history ---------------------------------------------------------------------------------


def test_a_cited_answer_continues_on_the_same_provider_and_another(server: MockLLMServer) -> None:
    """Chat Completions takes no annotations back (its assistant message has none): the
    search's readable part goes before the content, on the same provider as on another."""
    server.enqueue("openai", text=TEXT, citations=CITES)
    first = make(server).generate("fennec?", tools=[{"type": "web_search"}])
    history = [
        {"role": "user", "content": "fennec?"},
        first["message"],
        {"role": "user", "content": "more"},
    ]
    readable = f"[web_search: web_search]\n{SEARCH['output']}\n\n{TEXT}"

    server.enqueue("openai", text="more")
    make(server).generate(history, tools=[{"type": "web_search"}])
    assert sent(server)["messages"][1] == {"role": "assistant", "content": readable}

    server.enqueue("anthropic", text="more")
    claude = create_interface(
        "anthropic", "claude-sonnet-4-5", **server.client_options("anthropic")
    )
    claude.generate(history)
    body = server.last_request("anthropic").body
    assert isinstance(body, dict)
    assert body["messages"][1] == {"role": "assistant", "content": readable}
