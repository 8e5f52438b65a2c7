"""Groq's built-in tools (DESIGN §18): browser_search and code_interpreter in ``tools`` for
the gpt-oss models, ``compound_custom`` / ``search_settings`` for the Compound systems,
the refusals before sending, the mock's checks of tool types and Compound identifiers,
``executed_tools`` read as server calls (generate and stream, sync and async, fast path on
and off; both shapes Groq sends), the recorded Compound answer, document citations, and
the round trip of an answer with executed tools (Groq takes none back: their readable part
goes before the content, on Groq as on another provider)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from zerda.llm import create_interface, hosted
from zerda.llm.errors import InvalidRequestError
from zerda.llm.wires.groq import hosted as wire_hosted
from zerda.testing import MockLLMServer

COMPOUND = "groq/compound"
GPT_OSS = "openai/gpt-oss-120b"
RECORDED = Path(__file__).resolve().parents[4] / ".." / "shared" / "fixtures" / "recorded"
COMPOUND_FILE = (
    RECORDED / "groq" / "pydantic-ai__test_groq.test_groq_web_search_tool_domain_filters__i00.json"
)
FUNCTION = {"name": "get_weather", "parameters": {"type": "object"}}
TEXT = "Python 3.14 is the latest."
USER = {"role": "user", "content": "python?"}

SEARCH = {
    "id": None,
    "type": "web_search",
    "name": "search",
    "input": {"query": "latest python"},
    "output": "Title: Python 3.14\nURL: https://python.org\nContent: released",
}
VISIT = {
    "id": None,
    "type": "web_fetch",
    "name": "visit",
    "input": {"url": "https://python.org/downloads"},
    "output": "Download Python 3.14",
}
PYTHON = {
    "id": None,
    "type": "code_execution",
    "name": "python",
    "input": {"code": "print(3 + 11)"},
    "output": "14\n",
}
WOLFRAM = {
    "id": None,
    "type": "other",
    "name": "wolfram_alpha",
    "input": {"query": "3+11"},
    "output": "14",
}


def make(server: MockLLMServer, model: str = COMPOUND, **kw: Any) -> Any:
    options = {"max_retries": 0, "raise_errors": True, **kw}
    return create_interface("groq", model, **server.client_options("groq"), **options)


def sent(server: MockLLMServer) -> dict[str, Any]:
    body = server.last_request("groq").body
    assert isinstance(body, dict)
    return body


# --- the request ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tools", "native"),
    [
        ([hosted.web_search()], [{"type": "browser_search"}]),
        ([hosted.code_execution()], [{"type": "code_interpreter"}]),
        (
            [hosted.code_execution(), {"type": "web_search"}],
            [{"type": "code_interpreter"}, {"type": "browser_search"}],
        ),
    ],
)
def test_gpt_oss_takes_its_builtin_tools_in_tools(
    server: MockLLMServer, tools: list[dict[str, Any]], native: list[dict[str, Any]]
) -> None:
    server.enqueue("groq", text="ok")
    make(server, GPT_OSS).generate("hi", tools=[FUNCTION, *tools], tool_choice="required")
    body = sent(server)
    function = {"name": "get_weather", "description": "", "parameters": {"type": "object"}}
    assert body["tools"] == [{"type": "function", "function": function}, *native]
    assert body["tool_choice"] == "required"
    assert "compound_custom" not in body


def test_gpt_oss_builtin_tools_alone(server: MockLLMServer) -> None:
    server.enqueue("groq", text="ok")
    make(server, "openai/gpt-oss-20b").generate("hi", tools=[hosted.web_search()])
    assert sent(server) == {
        "model": "openai/gpt-oss-20b",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "browser_search"}],
    }


@pytest.mark.parametrize(
    ("tools", "fields", "header"),
    [
        (
            [hosted.web_search()],
            {"compound_custom": {"tools": {"enabled_tools": ["web_search"]}}},
            None,
        ),
        (
            [
                hosted.web_search(
                    allowed_domains=["python.org"], blocked_domains=["w3schools.com"]
                ),
                hosted.code_execution(),
            ],
            {
                "compound_custom": {"tools": {"enabled_tools": ["web_search", "code_interpreter"]}},
                "search_settings": {
                    "include_domains": ["python.org"],
                    "exclude_domains": ["w3schools.com"],
                },
            },
            None,
        ),
        (
            [hosted.web_fetch(), hosted.web_search(blocked_domains=["a.example"])],
            {
                "compound_custom": {"tools": {"enabled_tools": ["visit_website", "web_search"]}},
                "search_settings": {"exclude_domains": ["a.example"]},
            },
            "latest",  # visit_website runs on the latest Compound version only
        ),
    ],
)
@pytest.mark.parametrize("fast", [True, False])
def test_compound_gets_the_tools_it_may_run(
    server: MockLLMServer,
    tools: list[dict[str, Any]],
    fields: dict[str, Any],
    header: str | None,
    fast: bool,
) -> None:
    server.enqueue("groq", text="ok")
    make(server, fast_path=fast).generate("hi", tools=tools)
    assert sent(server) == {
        "model": COMPOUND,
        "messages": [{"role": "user", "content": "hi"}],
        **fields,
    }
    assert server.last_request("groq").headers.get("groq-model-version") == header


def test_compound_without_hosted_tools_sends_no_restriction(server: MockLLMServer) -> None:
    server.enqueue("groq", text="ok")
    make(server, "groq/compound-mini").generate("hi")
    assert sent(server) == {
        "model": "groq/compound-mini",
        "messages": [{"role": "user", "content": "hi"}],
    }


def test_native_tool_passes_through(server: MockLLMServer) -> None:
    server.enqueue("groq", text="ok")
    make(server, GPT_OSS).generate("hi", tools=[hosted.native({"type": "browser_search"})])
    assert sent(server)["tools"] == [{"type": "browser_search"}]


def test_compound_request_is_pure() -> None:
    tools = ({"type": "web_search", "allowed_domains": ["a.example"]},)
    before = copy.deepcopy(tools)
    out = wire_hosted.compound_request(tools)
    out["search_settings"]["include_domains"].append("x")
    assert tools == before


@pytest.mark.parametrize(
    ("model", "tool", "words"),
    [
        # Compound's search settings: gpt-oss's browser_search takes no options.
        (GPT_OSS, hosted.web_search(allowed_domains=["python.org"]), "only on the Compound"),
        (GPT_OSS, hosted.web_fetch(), "only models matching 'compound'"),
        ("openai/gpt-oss-safeguard-20b", hosted.code_execution(), "only models matching"),
        ("llama-3.3-70b-versatile", hosted.web_search(), "only models matching 'gpt-oss|compound'"),
        (COMPOUND, hosted.web_search(user_location={"country": "US"}), "'user_location'"),
        (COMPOUND, hosted.web_search(max_uses=3), "'max_uses'"),
        (COMPOUND, hosted.web_fetch(max_uses=3), "'max_uses'"),
        (COMPOUND, hosted.file_search(vector_store_ids=["vs_1"]), "does not run the hosted tool"),
        (COMPOUND, hosted.mcp_server(url="https://mcp.example", name="m"), "does not run"),
    ],
)
def test_what_groq_does_not_run_is_refused_before_sending(
    server: MockLLMServer, model: str, tool: dict[str, Any], words: str
) -> None:
    server.reset()
    with pytest.raises(InvalidRequestError) as caught:
        make(server, model).generate("hi", tools=[tool])
    assert words in caught.value.message
    assert caught.value.capability
    assert server.requests == []


# --- the mock validates like the API ---------------------------------------------------------


def test_mock_refuses_an_unknown_tool_type(server: MockLLMServer) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        make(server, GPT_OSS).generate("hi", tools=[hosted.native({"type": "web_search"})])
    assert "'tools.0.type' : value must be one of" in caught.value.message
    assert server.last_request("groq").rejected_by == "tool_types_known"


def test_mock_refuses_an_unknown_compound_tool(server: MockLLMServer) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        make(server).generate("hi", compound_custom={"tools": {"enabled_tools": ["browser"]}})
    assert "got 'browser'" in caught.value.message
    assert server.last_request("groq").rejected_by == "compound_tools_known"


def test_groq_takes_no_executed_tools_back(server: MockLLMServer) -> None:
    """Its assistant message has no executed_tools (groq's ChatCompletionAssistantMessageParam):
    the API's schema refuses the property, which is why Zerda sends the readable text."""
    assistant = {"role": "assistant", "content": TEXT, "executed_tools": []}
    body = {"model": COMPOUND, "messages": [USER, assistant, USER]}
    url = server.base_url("groq") + "/openai/v1/chat/completions"
    answer = httpx.post(url, json=body, headers={"authorization": "Bearer k"})
    assert answer.status_code == 400
    assert "property 'executed_tools' is unsupported" in answer.json()["error"]["message"]


# --- the answer --------------------------------------------------------------------------------


async def _answers(
    llm: Any, mode: str, tools: list[dict[str, Any]]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    if mode == "generate":
        return llm.generate("python?", tools=tools), []
    if mode == "generate_async":
        return await llm.generate_async("python?", tools=tools), []
    if mode == "stream":
        events = list(llm.stream("python?", tools=tools))
    else:
        events = [e async for e in llm.stream_async("python?", tools=tools)]
    return events[-1]["result"], events


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize(
    ("model", "calls", "tools"),
    [
        (COMPOUND, [SEARCH, VISIT, PYTHON, WOLFRAM], []),
        (GPT_OSS, [PYTHON], [hosted.code_execution()]),
    ],
)
async def test_scripted_executed_tools_come_back_as_scripted(
    server: MockLLMServer, model: str, calls: list[dict[str, Any]], tools: list[Any], fast: bool
) -> None:
    llm = make(server, model, fast_path=fast)
    results = []
    for mode in ("generate", "generate_async", "stream", "stream_async"):
        server.enqueue("groq", text=TEXT, server_tool_calls=calls, fragments=2)
        result, events = await _answers(llm, mode, tools)
        assert result["server_tool_calls"] == calls
        assert result["message"]["server_tool_calls"] == calls
        assert result["content"] == TEXT
        if events:
            ran = [e["server_tool_call"] for e in events if e["type"] == "server_tool_call"]
            assert ran == calls
            kinds = [e["type"] for e in events]
            assert max(i for i, k in enumerate(kinds) if k == "server_tool_call") < kinds.index(
                "text"
            )
        results.append({k: v for k, v in result.items() if k not in ("latency_ms",)})
    assert all(r == results[0] for r in results)
    native = results[0]["provider_data"]["groq"]["executed_tools"]
    assert len(native) == len(calls)


def test_gpt_oss_code_shape_is_read(server: MockLLMServer) -> None:
    """gpt-oss names the tool in ``name`` under ``type: "function"``, its code as plain text
    and its output in code_results (https://console.groq.com/docs/code-execution)."""
    server.enqueue("groq", text=TEXT, server_tool_calls=[PYTHON])
    result = make(server, GPT_OSS).generate("python?", include_raw=True)
    assert result["raw"]["choices"][0]["message"]["executed_tools"] == [
        {
            "name": "python",
            "index": 0,
            "type": "function",
            "arguments": "print(3 + 11)",
            "search_results": {"results": None},
            "code_results": [{"text": "14\n"}],
        }
    ]
    assert result["server_tool_calls"] == [PYTHON]


def test_search_results_are_the_readable_output() -> None:
    tool = {
        "index": 0,
        "type": "search",
        "arguments": '{"query": "fennec"}',
        "output": "Title: Fennec\nURL: https://a.example\nContent: a long page...",
        "search_results": {
            "results": [
                {"title": "Fennec", "url": "https://a.example", "content": "...", "score": 0.9},
                {"title": None, "url": "https://b.example", "content": "...", "score": 0.5},
            ]
        },
    }
    assert wire_hosted.map_executed_tool(tool) == {
        "id": None,
        "type": "web_search",
        "name": "search",
        "input": {"query": "fennec"},
        "output": "Fennec: https://a.example\nhttps://b.example",
    }
    browser = {"index": 1, "type": "browser_automation", "arguments": "not json",
               "browser_results": [{"title": "Docs", "url": "https://c.example"}]}  # fmt: skip
    assert wire_hosted.map_executed_tool(browser) == {
        "id": None,
        "type": "other",
        "name": "browser_automation",
        "input": {"_raw": "not json"},
        "output": "Docs: https://c.example",
    }


def test_citations_are_document_citations(server: MockLLMServer) -> None:
    cites = [{"url": None, "title": "doc-1", "text": None, "start": 0, "end": 11}]
    for stream in (False, True):
        server.enqueue("groq", text=TEXT, citations=cites)
        llm = make(server)
        result = list(llm.stream("python?"))[-1]["result"] if stream else llm.generate("python?")
        assert result["citations"] == cites
        # Groq reports its tools itself: no search is inferred from citations.
        assert "server_tool_calls" not in result
        assert result["provider_data"]["groq"]["annotations"] == [
            {
                "type": "document_citation",
                "document_citation": {"document_id": "doc-1", "start_index": 0, "end_index": 11},
            }
        ]


# --- the recorded Compound answer ----------------------------------------------------------------


def _recorded() -> dict[str, Any]:
    if not COMPOUND_FILE.is_file():
        pytest.skip("no shared fixtures")
    fixture: dict[str, Any] = json.loads(COMPOUND_FILE.read_text(encoding="utf-8"))
    return fixture


def _expected(message: dict[str, Any]) -> list[dict[str, Any]]:
    search, visit = message["executed_tools"]
    sources = "\n".join(f"{r['title']}: {r['url']}" for r in search["search_results"]["results"])
    return [
        {
            "id": None,
            "type": "web_search",
            "name": "search",
            "input": {"query": "latest stable version of Python"},
            "output": sources,
        },
        {
            "id": None,
            "type": "web_fetch",
            "name": "visit",
            "input": {"url": "https://www.python.org/downloads/"},
            "output": visit["output"],
        },
    ]


def _as_stream(body: dict[str, Any]) -> dict[str, Any]:
    """The recorded answer as Groq streams it: each executed tool's arguments, then its
    results under the same index, then the text, then the finish with x_groq's usage."""
    message = body["choices"][0]["message"]
    base = {k: body[k] for k in ("id", "object", "created", "model")}
    base["object"] = "chat.completion.chunk"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {**base, "choices": [choice]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    for tool in message["executed_tools"]:
        head = {k: tool[k] for k in ("index", "type", "arguments")}
        chunks += [chunk({"executed_tools": [head]}), chunk({"executed_tools": [tool]})]
    chunks.append(chunk({"reasoning": message["reasoning"]}))
    chunks.append(chunk({"content": message["content"]}))
    last = chunk({}, "stop")
    last["x_groq"] = {"id": "req_1", "usage": body["usage"]}
    chunks.append(last)
    text = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    response = {"status": 200, "headers": {"content-type": "text/event-stream"}, "body": text,
                "body_encoding": "text"}  # fmt: skip
    return {"response": response, "streaming": True}


@pytest.mark.parametrize("fast", [True, False])
def test_recorded_compound_answer_generate_and_stream(server: MockLLMServer, fast: bool) -> None:
    fixture = _recorded()
    message = fixture["response"]["body"]["choices"][0]["message"]
    llm = make(server, fast_path=fast)
    server.enqueue_recorded(fixture, provider="groq")
    result = llm.generate("What is the latest stable version of Python?")
    assert result["server_tool_calls"] == _expected(message)
    assert result["content"] == message["content"]
    assert result["provider_data"]["groq"]["executed_tools"] == message["executed_tools"]

    server.enqueue_recorded(_as_stream(fixture["response"]["body"]), provider="groq")
    events = list(llm.stream("What is the latest stable version of Python?"))
    streamed = events[-1]["result"]
    ran = [e["server_tool_call"] for e in events if e["type"] == "server_tool_call"]
    assert ran == _expected(message)
    for key in ("server_tool_calls", "content", "provider_data", "usage", "reasoning"):
        assert streamed[key] == result[key], key


# --- history ------------------------------------------------------------------------------------


def test_executed_tools_continue_as_text_on_groq_and_elsewhere(server: MockLLMServer) -> None:
    server.enqueue("groq", text=TEXT, server_tool_calls=[SEARCH])
    first = make(server).generate("python?", tools=[hosted.web_search()])
    history = [USER, first["message"], {"role": "user", "content": "and before?"}]
    readable = f'[web_search: search {{"query": "latest python"}}]\n{SEARCH["output"]}\n\n{TEXT}'

    server.enqueue("groq", text="3.13")
    make(server).generate(history)
    assert sent(server)["messages"][1] == {"role": "assistant", "content": readable}

    server.enqueue("openai", text="3.13")
    openai = create_interface("openai", "gpt-4o", **server.client_options("openai"))
    openai.generate(history)
    body = server.last_request("openai").body
    assert isinstance(body, dict)
    assert body["messages"][1] == {"role": "assistant", "content": readable}
