"""The repairs that let any history continue anywhere (DESIGN §15), each asserted on the
exact request sent: tool names mapped and mapped back, repair=True, Mistral's user after
tool, Gemini's model-first history, signature-only thinking."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest

from zerda.llm import InvalidRequestError, create_interface
from zerda.llm._names import name_map
from zerda.llm.registry import NAME_64
from zerda.testing import MockLLMServer

RULE = "the rule"
TOOLS = [{"name": n, "parameters": {"type": "object"}} for n in ("fs.read", "get_time")]


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as srv:
        yield srv


@pytest.fixture(autouse=True)
def _fresh(server: MockLLMServer) -> None:
    server.reset()


def llm(server: MockLLMServer, provider: str) -> Any:
    return create_interface(provider, model="m", max_retries=0, **server.client_options(provider))


# --- the mapping rule ---------------------------------------------------------------------


def test_valid_names_are_not_mapped_and_refused_ones_are_cleaned() -> None:
    assert name_map(["get_time", "fs.read", "get time"], NAME_64, RULE, "openai") == {
        "fs.read": "fs_read",
        "get time": "get_time_343b1418",  # "get_time" is taken by another tool
    }


def test_names_that_would_collide_both_get_a_digest() -> None:
    assert name_map(["a.b", "a:b"], NAME_64, RULE, "openai") == {
        "a.b": "a_b_2e7336dc",
        "a:b": "a_b_6783a31e",
    }


def test_a_long_name_is_cut_to_64_with_a_digest_and_a_digit_first_gets_an_underscore() -> None:
    mapped = name_map(["x" * 80, "9 lives"], r"[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}", RULE, "gemini")
    assert mapped == {"9 lives": "_9_lives"}
    long = name_map(["x." * 40], NAME_64, RULE, "openai")["x." * 40]
    assert len(long) == 64 and long.startswith("x_x_") and long[-9] == "_"


def test_the_mapping_is_the_same_on_every_call_and_in_any_order() -> None:
    names = ["b.c", "a.b", "a:b", "z" * 70]
    assert name_map(names, NAME_64, RULE, "p") == name_map(names[::-1], NAME_64, RULE, "p")


# --- sent mapped, answered under the original name ----------------------------------------

HISTORY = [
    {"role": "user", "content": "Read it."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "name": "fs.read", "arguments": {}}],
    },
    {"role": "tool", "tool_call_id": "c1", "name": "fs.read", "content": "text"},
]


def test_openai_gets_mapped_names_in_tools_history_and_tool_choice(server: MockLLMServer) -> None:
    server.enqueue("openai", tool_calls=[{"id": "c2", "name": "fs_read", "arguments": {}}])
    result = llm(server, "openai").generate(HISTORY, tools=TOOLS, tool_choice="fs.read")
    body = server.last_request("openai").body
    assert [t["function"]["name"] for t in body["tools"]] == ["fs_read", "get_time"]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "fs_read"}}
    assert body["messages"][1]["tool_calls"][0]["function"]["name"] == "fs_read"
    assert body["messages"][2] == {"role": "tool", "tool_call_id": "c1", "content": "text"}
    call = {"id": "c2", "name": "fs.read", "arguments": {}}
    assert result["tool_calls"] == [call]
    assert result["message"]["tool_calls"] == [call]
    assert HISTORY[1]["tool_calls"][0]["name"] == "fs.read"  # the caller's history untouched


@pytest.mark.parametrize("provider", ["anthropic", "bedrock", "mistral", "gemini"])
def test_stream_events_and_the_done_result_carry_the_original_name(
    server: MockLLMServer, provider: str
) -> None:
    sent = "fs.read" if provider == "gemini" else "fs_read"  # Gemini accepts dots
    server.enqueue(provider, tool_calls=[{"name": sent, "arguments": {"p": 1}}])
    events = list(llm(server, provider).stream("Read it.", tools=TOOLS))
    calls = [e["tool_call"] for e in events if e["type"] == "tool_call"]
    assert {e["name"] for e in events if e["type"] == "tool_call_delta"} <= {"fs.read"}
    assert [(c["name"], c["arguments"]) for c in calls] == [("fs.read", {"p": 1})]
    assert events[-1]["result"]["tool_calls"] == calls
    assert events[-1]["result"]["message"]["tool_calls"] == calls


# --- repair=True --------------------------------------------------------------------------

ORPHANED = [
    {"role": "user", "content": "Both?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "name": "get_time", "arguments": {}},
            {"id": "c2", "name": "get_time", "arguments": {}},
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "14:05"},
    {"role": "tool", "tool_call_id": "zz", "content": "stray"},
    {"role": "user", "content": "And?"},
]


def test_by_default_an_orphaned_history_is_refused_with_the_message_index(
    server: MockLLMServer,
) -> None:
    with pytest.raises(InvalidRequestError) as info:
        llm(server, "openai").generate(ORPHANED, tools=TOOLS, raise_errors=True)
    assert info.value.message == (
        "messages[3]: tool_call_id 'zz' matches no open tool call of the preceding assistant message"
    )
    assert server.requests == []


def test_repair_answers_orphaned_calls_and_drops_stray_results(
    server: MockLLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.enqueue("openai", text="ok")
    with caplog.at_level(logging.WARNING, logger="zerda"):
        result = llm(server, "openai").generate(ORPHANED, tools=TOOLS, repair=True)
    assert result["content"] == "ok"
    assert server.last_request("openai").body["messages"][2:] == [
        {"role": "tool", "tool_call_id": "c1", "content": "14:05"},
        {"role": "tool", "tool_call_id": "c2", "content": "not executed"},
        {"role": "user", "content": "And?"},
    ]
    assert [r.getMessage() for r in caplog.records] == [
        "repair: dropped a tool result: messages[3]: tool_call_id 'zz' matches no open "
        "tool call of the preceding assistant message",
        "repair: tool call 'get_time' of messages[1] has no result before messages[4]; "
        "answered 'not executed'",
    ]


def test_repair_marks_the_not_executed_result_as_an_error_where_the_wire_can(
    server: MockLLMServer,
) -> None:
    server.enqueue("anthropic", text="ok")
    llm(server, "anthropic").generate(ORPHANED[:2], tools=TOOLS, repair=True)
    assert server.last_request("anthropic").body["messages"][-1] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "c1",
                "content": "not executed",
                "is_error": True,
            },
            {
                "type": "tool_result",
                "tool_use_id": "c2",
                "content": "not executed",
                "is_error": True,
            },
        ],
    }


def test_repair_reaches_generate_through_run(server: MockLLMServer) -> None:
    server.enqueue("openai", text="done")
    result = llm(server, "openai").run(ORPHANED, tools=[_get_time], repair=True)
    assert result["content"] == "done"


def _get_time() -> str:
    """The time."""
    return "14:05"


# --- per-provider repairs -----------------------------------------------------------------

AFTER_TOOL = [*HISTORY, {"role": "user", "content": "Thanks."}]


def test_mistral_gets_an_assistant_turn_between_a_tool_result_and_a_user_message(
    server: MockLLMServer,
) -> None:
    server.enqueue("mistral", text="ok")
    llm(server, "mistral").generate(AFTER_TOOL, tools=TOOLS)
    sent = server.last_request("mistral")
    assert sent.rejected_by is None
    assert [m["role"] for m in sent.body["messages"]] == [
        "user", "assistant", "tool", "assistant", "user"
    ]  # fmt: skip
    assert sent.body["messages"][3] == {"role": "assistant", "content": "OK.", "prefix": False}


def test_gemini_gets_a_user_turn_before_a_history_that_starts_with_the_model(
    server: MockLLMServer,
) -> None:
    server.enqueue("gemini", text="ok")
    llm(server, "gemini").generate(HISTORY[1:], tools=TOOLS)
    sent = server.last_request("gemini")
    assert sent.rejected_by is None
    assert [c["role"] for c in sent.body["contents"]] == ["user", "model", "user"]
    assert sent.body["contents"][0] == {
        "role": "user",
        "parts": [{"text": "(conversation continued)"}],
    }


def test_gemini_merges_a_turns_results_into_one_response_turn(server: MockLLMServer) -> None:
    history = [
        {"role": "user", "content": "Both?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": None, "name": "get_time", "arguments": {}},
                {"id": None, "name": "fs.read", "arguments": {}},
            ],
        },
        {"role": "tool", "content": "14:05"},
        {"role": "tool", "content": "text"},
        {"role": "user", "content": "Thanks."},
    ]
    server.enqueue("gemini", text="ok")
    llm(server, "gemini").generate(history, tools=TOOLS)
    sent = server.last_request("gemini")
    assert sent.rejected_by is None
    responses = [p for p in sent.body["contents"][2]["parts"] if "functionResponse" in p]
    assert [r["functionResponse"]["name"] for r in responses] == ["get_time", "fs.read"]
    assert sent.body["contents"][2]["parts"][-1] == {"text": "Thanks."}


def test_anthropic_gets_a_signature_only_thinking_block_back_as_it_came(
    server: MockLLMServer,
) -> None:
    thinking = [{"type": "thinking", "thinking": "", "signature": "EpYBCkYIBRgCIkBz"}]
    history = [
        HISTORY[0],
        {**HISTORY[1], "provider_data": {"anthropic": {"thinking": thinking}}},
        HISTORY[2],
    ]
    server.enqueue("anthropic", text="ok")
    llm(server, "anthropic").generate(history, tools=TOOLS)
    assistant = server.last_request("anthropic").body["messages"][1]
    assert assistant["content"][0] == thinking[0]


def test_bedrock_gets_signature_only_reasoning_back_as_it_came(server: MockLLMServer) -> None:
    reasoning = [{"reasoningText": {"text": "", "signature": "c2ln"}}]
    history = [
        HISTORY[0],
        {**HISTORY[1], "provider_data": {"bedrock": {"reasoning": reasoning}}},
        HISTORY[2],
    ]
    server.enqueue("bedrock", text="ok")
    llm(server, "bedrock").generate(history, tools=TOOLS)
    sent = server.last_request("bedrock")
    assert sent.rejected_by is None
    assert sent.body["messages"][1]["content"][0] == {"reasoningContent": reasoning[0]}
