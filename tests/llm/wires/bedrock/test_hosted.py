"""Bedrock Converse's hosted tools (DESIGN §18): Nova's system tools in ``toolConfig``, the
``server_tool_use`` / ``toolResult`` / ``citationsContent`` blocks of an answer read into
``server_tool_calls`` and ``citations`` the same way from generate and stream, kept in
``provider_data["bedrock"]["content"]`` and sent back as they came; the mock's rendering and
validation; the recorded code-interpreter exchanges."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from zerda.llm.providers import create_interface
from zerda.testing import MockLLMServer
from zerda.testing._eventstream import encode_event

pytest.importorskip("boto3")

NOVA2 = "us.amazon.nova-2-lite-v1:0"
RECORDED = (
    Path(__file__).resolve().parents[4] / ".." / "shared" / "fixtures" / "recorded" / "bedrock"
)
ASK = [{"role": "user", "content": "What is new in Ruby?"}]


def nova(server: MockLLMServer, model: str = NOVA2, **options: Any) -> Any:
    return create_interface(
        "bedrock", model, **server.client_options("bedrock"), max_retries=0, **options
    )


def sent(server: MockLLMServer) -> dict[str, Any]:
    return server.last_request("bedrock").body


def done(events: list[dict[str, Any]]) -> dict[str, Any]:
    assert events[-1]["type"] == "done", events[-1]
    return events[-1]["result"]


# --- request ---------------------------------------------------------------------------------


def test_each_hosted_type_is_a_system_tool_after_the_functions(server: MockLLMServer) -> None:
    fn = {"name": "lookup", "description": "d", "parameters": {"type": "object"}}
    server.enqueue("bedrock", text="ok")
    nova(server).generate(
        ASK,
        tools=[{"type": "web_search"}, fn, {"type": "code_execution"}],
        tool_choice="required",
    )
    assert sent(server)["toolConfig"] == {
        "tools": [
            {
                "toolSpec": {
                    "name": "lookup",
                    "description": "d",
                    "inputSchema": {"json": {"type": "object"}},
                }
            },
            {"systemTool": {"name": "nova_grounding"}},
            {"systemTool": {"name": "nova_code_interpreter"}},
        ],
        "toolChoice": {"any": {}},
    }


def test_hosted_tools_alone_and_native_passthrough(server: MockLLMServer) -> None:
    native = {"systemTool": {"name": "nova_grounding"}}
    server.enqueue("bedrock", text="ok")
    nova(server, "us.amazon.nova-premier-v1:0").generate(
        ASK, tools=[{"type": "native", "tool": native}, {"type": "web_search"}]
    )
    assert sent(server)["toolConfig"] == {"tools": [native, native]}


def test_the_cache_point_follows_every_tool(server: MockLLMServer) -> None:
    fn = {"name": "lookup", "parameters": {"type": "object"}}
    server.enqueue("bedrock", text="ok")
    nova(server).generate(ASK, tools=[fn, {"type": "code_execution"}], cache=True)
    assert sent(server)["toolConfig"]["tools"][1:] == [
        {"systemTool": {"name": "nova_code_interpreter"}},
        {"cachePoint": {"type": "default"}},
    ]


def test_the_request_dicts_are_not_changed(server: MockLLMServer) -> None:
    tools = [{"type": "web_search"}, {"type": "native", "tool": {"systemTool": {"name": "x"}}}]
    before = json.dumps(tools)
    server.enqueue("bedrock", text="ok")
    nova(server).generate(ASK, tools=tools)
    assert json.dumps(tools) == before


@pytest.mark.parametrize(
    ("model", "tool", "says"),
    [
        (NOVA2, {"type": "web_search", "max_uses": 2}, "does not honour the option 'max_uses'"),
        (NOVA2, {"type": "web_search", "allowed_domains": ["a.com"]}, "'allowed_domains'"),
        (NOVA2, {"type": "file_search", "vector_store_ids": ["vs"]}, "does not run the hosted"),
        (NOVA2, {"type": "web_fetch"}, "does not run the hosted tool 'web_fetch'"),
        (NOVA2, {"type": "mcp", "url": "https://m.example", "name": "m"}, "'mcp'"),
        ("us.amazon.nova-pro-v1:0", {"type": "web_search"}, "only models matching"),
        ("anthropic.claude-sonnet-4-5-20250929-v1:0", {"type": "web_search"}, "only models"),
        ("us.amazon.nova-premier-v1:0", {"type": "code_execution"}, "only models matching"),
    ],
)
def test_what_converse_does_not_run_is_refused_before_sending(
    server: MockLLMServer, model: str, tool: dict[str, Any], says: str
) -> None:
    count = len(server.requests_for("bedrock"))
    error = nova(server, model).generate(ASK, tools=[tool])["error"]
    assert error["type"] == "invalid_request"
    assert says in error["message"]
    assert len(server.requests_for("bedrock")) == count


# --- scripted calls and citations ------------------------------------------------------------

TEXT = "Ruby 3.4 is out. It is fast. The end."
CALLS = [
    {"id": "tooluse_s1", "type": "web_search", "name": "nova_grounding",
     "input": {"query": "ruby"}, "output": "[HIDDEN]"},
    {"id": "tooluse_c1", "type": "code_execution", "name": "nova_code_interpreter",
     "input": {"snippet": "1+1"}, "output": "2"},
]  # fmt: skip
CITATIONS = [
    {"url": "https://ruby-lang.org/news", "title": "Ruby news", "text": "3.4 released",
     "start": 0, "end": 16},
    {"url": "https://bench.example/ruby", "title": None, "text": None, "start": 17, "end": 28},
]  # fmt: skip
HOSTED = [{"type": "web_search"}, {"type": "code_execution"}]


def _script(server: MockLLMServer, fragments: int = 1) -> None:
    server.enqueue(
        "bedrock", text=TEXT, server_tool_calls=CALLS, citations=CITATIONS, fragments=fragments
    )


async def test_scripted_calls_and_citations_round_trip_generate_stream_sync_async(
    server: MockLLMServer,
) -> None:
    llm = nova(server)
    results, streams = [], []
    _script(server)
    results.append(llm.generate(ASK, tools=HOSTED))
    _script(server)
    results.append(await llm.generate_async(ASK, tools=HOSTED))
    _script(server, fragments=3)
    streams.append(list(llm.stream(ASK, tools=HOSTED)))
    _script(server, fragments=3)
    streams.append([e async for e in llm.stream_async(ASK, tools=HOSTED)])
    await llm.aclose()
    first = results[0]
    assert first["content"] == TEXT
    assert first["server_tool_calls"] == CALLS
    assert first["citations"] == CITATIONS
    assert first["message"]["server_tool_calls"] == CALLS
    assert first["tool_calls"] == []
    assert [TEXT[c["start"] : c["end"]] for c in first["citations"]] == [
        "Ruby 3.4 is out.",
        "It is fast.",
    ]
    for other in [results[1], *map(done, streams)]:
        assert other == first
    hosted_events = [e for e in streams[0] if e["type"] in ("server_tool_call", "citation")]
    assert hosted_events == [
        *({"type": "server_tool_call", "server_tool_call": c} for c in CALLS),
        *({"type": "citation", "citation": c} for c in CITATIONS),
    ]
    assert streams[0] == streams[1]


def test_the_answer_blocks_are_kept_and_sent_back_as_they_came(server: MockLLMServer) -> None:
    llm = nova(server)
    _script(server)
    answer = llm.generate(ASK, tools=HOSTED)
    kept = answer["provider_data"]["bedrock"]["content"]
    assert [next(iter(b)) for b in kept] == [
        "toolUse", "toolResult", "toolUse", "toolResult",
        "citationsContent", "text", "citationsContent", "text",
    ]  # fmt: skip
    server.enqueue("bedrock", text="more")
    llm.generate([*ASK, answer["message"], {"role": "user", "content": "Go on"}])
    body = sent(server)
    # Sent back as kept, but the blank text block between the two cited spans (Converse
    # refuses blank text blocks in a request).
    assert body["messages"][1] == {
        "role": "assistant",
        "content": [b for b in kept if b != {"text": " "}],
    }
    # No tools on this turn: the system tools the history called are declared.
    assert body["toolConfig"] == {
        "tools": [
            {"systemTool": {"name": "nova_grounding"}},
            {"systemTool": {"name": "nova_code_interpreter"}},
        ]
    }


def test_a_hosted_answer_continues_on_another_row_as_text(server: MockLLMServer) -> None:
    _script(server)
    answer = nova(server).generate(ASK, tools=HOSTED)
    other = create_interface("openai", "gpt-4o", **server.client_options("openai"), max_retries=0)
    server.enqueue("openai", text="fine")
    result = other.generate([*ASK, answer["message"], {"role": "user", "content": "Go on"}])
    assert result["content"] == "fine"
    assistant = server.last_request("openai").body["messages"][1]
    assert assistant["role"] == "assistant"
    assert '[web_search: nova_grounding {"query": "ruby"}]\n[HIDDEN]' in assistant["content"]
    assert '[code_execution: nova_code_interpreter {"snippet": "1+1"}]\n2' in assistant["content"]
    assert assistant["content"].endswith(TEXT)


def test_a_nova_answer_goes_to_claude_on_the_row_as_text(server: MockLLMServer) -> None:
    _script(server)
    answer = nova(server).generate(ASK, tools=HOSTED)
    claude = nova(server, "anthropic.claude-sonnet-4-5-20250929-v1:0")
    server.enqueue("bedrock", text="fine")
    claude.generate([*ASK, answer["message"], {"role": "user", "content": "Go on"}])
    body = sent(server)
    blocks = body["messages"][1]["content"]
    assert len(blocks) == 1 and blocks[0]["text"].endswith(TEXT)
    assert "[web_search: nova_grounding" in blocks[0]["text"]
    assert "toolConfig" not in body


def test_fast_path_off_gives_the_same(server: MockLLMServer) -> None:
    outcomes = []
    for fast in (True, False):
        llm = nova(server, fast_path=fast)
        _script(server)
        result = llm.generate(ASK, tools=HOSTED)
        _script(server, fragments=2)
        outcomes.append((result, list(llm.stream(ASK, tools=HOSTED))))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0] == done(outcomes[0][1])


def test_declared_hosted_tools_and_no_call_give_empty_lists(server: MockLLMServer) -> None:
    server.enqueue("bedrock", text="plain")
    result = nova(server).generate(ASK, tools=HOSTED)
    assert (result["server_tool_calls"], result["citations"]) == ([], [])
    assert "provider_data" not in result
    server.enqueue("bedrock", text="plain")
    assert "server_tool_calls" not in nova(server).generate(ASK)


def test_include_raw_is_the_body_bedrock_sent(server: MockLLMServer) -> None:
    _script(server)
    result = nova(server).generate(ASK, tools=HOSTED, include_raw=True)
    raw = result["raw"]
    assert "ResponseMetadata" not in raw
    assert raw["output"]["message"]["content"][0]["toolUse"]["type"] == "server_tool_use"
    assert raw["stopReason"] == "end_turn"


# --- answers the mock does not script: hand-written native bodies ------------------------------


def _json_answer(server: MockLLMServer, content: list[dict[str, Any]]) -> None:
    body = {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 5, "outputTokens": 7, "totalTokens": 12},
        "metrics": {"latencyMs": 1},
    }
    server.enqueue_recorded(
        "bedrock", {"response": {"status": 200, "body": body, "body_encoding": "json"}}
    )


def _stream_answer(server: MockLLMServer, events: list[tuple[str, dict[str, Any]]]) -> None:
    events = [
        ("messageStart", {"role": "assistant"}),
        *events,
        ("messageStop", {"stopReason": "end_turn"}),
        ("metadata", {"usage": {"inputTokens": 5, "outputTokens": 7, "totalTokens": 12},
                      "metrics": {"latencyMs": 1}}),
    ]  # fmt: skip
    data = b"".join(encode_event(kind, payload) for kind, payload in events)
    response = {
        "status": 200,
        "headers": {"content-type": "application/vnd.amazon.eventstream"},
        "body": base64.b64encode(data).decode("ascii"),
        "body_encoding": "base64",
    }
    server.enqueue_recorded("bedrock", {"response": response, "streaming": True})


# Nova 2's web grounding, as captured: a grounding call whose result is hidden, then text
# blocks each followed by a citationsContent block with no content of its own.
GROUNDED = [
    {"toolUse": {"toolUseId": "t1", "name": "nova_grounding", "input": {"query": "q"},
                 "type": "server_tool_use"}},
    {"toolResult": {"toolUseId": "t1", "content": [{"text": "[HIDDEN]"}], "status": "success",
                    "type": "nova_grounding_result"}},
    {"text": "Ruby 4.0 is the latest"},
    {"citationsContent": {"citations": [
        {"location": {"web": {"url": "https://ruby-lang.org", "domain": "ruby-lang.org"}}}]}},
    {"text": ", released in December"},
    {"citationsContent": {"citations": [
        {"location": {"web": {"url": "https://a.example/1", "domain": "a.example"}}},
        {"title": "B", "sourceContent": [{"text": "Dec 25"}],
         "location": {"web": {"url": "https://b.example/2", "domain": "b.example"}}}]}},
    {"text": "."},
]  # fmt: skip
GROUNDED_EVENTS: list[tuple[str, dict[str, Any]]] = [
    ("contentBlockStart", {"contentBlockIndex": 0, "start": {"toolUse": {
        "toolUseId": "t1", "name": "nova_grounding", "type": "server_tool_use"}}}),
    ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"query":'}}}),
    ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '"q"}'}}}),
    ("contentBlockStop", {"contentBlockIndex": 0}),
    ("contentBlockStart", {"contentBlockIndex": 1, "start": {"toolResult": {
        "toolUseId": "t1", "type": "nova_grounding_result", "status": "success"}}}),
    ("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolResult": [{"text": "[HIDDEN]"}]}}),
    ("contentBlockStop", {"contentBlockIndex": 1}),
    ("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"text": "Ruby 4.0 "}}),
    ("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"text": "is the latest"}}),
    ("contentBlockStop", {"contentBlockIndex": 2}),
    ("contentBlockDelta", {"contentBlockIndex": 3, "delta": {"citation": {
        "location": {"web": {"url": "https://ruby-lang.org", "domain": "ruby-lang.org"}}}}}),
    ("contentBlockStop", {"contentBlockIndex": 3}),
    ("contentBlockDelta", {"contentBlockIndex": 4, "delta": {"text": ", released in December"}}),
    ("contentBlockStop", {"contentBlockIndex": 4}),
    ("contentBlockDelta", {"contentBlockIndex": 5, "delta": {"citation": {
        "location": {"web": {"url": "https://a.example/1", "domain": "a.example"}}}}}),
    ("contentBlockDelta", {"contentBlockIndex": 5, "delta": {"citation": {
        "title": "B", "location": {"web": {"url": "https://b.example/2", "domain": "b.example"}}}}}),
    ("contentBlockDelta", {"contentBlockIndex": 5, "delta": {"citation": {
        "sourceContent": [{"text": "Dec 25"}]}}}),
    ("contentBlockStop", {"contentBlockIndex": 5}),
    ("contentBlockDelta", {"contentBlockIndex": 6, "delta": {"text": "."}}),
    ("contentBlockStop", {"contentBlockIndex": 6}),
]  # fmt: skip


def test_content_less_citations_span_the_text_before_them(server: MockLLMServer) -> None:
    llm = nova(server)
    _json_answer(server, GROUNDED)
    result = llm.generate(ASK)
    text = "Ruby 4.0 is the latest, released in December."
    assert result["content"] == text
    assert result["server_tool_calls"] == [
        {"id": "t1", "type": "web_search", "name": "nova_grounding", "input": {"query": "q"},
         "output": "[HIDDEN]"},
    ]  # fmt: skip
    assert result["citations"] == [
        {"url": "https://ruby-lang.org", "title": None, "text": None, "start": 0, "end": 22},
        {"url": "https://a.example/1", "title": None, "text": None, "start": 22, "end": 44},
        {"url": "https://b.example/2", "title": "B", "text": "Dec 25", "start": 22, "end": 44},
    ]
    assert result["provider_data"] == {"bedrock": {"content": GROUNDED}}
    _stream_answer(server, GROUNDED_EVENTS)
    events = list(llm.stream(ASK))
    assert done(events) == result
    assert [e["type"] for e in events if e["type"] not in ("text", "done")] == [
        "server_tool_call",
        "citation",
        "citation",
        "citation",
    ]


def test_generated_content_citations_and_document_locations(server: MockLLMServer) -> None:
    cited = {
        "citationsContent": {
            "content": [{"text": "Paris is the capital."}],
            "citations": [
                {"title": "Atlas", "sourceContent": [{"text": "capital: Paris"}],
                 "location": {"documentChar": {"documentIndex": 0, "start": 3, "end": 17}}},
                {"source": "https://s.example/r", "location": {
                    "searchResultLocation": {"searchResultIndex": 0, "start": 0, "end": 1}}},
            ],
        }
    }  # fmt: skip
    _json_answer(server, [{"text": "Yes. "}, cited])
    result = nova(server).generate(ASK)
    assert result["content"] == "Yes. Paris is the capital."
    assert result["citations"] == [
        {"url": None, "title": "Atlas", "text": "capital: Paris", "start": 5, "end": 26},
        {"url": "https://s.example/r", "title": None, "text": None, "start": 5, "end": 26},
    ]
    assert "server_tool_calls" not in result
    assert result["provider_data"]["bedrock"]["content"] == [{"text": "Yes. "}, cited]


def test_an_unknown_block_is_kept_and_listed_as_other(server: MockLLMServer) -> None:
    # botocore reads a union member its model lacks as SDK_UNKNOWN_MEMBER (its name).
    _json_answer(server, [{"text": "Hi"}, {"futureBlock": {"x": 1}}])
    result = nova(server).generate(ASK)
    assert result["content"] == "Hi"
    assert result["server_tool_calls"] == [
        {"id": None, "type": "other", "name": "futureBlock", "input": {"name": "futureBlock"},
         "output": None}
    ]  # fmt: skip
    kept = result["provider_data"]["bedrock"]["content"]
    assert kept == [{"text": "Hi"}, {"SDK_UNKNOWN_MEMBER": {"name": "futureBlock"}}]
    server.enqueue("bedrock", text="ok")
    nova(server).generate([*ASK, result["message"], {"role": "user", "content": "again"}])
    # What botocore cannot send is left out of the replay; the rest goes back.
    assert sent(server)["messages"][1]["content"] == [{"text": "Hi"}]
    # A stream's unknown block (its contentBlockStart) and unknown delta: the same.
    _stream_answer(
        server,
        [
            ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hi"}}),
            ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"futureDelta": {"x": 1}}}),
            ("contentBlockStop", {"contentBlockIndex": 0}),
            ("contentBlockStart", {"contentBlockIndex": 1, "start": {"futureBlock": {"x": 1}}}),
            ("contentBlockStop", {"contentBlockIndex": 1}),
        ],
    )
    assert done(list(nova(server).stream(ASK))) == result


def test_reasoning_keeps_its_place_among_the_replayed_blocks(server: MockLLMServer) -> None:
    signed = {"reasoningText": {"text": "think", "signature": "c2ln"}}
    content = [{"reasoningContent": signed}, *GROUNDED[:3], GROUNDED[3]]
    _json_answer(server, content)
    llm = nova(server)
    result = llm.generate(ASK)
    assert result["reasoning"] == "think"
    assert result["provider_data"]["bedrock"] == {"reasoning": [signed], "content": content}
    server.enqueue("bedrock", text="ok")
    llm.generate([*ASK, result["message"], {"role": "user", "content": "again"}])
    assert sent(server)["messages"][1]["content"] == content


def test_a_server_call_without_its_result_is_listed_without_output(
    server: MockLLMServer,
) -> None:
    _json_answer(server, [GROUNDED[0], {"text": "x"}])
    result = nova(server).generate(ASK)
    assert result["server_tool_calls"][0]["output"] is None
    _stream_answer(server, [*GROUNDED_EVENTS[:4], *GROUNDED_EVENTS[-2:]])
    streamed = done(list(nova(server).stream(ASK)))
    assert streamed["server_tool_calls"] == result["server_tool_calls"]
    assert streamed["content"] == "."


# --- mock validation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "message"),
    [
        ({"systemTool": {}}, "Value null at 'toolConfig.tools.1.member.systemTool.name'"),
        ({"systemTool": {"name": "no spaces"}}, "regular expression pattern"),
    ],
)
def test_the_mock_refuses_a_malformed_system_tool(
    server: MockLLMServer, tool: dict[str, Any], message: str
) -> None:
    # botocore's own validator would refuse the missing name before sending: off here.
    from botocore.config import Config

    llm = nova(server, config=Config(parameter_validation=False), fast_path=False)
    error = llm.generate(ASK, tools=[{"type": "native", "tool": tool}])["error"]
    assert (error["type"], error["status_code"]) == ("invalid_request", 400)
    assert message in error["message"]


# --- the recorded code-interpreter exchanges ---------------------------------------------------


def _recorded(name: str) -> dict[str, Any]:
    path = RECORDED / f"pydantic-ai__test_bedrock.{name}.json"
    if not path.exists():
        pytest.skip(f"{RECORDED} is absent")
    return json.loads(path.read_text())


def _server_uses(fixture: dict[str, Any]) -> list[dict[str, Any]]:
    """The recording's server_tool_use calls (its derived.server_tool_calls is empty: the
    extraction lists them among derived.tool_calls)."""
    derived = fixture["derived"]
    assert derived["server_tool_calls"] == []
    return [c for c in derived["tool_calls"] if c["name"] == "nova_code_interpreter"]


@pytest.mark.parametrize(
    "name",
    [
        "test_bedrock_model_with_code_execution_tool__i00",
        "test_bedrock_model_with_code_execution_tool__i01",
        "test_bedrock_model_code_execution_tool_stream__i00",
    ],
)
def test_recorded_code_interpreter_answers(server: MockLLMServer, name: str) -> None:
    fixture = _recorded(name)
    llm = nova(server, unquote(fixture["request"]["path"].split("/")[2]))
    server.enqueue_recorded("bedrock", fixture)
    if fixture["streaming"]:
        events = list(llm.stream(ASK))
        result = done(events)
        calls = [e for e in events if e["type"] == "server_tool_call"]
        assert [e["server_tool_call"] for e in calls] == result["server_tool_calls"]
    else:
        result = llm.generate(ASK)
    uses = _server_uses(fixture)
    assert [(c["id"], c["name"]) for c in result["server_tool_calls"]] == [
        (u["id"], u["name"]) for u in uses
    ]
    for call, use in zip(result["server_tool_calls"], uses, strict=True):
        arguments = use["arguments"]
        assert call["input"] == (json.loads(arguments) if isinstance(arguments, str) else arguments)
        assert call["type"] == "code_execution"
    expected_output = {"__i00": "7006652", "__i01": "14013304"}[name[-5:]]
    assert result["server_tool_calls"][0]["output"] == expected_output
    functions = [c for c in fixture["derived"]["tool_calls"] if c not in uses]
    assert [(c["id"], c["name"]) for c in result["tool_calls"]] == [
        (c["id"], c["name"]) for c in functions
    ]


def test_the_recorded_follow_up_sends_what_bedrock_accepted(server: MockLLMServer) -> None:
    first = _recorded("test_bedrock_model_with_code_execution_tool__i00")
    follow = _recorded("test_bedrock_model_with_code_execution_tool__i01")
    llm = nova(server, NOVA2)
    server.enqueue_recorded("bedrock", first)
    fn = {
        "name": "final_result",
        "description": "The final response which ends this conversation",
        "parameters": first["request"]["body"]["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"][
            "json"
        ],
    }
    ask = [{"role": "user", "content": "What is 1234 * 5678?"}]
    answer = llm.generate(
        ask, system="You are a helpful chatbot.", tools=[fn, {"type": "code_execution"}]
    )
    call = answer["tool_calls"][0]
    history = [
        *ask,
        answer["message"],
        {"role": "tool", "tool_call_id": call["id"], "content": "Final result processed."},
        {"role": "user", "content": "Now multiply that by 2"},
    ]
    server.enqueue_recorded("bedrock", follow)
    second = llm.generate(
        history, system="You are a helpful chatbot.", tools=[fn, {"type": "code_execution"}],
        tool_choice="required",
    )  # fmt: skip
    recorded = follow["request"]["body"]
    body = sent(server)
    # The assistant turn goes back block for block as pydantic-ai sent it (and Bedrock took).
    assert body["messages"][1] == recorded["messages"][1]
    assert body["toolConfig"]["tools"][1:] == recorded["toolConfig"]["tools"][1:]
    assert second["server_tool_calls"][0]["output"] == "14013304"
