"""Anthropic's server tools (DESIGN §18, issue 31) on the anthropic, anthropic-vertex and
anthropic-bedrock rows: the native request of each hosted tool, the refusals, scripted calls
and citations through MockLLMServer (generate and stream, sync and async), the recorded
server-tool exchanges, and the history going back to the same row (its native blocks) and to
another (as text)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from zerda.llm import hosted
from zerda.llm.providers import create_interface
from zerda.llm.wires.anthropic.server_tools import plain
from zerda.testing import MockLLMServer

FIXTURES = (
    Path(__file__).resolve().parents[4] / ".." / "shared" / "fixtures" / "recorded" / "anthropic"
)
MODELS = {
    "anthropic": "claude-sonnet-4-5",
    "anthropic-vertex": "claude-sonnet-4-5@20250929",
    "anthropic-bedrock": "anthropic.claude-sonnet-4-5-20250929-v1:0",
}
HI = [{"role": "user", "content": "hi"}]
WEATHER = {
    "name": "get_weather",
    "description": "Weather of a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}

# A scripted answer that ran one of each kind of server tool, and cites its text.
CALLS = [
    {
        "type": "web_search",
        "name": "web_search",
        "id": "srvtoolu_01search",
        "input": {"query": "zerda"},
        "output": "Zerda — https://zerda.example\nFennec — https://fennec.example",
    },
    {
        "type": "web_fetch",
        "name": "web_fetch",
        "id": "srvtoolu_01fetch",
        "input": {"url": "https://zerda.example"},
        "output": "Zerda — https://zerda.example",
    },
    {
        "type": "code_execution",
        "name": "bash_code_execution",
        "id": "srvtoolu_01bash",
        "input": {"command": "echo 4"},
        "output": "4",
    },
    {
        "type": "code_execution",
        "name": "text_editor_code_execution",
        "id": "srvtoolu_01edit",
        "input": {"command": "view", "path": "/tmp/a.txt"},
        "output": "file text",
    },
    {
        "type": "mcp",
        "name": "ask_question",
        "id": "mcptoolu_01ask",
        "input": {"question": "what?"},
        "output": "an answer",
    },
    {
        "type": "tool_search",
        "name": "tool_search_tool_bm25",
        "id": "srvtoolu_01find",
        "input": {"query": "weather"},
        "output": "get_weather",
    },
    {"type": "other", "name": "advisor", "id": "srvtoolu_01adv", "input": {}, "output": "ship it"},
]
TEXT = "Zerda is a fennec. It lives in the Sahara."
CITATIONS = [
    {"url": "https://zerda.example", "title": "Zerda", "text": "fennec fox", "start": 0, "end": 17},
    {"url": None, "title": "Atlas", "text": "Sahara desert", "start": 18, "end": 42},
]


def llm_for(server: MockLLMServer, row: str = "anthropic", **options: Any) -> Any:
    return create_interface(row, model=MODELS[row], **server.client_options(row), **options)


def done(events: list[dict[str, Any]]) -> dict[str, Any]:
    assert events[-1]["type"] == "done"
    result: dict[str, Any] = events[-1]["result"]
    return result


def request(llm: Any, tools: list[Any], **kwargs: Any) -> dict[str, Any]:
    native: dict[str, Any] = llm._native_request(HI, {"tools": tools, **kwargs})
    return native


def unified(call: dict[str, Any]) -> dict[str, Any]:
    return {k: call[k] for k in ("id", "type", "name", "input", "output")}


# --- the request ------------------------------------------------------------------------


def test_each_hosted_tool_in_its_native_shape(server: MockLLMServer) -> None:
    """Functions first, then each hosted tool in the caller's order, in the row's versions
    and the API's field names; the betas web fetch, code execution and MCP need."""
    tools = [
        WEATHER,
        hosted.web_search(
            max_uses=3,
            allowed_domains=["a.example"],
            user_location={"city": "Paris", "country": "FR", "timezone": "Europe/Paris"},
        ),
        hosted.web_fetch(
            max_uses=2, blocked_domains=["b.example"], max_content_tokens=500, citations=True
        ),
        hosted.code_execution(),
        hosted.native({"type": "web_search_20260209", "name": "web_search", "max_uses": 1}),
    ]
    native = request(llm_for(server), tools)
    assert native["tools"][1:] == [
        {
            "type": "web_search_20250305",
            "name": "web_search",
            "max_uses": 3,
            "allowed_domains": ["a.example"],
            "user_location": {
                "type": "approximate",
                "city": "Paris",
                "country": "FR",
                "timezone": "Europe/Paris",
            },
        },
        {
            "type": "web_fetch_20250910",
            "name": "web_fetch",
            "max_uses": 2,
            "blocked_domains": ["b.example"],
            "max_content_tokens": 500,
            "citations": {"enabled": True},
        },
        {"type": "code_execution_20250825", "name": "code_execution"},
        {"type": "web_search_20260209", "name": "web_search", "max_uses": 1},
    ]
    assert native["tools"][0]["name"] == "get_weather"
    assert native["extra_headers"] == {
        "anthropic-beta": "web-fetch-2025-09-10,code-execution-2025-08-25"
    }
    assert "extra_body" not in native


def test_a_hosted_tool_alone_needs_no_beta_and_keeps_tool_choice(server: MockLLMServer) -> None:
    native = request(llm_for(server), [hosted.web_search()], tool_choice="auto")
    assert native["tools"] == [{"type": "web_search_20250305", "name": "web_search"}]
    assert native["tool_choice"] == {"type": "auto"}
    assert "extra_headers" not in native


def test_mcp_server_in_mcp_servers_with_its_toolset_and_beta(server: MockLLMServer) -> None:
    """The MCP connector (mcp-client-2025-11-20): the server in mcp_servers, its bearer
    token as authorization_token, allowed_tools as a toolset enabling only them."""
    tool = hosted.mcp_server(
        url="https://mcp.example/mcp",
        name="docs",
        allowed_tools=["ask_question"],
        headers={"authorization": "Bearer tok-123"},
    )
    native = request(llm_for(server), [tool, hosted.mcp_server(url="https://b.example", name="b")])
    assert native["extra_body"] == {
        "mcp_servers": [
            {
                "type": "url",
                "url": "https://mcp.example/mcp",
                "name": "docs",
                "authorization_token": "tok-123",
            },
            {"type": "url", "url": "https://b.example", "name": "b"},
        ]
    }
    assert native["tools"] == [
        {
            "type": "mcp_toolset",
            "mcp_server_name": "docs",
            "default_config": {"enabled": False},
            "configs": {"ask_question": {"enabled": True}},
        },
        {"type": "mcp_toolset", "mcp_server_name": "b"},
    ]
    assert native["extra_headers"] == {"anthropic-beta": "mcp-client-2025-11-20"}


def test_mcp_first_connector_version_takes_tool_configuration() -> None:
    from zerda.llm._traits import Hosted
    from zerda.llm.wires.anthropic.server_tools import map_hosted

    tool = {"type": "mcp", "url": "https://m.example", "name": "m", "allowed_tools": ["a"]}
    traits = {"mcp": Hosted(native="mcp-client-2025-04-04")}
    assert map_hosted([tool], traits, frozenset()) == (
        [],
        [
            {
                "type": "url",
                "url": "https://m.example",
                "name": "m",
                "tool_configuration": {"enabled": True, "allowed_tools": ["a"]},
            }
        ],
        ["mcp-client-2025-04-04"],
    )


def test_request_on_the_wire_and_the_callers_betas_kept(server: MockLLMServer) -> None:
    """What reaches the server: the body's tools and mcp_servers, and one anthropic-beta
    header holding Zerda's betas and the caller's own (extra_headers)."""
    server.enqueue("anthropic", text="ok")
    tools = [hosted.web_fetch(), hosted.mcp_server(url="https://m.example/mcp", name="m")]
    result = llm_for(server).generate(
        "hi", tools=tools, extra_headers={"anthropic-beta": "context-1m-2025-08-07"}
    )
    assert result["content"] == "ok"
    assert result["server_tool_calls"] == [] and result["citations"] == []
    sent = server.last_request("anthropic")
    assert sent.body["mcp_servers"] == [
        {"type": "url", "url": "https://m.example/mcp", "name": "m"}
    ]
    assert [t["type"] for t in sent.body["tools"]] == ["web_fetch_20250910", "mcp_toolset"]
    assert sent.headers["anthropic-beta"] == (
        "web-fetch-2025-09-10,mcp-client-2025-11-20,context-1m-2025-08-07"
    )


def test_vertex_web_search_with_its_beta(server: MockLLMServer) -> None:
    server.enqueue("anthropic-vertex", text="ok")
    llm = llm_for(server, "anthropic-vertex")
    assert llm.generate("hi", tools=[hosted.web_search(max_uses=1)])["content"] == "ok"
    sent = server.last_request("anthropic-vertex")
    assert sent.body["tools"] == [
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 1}
    ]
    assert sent.headers["anthropic-beta"] == "web-search-2025-03-05"


def test_the_rows_hosted_traits() -> None:
    from zerda.llm import registry

    runs = {row: set(registry.get(row).traits.hosted) for row in MODELS}
    assert runs == {
        "anthropic": {"web_search", "web_fetch", "code_execution", "mcp"},
        "anthropic-vertex": {"web_search"},
        "anthropic-bedrock": set(),
    }


# --- refusals -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("row", "tool", "words"),
    [
        (
            "anthropic",
            hosted.file_search(vector_store_ids=["vs"]),
            "does not run the hosted tool 'file_search'",
        ),
        ("anthropic-bedrock", hosted.web_search(), "does not run the hosted tool 'web_search'"),
        ("anthropic-bedrock", hosted.mcp_server(url="https://m.example", name="m"), "'mcp'"),
        ("anthropic-vertex", hosted.web_fetch(), "does not run the hosted tool 'web_fetch'"),
        ("anthropic-vertex", hosted.code_execution(), "'code_execution'"),
        ("anthropic-vertex", hosted.mcp_server(url="https://m.example", name="m"), "'mcp'"),
        (
            "anthropic-vertex",
            hosted.web_search(user_location={"city": "Paris"}),
            "does not honour the option 'user_location'",
        ),
        (
            "anthropic",
            hosted.web_search(allowed_domains=["a.example"], blocked_domains=["b.example"]),
            "allowed_domains or blocked_domains, not both",
        ),
        ("anthropic", hosted.web_fetch(allowed_domains=[]), "at least one domain"),
    ],
)
def test_refused_before_sending(server: MockLLMServer, row: str, tool: Any, words: str) -> None:
    before = len(server.requests)
    result = llm_for(server, row).generate("hi", tools=[tool])
    assert result["stop_reason"] == "error"
    assert result["error"]["type"] == "invalid_request"
    assert words in result["error"]["message"]
    assert len(server.requests) == before  # nothing sent


def test_mcp_headers_other_than_a_bearer_token_refused_without_their_values(
    server: MockLLMServer,
) -> None:
    tool = hosted.mcp_server(
        url="https://m.example",
        name="m",
        headers={"Authorization": "Basic c2VjcmV0LXZhbHVl", "X-Api-Key": "secret-value-42"},
    )
    result = llm_for(server).generate("hi", tools=[tool])
    message = result["error"]["message"]
    assert result["error"]["type"] == "invalid_request"
    assert "refused header(s): Authorization (not Bearer), X-Api-Key" in message
    assert "secret-value-42" not in json.dumps(result) and "c2VjcmV0" not in json.dumps(result)


# --- the mock validates as the APIs do ------------------------------------------------------


@pytest.mark.parametrize(
    ("row", "tool", "extra", "words"),
    [
        (
            "anthropic",
            {"type": "web_search_20990101", "name": "web_search"},
            {},
            "Input tag 'web_search_20990101'",
        ),
        # web_fetch_20250910 only with its beta (sent here as a native tool, without it).
        (
            "anthropic",
            {"type": "web_fetch_20250910", "name": "web_fetch"},
            {},
            "Input tag 'web_fetch_20250910'",
        ),
        (
            "anthropic",
            {"type": "web_search_20250305", "name": "search"},
            {},
            "name: Input should be 'web_search'",
        ),
        (
            "anthropic",
            {"type": "web_search_20250305", "name": "web_search", "max_uses": 0},
            {},
            "max_uses",
        ),
        (
            "anthropic",
            {"type": "web_search_20250305", "name": "web_search", "blocked_domains": []},
            {},
            "Empty list of domains is ambiguous",
        ),
        (
            "anthropic",
            {"type": "mcp_toolset", "mcp_server_name": "m"},
            {
                "extra_body": {
                    "mcp_servers": [{"type": "url", "url": "https://m.example", "name": "m"}]
                }
            },
            "Input tag 'mcp_toolset'",
        ),
        (
            "anthropic-vertex",
            {"type": "web_search_20250305", "name": "web_search"},
            {},
            "Input tag",
        ),
        (
            "anthropic-vertex",
            {"type": "code_execution_20250825", "name": "code_execution"},
            {},
            "Input tag",
        ),
        (
            "anthropic-bedrock",
            {"type": "web_search_20250305", "name": "web_search"},
            {},
            "Input tag",
        ),
    ],
)
def test_mock_refuses_native_server_tools_as_the_api(
    server: MockLLMServer, row: str, tool: dict[str, Any], extra: dict[str, Any], words: str
) -> None:
    # A request naming its betas (recordings keep none: hosted_rules.lacks_beta).
    extra = {"extra_headers": {"anthropic-beta": "context-1m-2025-08-07"}, **extra}
    result = llm_for(server, row).generate("hi", tools=[hosted.native(tool)], **extra)
    assert result["error"]["type"] == "invalid_request"
    assert result["error"]["status_code"] == 400
    assert words in result["error"]["message"]


def test_mock_refuses_mcp_servers_without_the_beta(server: MockLLMServer) -> None:
    servers = [{"type": "url", "url": "https://m.example", "name": "m"}]
    beta = {"anthropic-beta": "context-1m-2025-08-07"}
    result = llm_for(server).generate("hi", extra_body={"mcp_servers": servers}, extra_headers=beta)
    assert result["error"]["message"] == "mcp_servers: Extra inputs are not permitted"


# --- scripted calls and citations -------------------------------------------------------------

EXPECTED_USAGE_REQUESTS = {"web_search": 1, "web_fetch": 1}


def scripted(server: MockLLMServer, row: str = "anthropic", **fields: Any) -> None:
    script = {"text": TEXT, "server_tool_calls": CALLS, "citations": CITATIONS, **fields}
    server.enqueue(row, **script)


def assert_scripted(result: dict[str, Any]) -> None:
    assert result["server_tool_calls"] == [unified(c) for c in CALLS]
    assert result["citations"] == CITATIONS
    assert result["content"] == TEXT
    assert result["message"]["server_tool_calls"] == result["server_tool_calls"]
    assert result["usage"]["server_tool_requests"] == EXPECTED_USAGE_REQUESTS
    for cited in result["citations"]:
        assert result["content"][cited["start"] : cited["end"]]  # a span of the content


@pytest.mark.parametrize("fast_path", [True, False])
def test_scripted_calls_and_citations_generate_and_stream(
    server: MockLLMServer, fast_path: bool
) -> None:
    llm = llm_for(server, fast_path=fast_path)
    scripted(server, reasoning="Search first.")
    generated = llm.generate("hi", tools=[hosted.web_search()])
    assert_scripted(generated)
    scripted(server, reasoning="Search first.", fragments=3)
    events = list(llm.stream("hi", tools=[hosted.web_search()]))
    streamed = done(events)
    assert streamed == generated
    # One event per call when it completes, one per citation when its text block ends.
    calls = [e["server_tool_call"] for e in events if e["type"] == "server_tool_call"]
    assert calls == generated["server_tool_calls"]
    cited = [e["citation"] for e in events if e["type"] == "citation"]
    assert cited == CITATIONS
    # The turn's blocks, thinking signed, kept to go back (DESIGN §18).
    content = generated["provider_data"]["anthropic"]["content"]
    assert [b["type"] for b in content][:3] == [
        "thinking",
        "server_tool_use",
        "web_search_tool_result",
    ]
    assert content[0]["signature"]


async def test_scripted_calls_async_as_sync(server: MockLLMServer) -> None:
    llm = llm_for(server)
    scripted(server)
    sync = llm.generate("hi", tools=[hosted.web_search()])
    scripted(server)
    generated = await llm.generate_async("hi", tools=[hosted.web_search()])
    scripted(server, fragments=2)
    events = [e async for e in llm.stream_async("hi", tools=[hosted.web_search()])]
    assert generated == sync == done(events)


def test_vertex_scripted_web_search(server: MockLLMServer) -> None:
    llm = llm_for(server, "anthropic-vertex")
    server.enqueue("anthropic-vertex", text=TEXT, server_tool_calls=CALLS[:1], citations=CITATIONS)
    result = llm.generate("hi", tools=[hosted.web_search()])
    assert result["server_tool_calls"] == [unified(CALLS[0])]
    assert result["citations"] == CITATIONS
    assert result["usage"]["server_tool_requests"] == {"web_search": 1}


def test_a_long_answer_read_from_its_stream_keeps_the_server_calls(server: MockLLMServer) -> None:
    """A max_tokens the SDK refuses without streaming (long_answers.py): the same result."""
    llm = llm_for(server)
    scripted(server)
    short = llm.generate("hi", tools=[hosted.web_search()], max_tokens=1000)
    scripted(server)
    long = llm.generate("hi", tools=[hosted.web_search()], max_tokens=60000)
    assert long == {**short, "cost": long["cost"]}


def test_pause_turn_is_other_and_the_turn_goes_back_to_continue(server: MockLLMServer) -> None:
    """stop_reason pause_turn (a long server-tool turn paused): "other"; the caller
    continues by sending the turn back as it is."""
    llm = llm_for(server)
    server.enqueue(
        "anthropic", text="Searching", server_tool_calls=CALLS[:1], native_stop_reason="pause_turn"
    )
    paused = llm.generate("hi", tools=[hosted.web_search()])
    assert paused["stop_reason"] == "other"
    server.enqueue("anthropic", text="Done.")
    llm.generate([*HI, paused["message"]], tools=[hosted.web_search()])
    sent = server.last_request("anthropic").body["messages"]
    assert sent[1] == {
        "role": "assistant",
        "content": paused["provider_data"]["anthropic"]["content"],
    }


# --- blocks Zerda does not know -----------------------------------------------------------------

UNKNOWN = {
    "type": "compaction",
    "content": "Earlier: the user asked about foxes.",
    "signature": "c2ln",
}
NATIVE_ANSWER = {
    "id": "msg_01unknown",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [UNKNOWN, {"type": "text", "text": "Foxes.", "citations": None}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 5, "output_tokens": 2},
}


def sse(events: list[dict[str, Any]]) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def stream_of(answer: dict[str, Any]) -> str:
    """The answer as a Messages stream: each block whole in its start event but text."""
    start = {**answer, "content": [], "stop_reason": None}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(answer["content"]):
        if block["type"] == "text":
            events.append(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                }
            )
            delta = {"type": "text_delta", "text": block["text"]}
            events.append({"type": "content_block_delta", "index": index, "delta": delta})
        else:
            events.append({"type": "content_block_start", "index": index, "content_block": block})
        events.append({"type": "content_block_stop", "index": index})
    delta = {"stop_reason": answer["stop_reason"], "stop_sequence": None}
    events.append({"type": "message_delta", "delta": delta, "usage": {"output_tokens": 2}})
    events.append({"type": "message_stop"})
    return sse(events)


@pytest.mark.parametrize("fast_path", [True, False])
def test_an_unknown_block_is_an_other_call_kept_never_dropped(
    server: MockLLMServer, fast_path: bool
) -> None:
    llm = llm_for(server, fast_path=fast_path)
    server.enqueue_raw(200, NATIVE_ANSWER, provider="anthropic")
    generated = llm.generate("hi")
    assert generated["server_tool_calls"] == [
        {
            "id": None,
            "type": "other",
            "name": "compaction",
            "input": {},
            "output": UNKNOWN["content"],
        }
    ]
    assert generated["provider_data"]["anthropic"]["content"] == [
        UNKNOWN,
        {"type": "text", "text": "Foxes."},
    ]
    server.enqueue_raw(
        200, stream_of(NATIVE_ANSWER), {"content-type": "text/event-stream"}, "anthropic"
    )
    assert done(list(llm.stream("hi"))) == generated


# --- recorded exchanges ----------------------------------------------------------------------------


def _server_tool_fixtures() -> list[Any]:
    files = sorted(FIXTURES.glob("*.json")) if FIXTURES.is_dir() else []
    chosen = [f for f in files if "server_tool" in json.loads(f.read_text())["features"]]
    if not chosen:
        return [pytest.param(None, marks=pytest.mark.skip(reason="shared/fixtures is absent"))]
    return [pytest.param(f, id=f.stem[-60:]) for f in chosen]


def answer_blocks(fixture: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorded answer's content blocks (a stream's assembled from its events)."""
    body = fixture["response"]["body"]
    if not fixture["streaming"]:
        blocks: list[dict[str, Any]] = body["content"]
        return blocks
    out: dict[int, dict[str, Any]] = {}
    for line in body.splitlines():
        if not line.startswith("data: "):
            continue
        event = json.loads(line[6:])
        if event["type"] == "content_block_start":
            out[event["index"]] = dict(event["content_block"])
        elif event["type"] == "content_block_delta":
            block, delta = out[event["index"]], event["delta"]
            if delta["type"] == "text_delta":
                block["text"] = block.get("text", "") + delta["text"]
            elif delta["type"] == "citations_delta":
                block.setdefault("citations", []).append(delta["citation"])
    return [out[i] for i in sorted(out)]


@pytest.mark.parametrize("path", _server_tool_fixtures())
def test_recorded_server_tool_answers(server: MockLLMServer, path: Path) -> None:
    """Each recorded server-tool answer, served verbatim: its server calls (ids and names
    as the recording lists them), citations over the content, the search and fetch counts,
    and the turn's native blocks kept when it used a server tool."""
    fixture = json.loads(path.read_text())
    llm = llm_for(server)
    server.enqueue_recorded("anthropic", fixture)
    if fixture["streaming"]:
        result = done(list(llm.stream("replay")))
    else:
        result = llm.generate("replay")
    derived = fixture["derived"]
    calls = result.get("server_tool_calls", [])
    if derived.get("server_tool_calls"):
        assert [(c["id"], c["name"]) for c in calls] == [
            (c["id"], c["name"]) for c in derived["server_tool_calls"]
        ]
    blocks = answer_blocks(fixture)
    hosted_blocks = [
        b for b in blocks if b["type"] not in ("text", "thinking", "redacted_thinking", "tool_use")
    ]
    assert bool(calls) == bool(hosted_blocks)
    for call in calls:
        assert call["type"] in (
            "web_search",
            "web_fetch",
            "code_execution",
            "mcp",
            "tool_search",
            "other",
        )
        if call["type"] == "web_search" and call["output"]:
            assert "https://" in call["output"]
        assert "encrypted" not in (call["output"] or "")
    citations = [c for b in blocks if b["type"] == "text" for c in b.get("citations") or []]
    assert len(result.get("citations", [])) == len(citations)
    for cited in result.get("citations", []):
        assert cited["url"] and result["content"][cited["start"] : cited["end"]].strip()
    counts = (
        (fixture["response"]["body"] if not fixture["streaming"] else {}).get("usage") or {}
    ).get("server_tool_use") or {}
    for key, value in counts.items():
        assert (
            result["usage"].get("server_tool_requests", {}).get(key.removesuffix("_requests"), 0)
            == value
        )
    if hosted_blocks:
        kept = result["provider_data"]["anthropic"]["content"]
        assert [b["type"] for b in kept] == [b["type"] for b in blocks]
        if not fixture["streaming"]:
            assert kept == [plain(b) for b in blocks]


# --- history: back to the same row, to another ------------------------------------------------


def test_round_trip_sends_the_turns_blocks_back_exactly(server: MockLLMServer) -> None:
    """The assistant turn goes back as its native blocks: thinking with its signature,
    server tool uses and results with ids and encrypted content, cited text blocks with
    their encrypted_index; its tool call as the message's, answered by the tool result."""
    llm = llm_for(server)
    scripted(
        server,
        reasoning="Think.",
        tool_calls=[{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "toolu_01w"}],
    )
    first = llm.generate("hi", tools=[WEATHER, hosted.web_search()])
    history = [
        *HI,
        first["message"],
        {"role": "tool", "tool_call_id": "toolu_01w", "content": "sunny"},
    ]
    server.enqueue("anthropic", text="Sunny.")
    assert llm.generate(history, tools=[WEATHER, hosted.web_search()])["content"] == "Sunny."
    sent = server.last_request("anthropic").body["messages"]
    native = first["provider_data"]["anthropic"]["content"]
    assert sent[1] == {"role": "assistant", "content": native}
    assert native[-1] == {
        "type": "tool_use",
        "id": "toolu_01w",
        "name": "get_weather",
        "input": {"city": "Paris"},
    }
    assert any(b.get("citations") for b in native) and native[0]["signature"]
    assert sent[2]["content"][0]["tool_use_id"] == "toolu_01w"


def test_recorded_advisor_turn_goes_back_as_the_api_took_it(server: MockLLMServer) -> None:
    """Recorded follow-up (…advisor_tool_message_replay__i01): the assistant turn the API
    took back is the blocks of the answer before it (…__i00), which Zerda sends."""
    first_path = (
        FIXTURES
        / "pydantic-ai__test_anthropic.test_anthropic_advisor_tool_message_replay__i00.json"
    )
    if not first_path.is_file():
        pytest.skip("shared/fixtures is absent")
    first = json.loads(first_path.read_text())
    follow_up = json.loads(Path(str(first_path).replace("__i00", "__i01")).read_text())
    llm = llm_for(server)
    server.enqueue_recorded("anthropic", first)
    answer = llm.generate("What's 2+2? Consult your advisor first.")
    server.enqueue("anthropic", text="5.")
    recorded = follow_up["request"]["body"]["messages"]
    tools = [hosted.native(t) for t in follow_up["request"]["body"]["tools"]]
    llm.generate(
        [*HI, answer["message"], {"role": "user", "content": "And what is that plus one?"}],
        tools=tools,
    )
    sent = server.last_request("anthropic").body["messages"]
    assert sent[1] == plain(recorded[1])


def test_recorded_in_flight_server_call_goes_back_beside_the_tool_call(
    server: MockLLMServer,
) -> None:
    """A turn whose server tool use has no result yet, beside a tool call
    (…in_flight_native_tool_call_history_is_accepted__i00: the API took it and answered
    with the result): Zerda sends it back as that recording's request holds it."""
    path = (
        FIXTURES
        / "pydantic-ai__anthropic.test_unpaired_native_tool_calls.test_in_flight_native_tool_call_history_is_accepted__i00.json"
    )
    if not path.is_file():
        pytest.skip("shared/fixtures is absent")
    fixture = json.loads(path.read_text())
    turn = fixture["request"]["body"]["messages"][1]
    answer = {**NATIVE_ANSWER, "content": turn["content"], "stop_reason": "tool_use"}
    llm = llm_for(server)
    server.enqueue_raw(200, answer, provider="anthropic")
    first = llm.generate("Look up the 10-year Treasury duration, then add 2 and 2.")
    assert first["server_tool_calls"] == [
        {
            "id": "srvtoolu_01EoSNE7k4dUJyGatASCV5qs",
            "type": "web_search",
            "name": "web_search",
            "input": {"query": "10-year Treasury modified duration"},
            "output": None,
        }
    ]
    server.enqueue_recorded("anthropic", fixture)
    call_id = first["tool_calls"][0]["id"]
    history = [*HI, first["message"], {"role": "tool", "tool_call_id": call_id, "content": "4"}]
    second = llm.generate(history, tools=[hosted.web_search()])
    assert second["server_tool_calls"][0]["id"] == "srvtoolu_01EoSNE7k4dUJyGatASCV5qs"
    assert server.last_request("anthropic").body["messages"][1] == turn


def test_another_row_gets_the_calls_as_text(server: MockLLMServer) -> None:
    """Claude on Bedrock runs no server tool: the turn goes there as its readable text."""
    llm = llm_for(server)
    scripted(server)
    first = llm.generate("hi", tools=[hosted.web_search()])
    bedrock = llm_for(server, "anthropic-bedrock")
    server.enqueue("anthropic-bedrock", text="ok")
    assert (
        bedrock.generate([*HI, first["message"], {"role": "user", "content": "more"}])["content"]
        == "ok"
    )
    sent = server.last_request("anthropic-bedrock").body["messages"][1]
    assert sent["role"] == "assistant" and isinstance(sent["content"], str)
    assert sent["content"].startswith(
        '[web_search: web_search {"query": "zerda"}]\nZerda — https://zerda.example'
    )
    assert sent["content"].endswith(TEXT)


def test_vertex_takes_back_a_web_search_turn_and_gets_other_kinds_as_text(
    server: MockLLMServer,
) -> None:
    """A row replays the blocks of the server tools it runs (web search on Vertex AI), and
    gets a turn that used others (code execution) as text."""
    llm = llm_for(server)
    server.enqueue("anthropic", text=TEXT, server_tool_calls=CALLS[:1])
    searched = llm.generate("hi", tools=[hosted.web_search()])
    server.enqueue("anthropic", text=TEXT, server_tool_calls=CALLS[2:3])
    ran = llm.generate("hi", tools=[hosted.code_execution()])
    vertex = llm_for(server, "anthropic-vertex")
    for answer, native in ((searched, True), (ran, False)):
        server.enqueue("anthropic-vertex", text="ok")
        vertex.generate([*HI, answer["message"], {"role": "user", "content": "more"}])
        sent = server.last_request("anthropic-vertex").body["messages"][1]["content"]
        if native:
            assert sent == answer["provider_data"]["anthropic"]["content"]
        else:
            assert (
                sent
                == f'[code_execution: bash_code_execution {{"command": "echo 4"}}]\n4\n\n{TEXT}'
            )


@pytest.mark.parametrize("fast_path", [True, False])
def test_include_raw_is_the_answers_body(server: MockLLMServer, fast_path: bool) -> None:
    server.enqueue_raw(200, NATIVE_ANSWER, provider="anthropic")
    result = llm_for(server, fast_path=fast_path).generate("hi", include_raw=True)
    assert result["raw"]["content"][0] == UNKNOWN
    assert result["raw"]["id"] == NATIVE_ANSWER["id"]


def test_a_history_sending_back_beta_blocks_sends_their_betas(server: MockLLMServer) -> None:
    """An MCP call's or a web fetch's blocks in a request need their beta as the tool does:
    sent back without the tool declared again, the betas come along; a web search's (no
    beta) bring none."""
    llm = llm_for(server)
    server.enqueue("anthropic", text=TEXT, server_tool_calls=[CALLS[4], CALLS[1]])
    mcp = llm.generate("hi", tools=[hosted.web_fetch()])
    server.enqueue("anthropic", text=TEXT, server_tool_calls=CALLS[:1])
    searched = llm.generate("hi", tools=[hosted.web_search()])
    server.enqueue("anthropic", text="ok")
    llm.generate([*HI, mcp["message"], {"role": "user", "content": "more"}])
    sent = server.last_request("anthropic")
    assert sent.headers["anthropic-beta"] == "mcp-client-2025-11-20,web-fetch-2025-09-10"
    assert [b["type"] for b in sent.body["messages"][1]["content"]][:2] == [
        "mcp_tool_use",
        "mcp_tool_result",
    ]
    server.enqueue("anthropic", text="ok")
    llm.generate([*HI, searched["message"], {"role": "user", "content": "more"}])
    assert "anthropic-beta" not in server.last_request("anthropic").headers


@pytest.mark.parametrize("fast_path", [True, False])
def test_blocks_with_odd_ids_pair_with_nothing_and_break_nothing(
    server: MockLLMServer, fast_path: bool
) -> None:
    """Ids that are not strings (a broken answer) pair no use with a result: both listed."""
    use = {"type": "server_tool_use", "id": ["x"], "name": "web_search", "input": {"q": 1}}
    result = {"type": "web_search_tool_result", "tool_use_id": {"a": 1}, "content": "oops"}
    answer = {**NATIVE_ANSWER, "content": [use, result, {"type": "text", "text": "ok"}]}
    llm = llm_for(server, fast_path=fast_path)
    server.enqueue_raw(200, answer, provider="anthropic")
    generated = llm.generate("hi")
    assert generated["server_tool_calls"] == [
        {"id": None, "type": "web_search", "name": "web_search", "input": {"q": 1}, "output": None},
        {"id": None, "type": "web_search", "name": "web_search", "input": {}, "output": "oops"},
    ]
    server.enqueue_raw(200, stream_of(answer), {"content-type": "text/event-stream"}, "anthropic")
    assert done(list(llm.stream("hi")))["server_tool_calls"] == generated["server_tool_calls"]


@pytest.mark.parametrize(
    ("model", "version"),
    [
        ("claude-sonnet-4-6", "web_search_20260209"),
        ("claude-opus-4-6", "web_search_20260209"),
        ("claude-sonnet-4-5", "web_search_20250305"),
        ("claude-haiku-4-5", "web_search_20250305"),
        ("claude-opus-4-20250514", "web_search_20250305"),
    ],
)
def test_web_search_goes_in_the_version_the_model_takes(model: str, version: str) -> None:
    from zerda.llm import create_interface, hosted

    llm = create_interface("anthropic", model=model, api_key="k")
    body = llm._native_request("hi", {"tools": [hosted.web_search(max_uses=2)]})
    assert body["tools"] == [{"type": version, "name": "web_search", "max_uses": 2}]


def test_include_raw_on_a_long_answer_is_the_events_it_was_read_from(
    server: MockLLMServer,
) -> None:
    """A long answer (read from its stream, long_answers.py): raw is the list of its
    events as JSON, as a stream's is, never an internal object."""
    llm = llm_for(server)
    scripted(server)
    result = llm.generate("hi", tools=[hosted.web_search()], max_tokens=60000, include_raw=True)
    kinds = [event["type"] for event in result["raw"]]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    assert "content_block_start" in kinds
