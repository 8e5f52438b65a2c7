"""OllamaInterface: converters, the exact /api/chat body on the wire, result mapping,
recorded exchanges, retries and faults — against MockLLMServer and the real ollama SDK."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import ollama
import pytest

from tests.llm.providers.histories import TOOLS, history_from
from zerda.llm import (
    create_interface,
)
from zerda.llm.base import Request
from zerda.llm.providers import ollama as provider
from zerda.llm.wires.ollama import fastpath as ollama_fastpath
from zerda.llm.wires.ollama.interface import OllamaInterface
from zerda.testing import MockLLMServer

MODEL = "llama3.1"
KEY = "sk-SECRET-zerda-1234"
FIXTURES = Path(__file__).resolve().parents[3] / ".." / "shared" / "fixtures"
RECORDED = FIXTURES / "recorded" / "ollama"


@pytest.fixture
def server() -> Any:
    with MockLLMServer() as s:
        yield s


@pytest.fixture(autouse=True)
def _no_ollama_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # The SDK reads these itself: a developer's settings must not leak into the tests.
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    monkeypatch.delenv("OLLAMA_API_KEY", raising=False)


def make(server: MockLLMServer, **options: Any) -> OllamaInterface:
    options.setdefault("max_retries", 0)
    return OllamaInterface(MODEL, **server.client_options("ollama"), **options)


NO_DETAILS = {"cache_read_tokens": None, "cache_write_tokens": None, "reasoning_tokens": None}


def body(server: MockLLMServer) -> Any:
    return server.last_request("ollama").body


def result(
    content: Any,
    calls: list[dict[str, Any]],
    stop: str,
    usage: Any = None,
    reasoning: str | None = None,
) -> dict[str, Any]:
    usage = usage if usage is not None else {"input_tokens": 10, "output_tokens": 5}
    return {
        "content": content,
        "tool_calls": calls,
        "stop_reason": stop,
        "usage": {**usage, **NO_DETAILS},  # Ollama reports no cache or reasoning counts
        "reasoning": reasoning,
        "message": {"role": "assistant", "content": content, "tool_calls": calls},
        "cost": None,  # the ollama row has no price provider
    }


WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": TOOLS[0]["parameters"],
    },
}
TIME = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "Local time in a city.",
        "parameters": TOOLS[1]["parameters"],
    },
}


# --- the request on the wire ------------------------------------------------------------


def _sent_by_json(server: MockLLMServer, llm: OllamaInterface, stream: bool) -> Any:
    """What httpx sends for the same body given as ``json=`` (the SDK's own way)."""
    native = llm._native_request(HISTORY_EN, {"tools": TOOLS})
    http = llm.client._client
    with http.stream("POST", "/api/chat", json={**native, "stream": stream}) as response:
        response.read()
    return server.last_request("ollama")


HISTORY_EN = [{"role": "user", "content": "Wetter in Zürich? 😀"}]


@pytest.mark.parametrize("how", ["generate", "generate_async", "stream"])
async def test_the_request_is_what_json_body_sends(server: MockLLMServer, how: str) -> None:
    """The bytes (msgspec's: zerda.llm._body_json), the URL and the headers of httpx's
    ``json=body``, which Zerda no longer asks httpx to encode and merge on every call."""
    llm = make(server)
    server.set_default("ollama", text="ok")
    if how == "generate":
        llm.generate(HISTORY_EN, tools=TOOLS)
    elif how == "generate_async":
        await llm.generate_async(HISTORY_EN, tools=TOOLS)
    else:
        assert "".join(e.get("text", "") for e in llm.stream(HISTORY_EN, tools=TOOLS)) == "ok"
    ours = server.last_request("ollama")
    theirs = _sent_by_json(server, llm, stream=how == "stream")
    assert ours.raw_body == theirs.raw_body
    assert "Zürich".encode() in ours.raw_body
    assert (ours.method, ours.path, ours.headers) == (theirs.method, theirs.path, theirs.headers)


def test_the_chat_url_is_merged_as_httpx_merges_it_and_follows_the_base_url() -> None:
    http = httpx.Client(base_url="http://127.0.0.1:9/behind/a/proxy")
    assert ollama_fastpath.chat_url(http) == http._merge_url("/api/chat")
    assert str(ollama_fastpath.chat_url(http)) == "http://127.0.0.1:9/behind/a/proxy/api/chat"
    http.base_url = "http://127.0.0.1:8"
    assert str(ollama_fastpath.chat_url(http)) == "http://127.0.0.1:8/api/chat"


@pytest.mark.parametrize("given", [None, "application/json; charset=utf-8"])
def test_the_content_type_is_the_one_json_body_gets(given: str | None) -> None:
    """httpx's ``json=`` sets application/json unless the client sets its own."""
    http = httpx.Client(
        base_url="http://127.0.0.1:9", headers={"Content-Type": given} if given else {}
    )
    args = ollama_fastpath.send_args(http, {"model": "m", "messages": []}, {})
    ours = http.build_request("POST", **args)
    theirs = http.build_request("POST", "/api/chat", json={"model": "m", "messages": []})
    assert (
        ours.headers["content-type"]
        == theirs.headers["content-type"]
        == (given or "application/json")
    )
    assert (ours.url, ours.content) == (theirs.url, theirs.content)


def test_a_body_that_is_not_plain_json_goes_as_json_for_httpx_to_refuse() -> None:
    http = httpx.Client(base_url="http://127.0.0.1:9")
    args = ollama_fastpath.send_args(http, {"model": "m", "format": {"x": {1}}}, {"timeout": 3})
    assert args == {"url": "/api/chat", "json": {"model": "m", "format": {"x": {1}}}, "timeout": 3}


# --- construction -------------------------------------------------------------------------


def test_create_interface_builds_ollama() -> None:
    llm = create_interface("ollama:qwen3")
    assert isinstance(llm, OllamaInterface)
    assert llm.model == "qwen3"
    assert llm.env_keys == ()


def test_no_api_key_needed(server: MockLLMServer) -> None:
    server.enqueue("ollama", text="hi")
    assert make(server).generate("hello")["content"] == "hi"
    assert "authorization" not in server.last_request("ollama").headers


def test_api_key_is_sent_as_bearer_and_never_shown(server: MockLLMServer) -> None:
    llm = make(server, api_key=KEY)
    server.enqueue("ollama", text="hi")
    llm.generate("hello")
    # The server keeps the header's name and redacts its value.
    assert server.last_request("ollama").headers["authorization"] == "<redacted>"
    assert llm.client._client.headers["authorization"] == f"Bearer {KEY}"
    assert KEY not in repr(llm) and KEY not in str(llm)


def test_ollama_api_key_env_is_sent_by_the_sdk(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_API_KEY", KEY)
    llm = make(server)
    server.enqueue("ollama", text="hi")
    llm.generate("hello")
    assert llm.client._client.headers["authorization"] == f"Bearer {KEY}"
    assert KEY not in repr(llm)


def test_ollama_host_env_is_used_without_base_url(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", server.base_url("ollama"))
    server.enqueue("ollama", text="from env host")
    llm = OllamaInterface(MODEL, max_retries=0)
    assert llm.generate("hello")["content"] == "from env host"
    assert server.last_request("ollama").path == "/api/chat"


def test_base_url_wins_over_ollama_host(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")
    server.enqueue("ollama", text="hi")
    assert make(server).generate("hello")["content"] == "hi"


def test_timeout_and_client_options_reach_the_sdk_client(server: MockLLMServer) -> None:
    llm = make(server, timeout=2.5, headers={"X-Trace": "t1"})
    assert llm.client._client.timeout == httpx.Timeout(2.5)
    server.enqueue("ollama", text="hi")
    llm.generate("hello")
    assert server.last_request("ollama").headers["x-trace"] == "t1"


def test_client_is_built_once_and_reused(server: MockLLMServer) -> None:
    llm = make(server)
    assert llm.client is llm.client
    assert llm.async_client is llm.async_client


async def test_ready_clients_are_used(server: MockLLMServer) -> None:
    client = ollama.Client(host=server.base_url("ollama"), headers={"X-Who": "sync"})
    async_client = ollama.AsyncClient(host=server.base_url("ollama"), headers={"X-Who": "async"})
    llm = OllamaInterface(MODEL, client=client, async_client=async_client, max_retries=0)
    server.enqueue("ollama", text="a")
    server.enqueue("ollama", text="b")
    assert llm.generate("x")["content"] == "a"
    assert (await llm.generate_async("x"))["content"] == "b"
    assert [r.headers["x-who"] for r in server.requests] == ["sync", "async"]


# --- converters ---------------------------------------------------------------------------


def test_map_messages_whole() -> None:
    messages = [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}},
                {"id": None, "name": "get_time", "arguments": {}},
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "name": "get_weather",
            "content": {"t": 18},
            "is_error": False,
        },
        {
            "role": "tool",
            "tool_call_id": None,
            "name": "get_time",
            "content": [1, "a"],
            "is_error": True,
        },
        {"role": "assistant", "content": "done", "tool_calls": []},
    ]
    assert provider._map_messages("be brief", messages) == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_1",
                    "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
                },
                {"function": {"name": "get_time", "arguments": {}}},
            ],
        },
        {
            "role": "tool",
            "content": '{"t": 18}',
            "tool_name": "get_weather",
            "tool_call_id": "call_1",
        },
        {"role": "tool", "content": '[1, "a"]', "tool_name": "get_time"},
        {"role": "assistant", "content": "done"},
    ]


def test_map_tools_and_tool_choice() -> None:
    tools = provider._map_tools(
        [
            {"name": t["name"], "description": t["description"], "parameters": t["parameters"]}
            for t in TOOLS
        ]
    )
    assert tools == [WEATHER, TIME]
    assert provider._map_tool_choice(None, tools) == tools
    assert provider._map_tool_choice("auto", tools) == tools
    assert provider._map_tool_choice("required", tools) == tools
    assert provider._map_tool_choice("none", tools) is None
    assert provider._map_tool_choice({"name": "get_time"}, tools) == [TIME]
    assert provider._map_tool_choice("auto", None) is None


def _request(**fields: Any) -> Request:
    base: dict[str, Any] = {"system": None, "messages": [], "tools": None, "tool_choice": None}
    return Request(**{**base, **fields})


def test_map_options() -> None:
    req = _request(
        max_tokens=64, temperature=0.2, top_p=0.9, stop=["END"], parallel_tool_calls=False
    )
    assert provider._map_options(req) == {
        "num_predict": 64,
        "temperature": 0.2,
        "top_p": 0.9,
        "stop": ["END"],
    }
    assert provider._map_options(_request()) == {}


def test_merge_native_merges_options_and_passes_the_rest() -> None:
    body = {"model": "m", "options": {"num_predict": 5, "temperature": 0.1}}
    native = {"options": {"temperature": 0.7, "num_ctx": 8192}, "think": True, "keep_alive": "5m"}
    assert provider._merge_native(body, native) == {
        "model": "m",
        "options": {"num_predict": 5, "temperature": 0.7, "num_ctx": 8192},
        "think": True,
        "keep_alive": "5m",
    }
    assert native == {
        "options": {"temperature": 0.7, "num_ctx": 8192},
        "think": True,
        "keep_alive": "5m",
    }
    assert provider._merge_native(body, {"options": ollama.Options(seed=3)})["options"] == {
        "num_predict": 5,
        "temperature": 0.1,
        "seed": 3,
    }


def test_map_usage_and_stop_reason() -> None:
    assert provider._map_usage({"prompt_eval_count": 3, "eval_count": 4}) == {
        "input_tokens": 3,
        "output_tokens": 4,
        **NO_DETAILS,
    }
    assert provider._map_usage({"done": False}) is None
    assert [provider._map_stop_reason(r) for r in ("stop", "length", "load", None)] == [
        "end_turn",
        "max_tokens",
        "other",
        "other",
    ]


def test_build_request_does_not_mutate_input(server: MockLLMServer) -> None:
    history = history_from("openai")
    snapshot = json.loads(json.dumps(history))
    tools = json.loads(json.dumps(TOOLS))
    server.enqueue("ollama", text="ok")
    make(server).generate(history, tools=tools, options={"seed": 1})
    assert history == snapshot and tools == TOOLS


# --- the exact body on the wire -----------------------------------------------------------


def test_plain_prompt_body(server: MockLLMServer) -> None:
    server.enqueue("ollama", text="hi")
    make(server).generate("hello")
    request = server.last_request("ollama")
    assert (request.method, request.path) == ("POST", "/api/chat")
    assert request.body == {
        "model": MODEL,
        "messages": [{"role": "user", "content": "hello"}],
        "stream": False,
    }


def test_system_prompt_goes_first(server: MockLLMServer) -> None:
    server.enqueue("ollama", text="hi")
    messages = [
        {"role": "user", "content": "hello"},
        {"role": "system", "content": "Answer in French."},
    ]
    make(server).generate(messages, system="Be brief.")
    assert body(server)["messages"] == [
        {"role": "system", "content": "Be brief.\n\nAnswer in French."},
        {"role": "user", "content": "hello"},
    ]


def test_tool_schemas_are_sent_whole(server: MockLLMServer) -> None:
    # The SDK's own chat() would drop nested properties, anyOf, minimum and $defs details.
    schema = {
        "type": "object",
        "properties": {
            "where": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
            "days": {"type": "integer", "minimum": 1, "default": 3},
            "unit": {"anyOf": [{"type": "string", "enum": ["C", "F"]}, {"type": "null"}]},
        },
        "required": ["where"],
        "additionalProperties": False,
    }
    server.enqueue("ollama", text="ok")
    make(server).generate(
        "hi", tools=[{"name": "forecast", "description": "Forecast.", "parameters": schema}]
    )
    assert body(server)["tools"] == [
        {
            "type": "function",
            "function": {"name": "forecast", "description": "Forecast.", "parameters": schema},
        }
    ]


@pytest.mark.parametrize(
    ("choice", "sent"),
    [
        (None, [WEATHER, TIME]),
        ("auto", [WEATHER, TIME]),
        ("none", None),
        ("get_time", [TIME]),
        ({"name": "get_time"}, [TIME]),
        ({"type": "function", "function": {"name": "get_weather"}}, [WEATHER]),
    ],
)
def test_tool_choice_body(server: MockLLMServer, choice: Any, sent: Any) -> None:
    server.enqueue("ollama", text="ok")
    make(server).generate("hi", tools=TOOLS, tool_choice=choice)
    expected: dict[str, Any] = {
        "model": MODEL,
        "messages": [{"role": "user", "content": "hi"}],
        "stream": False,
    }
    if sent is not None:
        expected["tools"] = sent
    assert body(server) == expected


def test_options_body(server: MockLLMServer) -> None:
    server.enqueue("ollama", text="ok")
    make(server).generate("hi", max_tokens=32, temperature=0.3, top_p=0.8, stop="###")
    assert body(server) == {
        "model": MODEL,
        "messages": [{"role": "user", "content": "hi"}],
        "options": {"num_predict": 32, "temperature": 0.3, "top_p": 0.8, "stop": ["###"]},
        "stream": False,
    }


def test_native_arguments_body(server: MockLLMServer) -> None:
    server.enqueue("ollama", text="ok")
    make(server).generate(
        "hi", max_tokens=8, options={"num_ctx": 4096}, think=False, keep_alive="1m", format="json"
    )
    assert body(server) == {
        "model": MODEL,
        "messages": [{"role": "user", "content": "hi"}],
        "options": {"num_predict": 8, "num_ctx": 4096},
        "think": False,
        "keep_alive": "1m",
        "format": "json",
        "stream": False,
    }


def test_multi_turn_history_with_parallel_calls(server: MockLLMServer) -> None:
    server.enqueue("ollama", text="ok")
    messages = [
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {"id": None, "name": "get_weather", "arguments": {"city": "Paris"}},
                {"id": None, "name": "get_weather", "arguments": {"city": "Rome"}},
            ],
        },
        {"role": "tool", "name": "get_weather", "content": "sunny"},
        {"role": "tool", "name": "get_weather", "content": {"sky": "rain"}},
        {"role": "assistant", "content": "Paris sunny, Rome rain."},
        {"role": "user", "content": "Thanks"},
    ]
    make(server).generate(messages, tools=TOOLS)
    assert body(server) == {
        "model": MODEL,
        "messages": [
            {"role": "user", "content": "Weather in Paris and Rome?"},
            {
                "role": "assistant",
                "content": "Checking.",
                "tool_calls": [
                    {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
                    {"function": {"name": "get_weather", "arguments": {"city": "Rome"}}},
                ],
            },
            {"role": "tool", "content": "sunny", "tool_name": "get_weather"},
            {"role": "tool", "content": '{"sky": "rain"}', "tool_name": "get_weather"},
            {"role": "assistant", "content": "Paris sunny, Rome rain."},
            {"role": "user", "content": "Thanks"},
        ],
        "tools": [WEATHER, TIME],
        "stream": False,
    }


def _expected_history(first: str | None, second: str | None) -> list[dict[str, Any]]:
    def call(call_id: str | None, name: str) -> dict[str, Any]:
        out: dict[str, Any] = {"function": {"name": name, "arguments": {"city": "Paris"}}}
        return {"id": call_id, **out} if call_id else out

    def result(call_id: str | None, name: str, content: str) -> dict[str, Any]:
        out = {"role": "tool", "content": content, "tool_name": name}
        return {**out, "tool_call_id": call_id} if call_id else out

    return [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Weather and time in Paris?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [call(first, "get_weather"), call(second, "get_time")],
        },
        result(first, "get_weather", '{"temp_c": 18, "sky": "clear"}'),
        result(second, "get_time", "14:05"),
        {"role": "assistant", "content": "18°C and clear; it is 14:05."},
        {"role": "user", "content": "Thanks. And tomorrow?"},
    ]


@pytest.mark.parametrize(
    ("producer", "first", "second"),
    [
        ("ollama", None, None),
        ("gemini", None, None),  # id-less calls, thought signatures ignored
        ("anthropic", "toolu_01A09q90qw90lq917835lq9", "toolu_01B18r81rx81mr826724mr8"),
        ("mistral", "Ab3dE6gH9", "Zy1xW4vU7"),
    ],
)
def test_history_from_producer_exact_body(
    server: MockLLMServer, producer: str, first: Any, second: Any
) -> None:
    server.enqueue("ollama", text="ok")
    make(server).generate(history_from(producer), tools=TOOLS)
    assert body(server)["messages"] == _expected_history(first, second)


# --- result mapping -----------------------------------------------------------------------


def test_tool_calls_result_with_the_servers_ids(server: MockLLMServer) -> None:
    """Ollama gives each native call an id (``call_`` + 8 characters, recording
    ollama/langchaingo@8d98658ae2a1__llms.ollama.TestCloudToolCall__i00); Zerda keeps it."""
    server.enqueue(
        "ollama",
        tool_calls=[
            {"name": "get_weather", "arguments": {"city": "Paris"}, "id": "call_abc123"},
            {"name": "get_time", "arguments": {"city": "Paris"}},
        ],
    )
    got = make(server).generate("hi", tools=TOOLS)
    made = got["tool_calls"][1]["id"]
    assert re.fullmatch(r"call_[a-z0-9]{8}", made)
    calls = [
        {"id": "call_abc123", "name": "get_weather", "arguments": {"city": "Paris"}},
        {"id": made, "name": "get_time", "arguments": {"city": "Paris"}},
    ]
    # The server says done_reason "stop" with calls: calls present means tool_use.
    assert got == result(None, calls, "tool_use")


def test_tool_calls_without_ids_from_an_older_server(server: MockLLMServer) -> None:
    """Ollama before tool-call ids sends none (and no function.index): the ids are None."""
    message = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"function": {"name": "get_time", "arguments": {"city": "Paris"}}}],
    }
    counts = {"prompt_eval_count": 10, "eval_count": 5}
    body = {"model": "m", "message": message, "done": True, "done_reason": "stop", **counts}
    server.enqueue_raw(200, json.dumps(body), provider="ollama")
    calls = [{"id": None, "name": "get_time", "arguments": {"city": "Paris"}}]
    assert make(server).generate("hi", tools=TOOLS) == result(None, calls, "tool_use")


def test_the_servers_ids_go_back_in_the_history(server: MockLLMServer) -> None:
    """The id Ollama gave a call is sent back on the call and on its result."""
    server.enqueue("ollama", tool_calls=[{"name": "get_time", "arguments": {"city": "Paris"}}])
    llm = make(server)
    first = llm.generate("hi", tools=TOOLS)
    call_id = first["tool_calls"][0]["id"]
    server.enqueue("ollama", text="09:00.")
    history = [
        {"role": "user", "content": "hi"},
        first["message"],
        {"role": "tool", "tool_call_id": call_id, "name": "get_time", "content": "09:00"},
    ]
    assert llm.generate(history, tools=TOOLS) == result("09:00.", [], "end_turn")
    assert server.last_request("ollama").body["messages"][1:] == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": call_id, "function": {"name": "get_time", "arguments": {"city": "Paris"}}}
            ],
        },
        {"role": "tool", "content": "09:00", "tool_name": "get_time", "tool_call_id": call_id},
    ]


@pytest.mark.parametrize(
    ("native", "stop"),
    [("stop", "end_turn"), ("length", "max_tokens"), ("unload", "other"), ("load", "other")],
)
def test_stop_reasons(server: MockLLMServer, native: str, stop: str) -> None:
    server.enqueue("ollama", text="t", native_stop_reason=native)
    assert make(server).generate("hi")["stop_reason"] == stop


def test_odd_arguments_are_kept(server: MockLLMServer) -> None:
    server.enqueue(
        "ollama",
        tool_calls=[
            {"name": "get_time", "arguments": "not json", "id": "call_1"},
            {"name": "get_time", "arguments": "", "id": "call_2"},
        ],
    )
    calls = make(server).generate("hi", tools=TOOLS)["tool_calls"]
    assert calls == [
        {"id": "call_1", "name": "get_time", "arguments": {"_raw": "not json"}},
        {"id": "call_2", "name": "get_time", "arguments": {}},
    ]


def test_thinking_is_not_content(server: MockLLMServer) -> None:
    raw = {
        "model": MODEL,
        "message": {"role": "assistant", "content": "4", "thinking": "2+2 is 4"},
        "done": True,
        "done_reason": "stop",
        "prompt_eval_count": 5,
        "eval_count": 9,
    }
    server.enqueue_raw(200, raw, {"content-type": "application/json"}, provider="ollama")
    assert make(server).generate("2+2?") == result(
        "4", [], "end_turn", {"input_tokens": 5, "output_tokens": 9}, reasoning="2+2 is 4"
    )


# --- recorded exchanges -------------------------------------------------------------------


def _recorded(streaming: bool) -> list[Any]:
    if not RECORDED.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason="shared fixtures absent"))]
    out = []
    for path in sorted(RECORDED.glob("*.json")):
        fx = json.loads(path.read_text())
        if fx["request"]["path"] == "/api/chat" and bool(fx.get("streaming")) == streaming:
            out.append(pytest.param(fx, id=path.stem))
    return out


def expected_stop(fx: dict[str, Any]) -> str:
    if fx["derived"]["tool_calls"]:
        return "tool_use"
    return provider._map_stop_reason(fx["derived"]["finish_reason"])


def expected_calls(fx: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"id": c["id"], "name": c["name"], "arguments": c["arguments"]}
        for c in fx["derived"]["tool_calls"]
    ]


@pytest.mark.parametrize("fx", _recorded(streaming=False))
def test_recorded_non_streamed(server: MockLLMServer, fx: dict[str, Any]) -> None:
    server.enqueue_recorded(fx, provider="ollama")
    derived = fx["derived"]
    out = make(server).generate(fx["request"]["body"]["messages"][0]["content"])
    if fx["response"]["status"] >= 400:
        expected_type = {400: "invalid_request", 404: "not_found"}.get(
            fx["response"]["status"], "server"
        )
        assert out["stop_reason"] == "error"
        assert out["error"]["type"] == expected_type
        assert out["error"]["message"] == derived["error"]
        assert out["error"]["status_code"] == fx["response"]["status"]
        return
    assert out["tool_calls"] == expected_calls(fx)
    assert out["content"] == (derived["text"] or None)
    assert out["stop_reason"] == expected_stop(fx)
    assert out["usage"] == derived["usage_norm"]
    assert out["reasoning"] == (derived["reasoning_text"] or None)


def test_recorded_tool_round_trip_body(server: MockLLMServer) -> None:
    """The recorded two-turn exchange, replayed through Zerda: Zerda's second request
    carries the recorded call back with its id, and the result pairs with it."""
    files = sorted(RECORDED.glob("*TestCloudToolCall__i0*.json")) if RECORDED.is_dir() else []
    if len(files) != 2:
        pytest.skip("shared fixtures absent")
    first, second = (json.loads(p.read_text()) for p in files)
    server.enqueue_recorded(first, provider="ollama")
    server.enqueue_recorded(second, provider="ollama")
    tool = first["request"]["body"]["tools"][0]["function"]
    llm = make(server)
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "What's the weather like in San Francisco?"}
    ]
    turn = llm.generate(history, tools=[tool])
    call = turn["tool_calls"][0]
    history += [
        turn["message"],
        {
            "role": "tool",
            "tool_call_id": call["id"],
            "name": call["name"],
            "content": {"temperature": 72, "condition": "sunny"},
        },
    ]
    final = llm.generate(history, tools=[tool])
    assert final["content"] == second["derived"]["text"]
    assert body(server)["messages"][1:] == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_mo1wm122",
                    "function": {
                        "name": "getWeather",
                        "arguments": {"location": "San Francisco, CA"},
                    },
                }
            ],
        },
        {
            "role": "tool",
            "content": '{"temperature": 72, "condition": "sunny"}',
            "tool_name": "getWeather",
            "tool_call_id": "call_mo1wm122",
        },
    ]


# --- faults and retries -------------------------------------------------------------------


def test_connection_refused(server: MockLLMServer) -> None:
    llm = OllamaInterface(MODEL, base_url="http://127.0.0.1:9", max_retries=0)
    out = llm.generate("hi")
    assert out["stop_reason"] == "error"
    assert (out["error"]["type"], out["error"]["retryable"]) == ("connection", True)


def test_error_in_a_200_body(server: MockLLMServer) -> None:
    server.enqueue_raw(
        200,
        {"error": "model runner crashed"},
        {"content-type": "application/json"},
        provider="ollama",
    )
    error = make(server).generate("hi")["error"]
    assert (error["type"], error["message"]) == ("server", "Ollama: model runner crashed")


# --- retry policy -------------------------------------------------------------------------


def _response_error(headers: dict[str, str]) -> ollama.ResponseError:
    """A ResponseError raised the way the SDK raises it: while handling httpx's error."""
    request = httpx.Request("POST", "http://127.0.0.1/api/chat")
    response = httpx.Response(429, headers=headers, request=request, text='{"error": "slow"}')
    try:
        try:
            response.raise_for_status()
        except httpx.HTTPStatusError as e:
            raise ollama.ResponseError(e.response.text, e.response.status_code) from None
    except ollama.ResponseError as exc:
        return exc
    raise AssertionError("unreachable")


def test_retry_after_headers_are_read_from_the_httpx_error_behind_the_sdk_one() -> None:
    assert provider._retry_after(_response_error({"retry-after": "0.25"})) == 0.25
    assert provider._retry_after(_response_error({"retry-after-ms": "120"})) == 0.12
    assert provider._retry_after(_response_error({})) is None


def test_retry_decision(server: MockLLMServer) -> None:
    llm = make(server, max_retries=2)
    assert llm._retry_delay(_response_error({"retry-after": "0.1"}), 0, 0.0) == 0.1
    assert llm._retry_delay(ollama.ResponseError("bad", 400), 0, 0.0) is None
    assert llm._retry_delay(ollama.ResponseError("conflict", 409), 0, 0.0) is not None
    assert llm._retry_delay(ollama.ResponseError("timeout", 408), 0, 0.0) is not None
    assert llm._retry_delay(httpx.ReadTimeout("slow"), 0, 0.0) is not None
    assert llm._retry_delay(ValueError("no"), 0, 0.0) is None
