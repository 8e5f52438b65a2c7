"""AWSInterface (Bedrock Converse): converters, the exact request boto3 sends, result
mapping, recorded exchanges, faults, async parity and concurrency. Streaming is in
test_aws_stream.py."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.llm.prices import genai_cost
from tests.llm.providers.contract import WIRES
from tests.llm.providers.histories import PRODUCERS, TOOLS, history_from
from zerda.llm.errors import (
    AuthenticationError,
    InvalidRequestError,
    ServerError,
)
from zerda.llm.wires.bedrock import errors as bedrock_errors
from zerda.llm.wires.bedrock.interface import AWSInterface
from zerda.llm.wires.bedrock.map import _map_messages, _map_tool_output
from zerda.testing import MockLLMServer

MODEL = "us.amazon.nova-micro-v1:0"
SECRET = "sk-SECRET-zerda-1234"
NAME = r"^[a-zA-Z0-9_-]{1,64}$"
FIXTURES = (
    Path(__file__).resolve().parents[3] / ".." / "shared" / "fixtures" / "recorded" / "bedrock"
)

WEATHER = [
    {
        "name": "get_weather",
        "description": "Weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
]
WEATHER_SPEC = {
    "toolSpec": {
        "name": "get_weather",
        "description": "Weather",
        "inputSchema": {"json": {"type": "object", "properties": {"city": {"type": "string"}}}},
    }
}

# Cache and reasoning counts the mock does not report.
NO_DETAILS = {"cache_read_tokens": None, "cache_write_tokens": None, "reasoning_tokens": None}


@pytest.fixture(scope="module")
def module_server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as server:
        yield server


@pytest.fixture
def server(module_server: MockLLMServer) -> MockLLMServer:
    module_server.reset()
    return module_server


def make(server: MockLLMServer, **options: Any) -> AWSInterface:
    options.setdefault("max_retries", 0)
    return AWSInterface(MODEL, **{**server.client_options("bedrock"), **options})


@pytest.fixture(scope="module")
def module_llm(module_server: MockLLMServer) -> AWSInterface:
    return make(module_server)  # one boto3 client: building one costs ~0.1 s


@pytest.fixture
def llm(server: MockLLMServer, module_llm: AWSInterface) -> AWSInterface:
    return module_llm


def sent(server: MockLLMServer, llm: AWSInterface, messages: Any, **kwargs: Any) -> dict[str, Any]:
    """The body boto3 sent for one generate call."""
    server.enqueue("bedrock", text="ok")
    llm.generate(messages, raise_errors=True, **kwargs)
    body: dict[str, Any] = server.last_request("bedrock").body
    return body


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"text": text}]}


# --- converters ---------------------------------------------------------------------------


def test_map_messages_merges_turns_and_groups_tool_results() -> None:
    messages = [
        {"role": "user", "content": "a"},
        {"role": "user", "content": "b"},
        {
            "role": "assistant",
            "content": "calling",
            "tool_calls": [
                {"id": "t1", "name": "f", "arguments": {"x": 1}},
                {"id": "t2", "name": "g", "arguments": {}},
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "t1",
            "name": "f",
            "content": {"ok": True},
            "is_error": False,
        },
        {"role": "tool", "tool_call_id": "t2", "name": "g", "content": "boom", "is_error": True},
        {"role": "user", "content": "and now?"},
        {"role": "assistant", "content": "", "tool_calls": []},
        {"role": "assistant", "content": "done", "tool_calls": []},
    ]
    assert _map_messages(messages, NAME) == [
        {"role": "user", "content": [{"text": "a"}, {"text": "b"}]},
        {
            "role": "assistant",
            "content": [
                {"text": "calling"},
                {"toolUse": {"toolUseId": "t1", "name": "f", "input": {"x": 1}}},
                {"toolUse": {"toolUseId": "t2", "name": "g", "input": {}}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "t1", "content": [{"json": {"ok": True}}]}},
                {
                    "toolResult": {
                        "toolUseId": "t2",
                        "content": [{"text": "boom"}],
                        "status": "error",
                    }
                },
                {"text": "and now?"},
            ],
        },
        {"role": "assistant", "content": [{"text": "done"}]},
    ]


@pytest.mark.parametrize(
    ("output", "block"),
    [
        ({"a": 1}, {"json": {"a": 1}}),
        ([1, 2], {"json": {"result": [1, 2]}}),
        ("text", {"text": "text"}),
        ("", {"text": "(empty)"}),
        ("  ", {"text": "(empty)"}),
        (42, {"text": "42"}),
        (True, {"text": "true"}),
    ],
)
def test_map_tool_output(output: Any, block: dict[str, Any]) -> None:
    assert _map_tool_output(output) == block


def test_map_messages_never_mutates_input() -> None:
    messages = [{"role": "user", "content": "hi"}]
    copy = json.loads(json.dumps(messages))
    _map_messages(messages, NAME)
    assert messages == copy


@pytest.mark.parametrize(
    ("orig", "expected"),
    [
        ("tooluse_abc-DEF_1", "tooluse_abc-DEF_1"),
        ("functions.get_temperature:0", "functions_get_temperature_0"),
        (None, "tooluse_2_1"),
    ],
)
def test_tool_id_mapping(llm: AWSInterface, orig: str | None, expected: str) -> None:
    assert llm._tool_id(orig, 2, 1) == expected


def test_tool_id_too_long_is_shortened_deterministically(llm: AWSInterface) -> None:
    long_id = "x" * 80
    mapped = llm._tool_id(long_id, 0, 0)
    assert mapped == llm._tool_id(long_id, 0, 0)
    assert mapped is not None and re.match(NAME, mapped) and len(mapped) == 64


# --- construction ---------------------------------------------------------------------------


@pytest.fixture
def no_aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key in (
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_PROFILE",
        "AWS_DEFAULT_PROFILE",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
    ):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def test_region_is_required(no_aws_env: None) -> None:
    with pytest.raises(ValueError, match="needs a region"):
        AWSInterface(MODEL)


def test_region_order(no_aws_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    assert AWSInterface(MODEL).region == "eu-west-1"
    monkeypatch.setenv("AWS_REGION", "eu-central-1")
    assert AWSInterface(MODEL).region == "eu-central-1"
    assert AWSInterface(MODEL, region="ap-south-1").region == "ap-south-1"


def test_api_key_is_refused_with_guidance() -> None:
    with pytest.raises(ValueError, match="AWS_BEARER_TOKEN_BEDROCK"):
        AWSInterface(MODEL, region="us-east-1", api_key="k")


def test_client_config_from_options(server: MockLLMServer) -> None:
    llm = make(server, max_retries=3, timeout=7.5, pool_size=80)
    config = llm.client.meta.config
    assert config.retries == {"total_max_attempts": 1, "mode": "standard"}  # Zerda retries
    assert (config.read_timeout, config.connect_timeout) == (7.5, 7.5)
    assert config.max_pool_connections == 80
    assert llm.client.meta.endpoint_url == server.base_url("bedrock")
    assert llm.client.meta.region_name == "us-east-1"
    assert llm.client is llm.client and llm.async_client is llm.client


def test_extra_options_reach_the_client(server: MockLLMServer) -> None:
    from botocore.config import Config

    llm = make(server, config=Config(read_timeout=3, user_agent_extra="zerda-test"), verify=False)
    config = llm.client.meta.config
    assert (config.read_timeout, config.user_agent_extra) == (3, "zerda-test")
    assert config.retries == {"total_max_attempts": 1, "mode": "standard"}


def test_ready_client_is_used(server: MockLLMServer, no_aws_env: None) -> None:
    import boto3

    client = boto3.client(**server.sdk_client_kwargs("bedrock"))
    llm = AWSInterface(MODEL, client=client)
    server.enqueue("bedrock", text="hi")
    assert llm.generate("q")["content"] == "hi"
    assert llm.client is client


def test_secrets_never_shown(server: MockLLMServer) -> None:
    llm = make(server, aws_secret_access_key=SECRET, aws_session_token="tok-SECRET-5678")
    assert SECRET not in repr(llm) and "tok-SECRET" not in str(llm)
    assert SECRET not in repr(vars(llm))
    server.enqueue_error(400, "bedrock", message=f"echo {SECRET} tok-SECRET-5678")
    result = llm.generate("hi")
    assert result["error"]["message"] == "ValidationException: echo *** ***"
    with pytest.raises(InvalidRequestError) as info:
        llm.generate("hi", raise_errors=True)
    assert SECRET not in str(info.value)


def test_no_credentials_is_an_authentication_error(no_aws_env: None, server: MockLLMServer) -> None:
    llm = AWSInterface(
        MODEL, region="us-east-1", base_url=server.base_url("bedrock"), max_retries=0
    )
    result = llm.generate("hi")
    assert result["error"]["type"] == "authentication"
    assert "NoCredentialsError" in result["error"]["message"]
    assert server.requests == []


# --- the request on the wire ------------------------------------------------------------------


def test_plain_prompt(server: MockLLMServer, llm: AWSInterface) -> None:
    assert sent(server, llm, "Hello") == {"messages": [user("Hello")]}
    assert server.last_request("bedrock").path == "/model/us.amazon.nova-micro-v1%3A0/converse"


def test_system_prompt(server: MockLLMServer, llm: AWSInterface) -> None:
    messages = [{"role": "system", "content": "Be terse."}, {"role": "user", "content": "Hi"}]
    assert sent(server, llm, messages, system="First.") == {
        "messages": [user("Hi")],
        "system": [{"text": "First.\n\nBe terse."}],
    }


@pytest.mark.parametrize(
    ("choice", "native"),
    [
        (None, None),
        ("auto", {"auto": {}}),
        ("required", {"any": {}}),
        ("get_weather", {"tool": {"name": "get_weather"}}),
        ({"name": "get_weather"}, {"tool": {"name": "get_weather"}}),
        (
            {"type": "function", "function": {"name": "get_weather"}},
            {"tool": {"name": "get_weather"}},
        ),
    ],
)
def test_tools_and_tool_choice(
    server: MockLLMServer, llm: AWSInterface, choice: Any, native: Any
) -> None:
    tool_config: dict[str, Any] = {"tools": [WEATHER_SPEC]}
    if native is not None:
        tool_config["toolChoice"] = native
    assert sent(server, llm, "Hi", tools=WEATHER, tool_choice=choice) == {
        "messages": [user("Hi")],
        "toolConfig": tool_config,
    }


def test_tool_choice_none_leaves_tools_out(server: MockLLMServer, llm: AWSInterface) -> None:
    assert sent(server, llm, "Hi", tools=WEATHER, tool_choice="none") == {"messages": [user("Hi")]}


def test_tool_without_description_has_no_description_key(
    server: MockLLMServer, llm: AWSInterface
) -> None:
    body = sent(server, llm, "Hi", tools=[{"name": "ping"}])
    assert body["toolConfig"] == {
        "tools": [
            {
                "toolSpec": {
                    "name": "ping",
                    "inputSchema": {"json": {"type": "object", "properties": {}}},
                }
            }
        ]
    }


def test_options(server: MockLLMServer, llm: AWSInterface) -> None:
    body = sent(
        server,
        llm,
        "Hi",
        max_tokens=50,
        temperature=0.2,
        top_p=0.9,
        stop="END",
    )
    assert body == {
        "messages": [user("Hi")],
        "inferenceConfig": {
            "maxTokens": 50,
            "temperature": 0.2,
            "topP": 0.9,
            "stopSequences": ["END"],
        },
    }


def test_native_arguments_pass_through_and_merge(server: MockLLMServer, llm: AWSInterface) -> None:
    body = sent(
        server,
        llm,
        "Hi",
        max_tokens=50,
        inferenceConfig={"temperature": 0.5},
        additionalModelRequestFields={"top_k": 5},
    )
    assert body == {
        "messages": [user("Hi")],
        "inferenceConfig": {"maxTokens": 50, "temperature": 0.5},
        "additionalModelRequestFields": {"top_k": 5},
    }


PARALLEL_HISTORY: list[dict[str, Any]] = [
    {"role": "user", "content": "Weather in Paris and Rome?"},
    {
        "role": "assistant",
        "content": "Checking.",
        "tool_calls": [
            {"id": "tooluse_a", "name": "get_weather", "arguments": {"city": "Paris"}},
            {"id": "tooluse_b", "name": "get_weather", "arguments": {"city": "Rome"}},
        ],
    },
    {"role": "tool", "tool_call_id": "tooluse_b", "name": "get_weather", "content": ["rain", 12]},
    {"role": "tool", "tool_call_id": "tooluse_a", "name": "get_weather", "content": "sunny"},
]

PARALLEL_MESSAGES = [
    user("Weather in Paris and Rome?"),
    {
        "role": "assistant",
        "content": [
            {"text": "Checking."},
            {
                "toolUse": {
                    "toolUseId": "tooluse_a",
                    "name": "get_weather",
                    "input": {"city": "Paris"},
                }
            },
            {
                "toolUse": {
                    "toolUseId": "tooluse_b",
                    "name": "get_weather",
                    "input": {"city": "Rome"},
                }
            },
        ],
    },
    {
        "role": "user",
        "content": [
            {
                "toolResult": {
                    "toolUseId": "tooluse_b",
                    "content": [{"json": {"result": ["rain", 12]}}],
                }
            },
            {"toolResult": {"toolUseId": "tooluse_a", "content": [{"text": "sunny"}]}},
        ],
    },
]


def test_parallel_calls_with_results(server: MockLLMServer, llm: AWSInterface) -> None:
    assert sent(server, llm, PARALLEL_HISTORY, tools=WEATHER) == {
        "messages": PARALLEL_MESSAGES,
        "toolConfig": {"tools": [WEATHER_SPEC]},
    }


HISTORY_TOOLS = {
    "tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": {"type": "object"}}}}]
}


@pytest.mark.parametrize("kwargs", [{}, {"tools": WEATHER, "tool_choice": "none"}])
def test_history_with_tool_blocks_always_carries_a_tool_config(
    server: MockLLMServer, llm: AWSInterface, kwargs: dict[str, Any]
) -> None:
    assert sent(server, llm, PARALLEL_HISTORY, **kwargs) == {
        "messages": PARALLEL_MESSAGES,
        "toolConfig": HISTORY_TOOLS,
    }


def expected_history(first: str, second: str) -> dict[str, Any]:
    return {
        "system": [{"text": "You are terse."}],
        "messages": [
            user("Weather and time in Paris?"),
            {
                "role": "assistant",
                "content": [
                    {
                        "toolUse": {
                            "toolUseId": first,
                            "name": "get_weather",
                            "input": {"city": "Paris"},
                        }
                    },
                    {
                        "toolUse": {
                            "toolUseId": second,
                            "name": "get_time",
                            "input": {"city": "Paris"},
                        }
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "toolResult": {
                            "toolUseId": first,
                            "content": [{"json": {"temp_c": 18, "sky": "clear"}}],
                        }
                    },
                    {"toolResult": {"toolUseId": second, "content": [{"text": "14:05"}]}},
                ],
            },
            {"role": "assistant", "content": [{"text": "18°C and clear; it is 14:05."}]},
            user("Thanks. And tomorrow?"),
        ],
        "toolConfig": {
            "tools": [
                {
                    "toolSpec": {
                        "name": t["name"],
                        "description": t["description"],
                        "inputSchema": {"json": t["parameters"]},
                    }
                }
                for t in TOOLS
            ]
        },
    }


@pytest.mark.parametrize(
    ("producer", "first", "second"),
    [
        ("bedrock", "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "tooluse_pQ2hS9d3Tq6yUe8Wn1Xc4B"),
        ("openai", "call_a1B2c3D4e5F6g7H8i9J0k1L2", "call_m3N4o5P6q7R8s9T0u1V2w3X4"),
        ("gemini", "tooluse_2_0", "tooluse_2_1"),
        ("ollama", "tooluse_2_0", "tooluse_2_1"),
    ],
)
def test_history_from_producer_exact(
    server: MockLLMServer, llm: AWSInterface, producer: str, first: str, second: str
) -> None:
    assert sent(server, llm, history_from(producer), tools=TOOLS) == expected_history(first, second)


@pytest.mark.parametrize("producer", PRODUCERS)
def test_history_from_every_producer_without_tools_is_well_formed(
    server: MockLLMServer, llm: AWSInterface, producer: str
) -> None:
    """Converse refuses tool blocks without a toolConfig, even when no tools are given now
    (with tools, every producer's history is the contract's)."""
    body = sent(server, llm, history_from(producer))
    WIRES["bedrock"].call_ids(body)


def test_foreign_ids_are_mapped_consistently(server: MockLLMServer, llm: AWSInterface) -> None:
    history = [
        {"role": "user", "content": "t?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "functions.f:0", "name": "f", "arguments": {}}],
        },
        {"role": "tool", "tool_call_id": "functions.f:0", "name": "f", "content": "ok"},
    ]
    body = sent(server, llm, history)
    assert body["messages"][1]["content"][0]["toolUse"]["toolUseId"] == "functions_f_0"
    assert body["messages"][2]["content"][0]["toolResult"]["toolUseId"] == "functions_f_0"


def test_signed_reasoning_is_sent_back_before_tool_use(
    server: MockLLMServer, llm: AWSInterface
) -> None:
    reasoning = [
        {"reasoningText": {"text": "think", "signature": "sig"}},
        {"redactedContent": "cmVkYWN0ZWQ="},
    ]
    history = [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [{"id": "tooluse_1", "name": "f", "arguments": {}}],
            "provider_data": {"bedrock": {"reasoning": reasoning}},
        },
        {"role": "tool", "tool_call_id": "tooluse_1", "name": "f", "content": {"v": 1}},
    ]
    body = sent(server, llm, history)
    assert body["messages"][1]["content"] == [
        {"reasoningContent": {"reasoningText": {"text": "think", "signature": "sig"}}},
        {"reasoningContent": {"redactedContent": "cmVkYWN0ZWQ="}},  # base64 on the wire
        {"text": "Let me look."},
        {"toolUse": {"toolUseId": "tooluse_1", "name": "f", "input": {}}},
    ]


# --- refused before sending ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("messages", "kwargs", "match"),
    [
        # Common bad input is the contract's; these checks are Bedrock's own.
        ([{"role": "assistant", "content": ""}], {}, "at least one non-empty message"),
    ],
)
def test_bad_input_refused_before_sending(
    server: MockLLMServer, llm: AWSInterface, messages: Any, kwargs: dict[str, Any], match: str
) -> None:
    result = llm.generate(messages, **kwargs)
    assert result["stop_reason"] == "error"
    assert result["error"]["type"] == "invalid_request"
    assert re.search(match, result["error"]["message"])
    with pytest.raises(InvalidRequestError):
        llm.generate(messages, raise_errors=True, **kwargs)
    assert server.requests == []


# --- results ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("native", "unified"),
    [
        ("end_turn", "end_turn"),
        ("max_tokens", "max_tokens"),
        ("stop_sequence", "stop_sequence"),
        ("content_filtered", "content_filter"),
        ("guardrail_intervened", "content_filter"),
        ("malformed_model_output", "other"),
        ("model_context_window_exceeded", "other"),
    ],
)
def test_stop_reasons(server: MockLLMServer, llm: AWSInterface, native: str, unified: str) -> None:
    server.enqueue("bedrock", text="t", native_stop_reason=native)
    assert llm.generate("q")["stop_reason"] == unified


def test_tool_use_even_when_bedrock_says_end_turn(server: MockLLMServer, llm: AWSInterface) -> None:
    server.enqueue(
        "bedrock", tool_calls=[{"name": "f", "arguments": {}}], native_stop_reason="end_turn"
    )
    result = llm.generate("q")
    assert (result["stop_reason"], result["content"]) == ("tool_use", None)


def raw_response(content: list[dict[str, Any]], stop: str = "end_turn") -> dict[str, Any]:
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop,
        "usage": {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7},
        "metrics": {"latencyMs": 1},
    }


def test_reasoning_kept_in_provider_data_only_when_signed(
    server: MockLLMServer, llm: AWSInterface
) -> None:
    content = [
        {"reasoningContent": {"reasoningText": {"text": "hmm", "signature": "c2ln"}}},
        {"reasoningContent": {"reasoningText": {"text": "unsigned"}}},
        {"reasoningContent": {"redactedContent": "cmVkYWN0ZWQ="}},
        {"text": "Answer"},
        {"text": " two"},
    ]
    server.enqueue_raw(200, raw_response(content), provider="bedrock")
    provider_data = {
        "bedrock": {
            "reasoning": [
                {"reasoningText": {"text": "hmm", "signature": "c2ln"}},
                {"redactedContent": "cmVkYWN0ZWQ="},
            ]
        }
    }
    assert llm.generate("q") == {
        "content": "Answer two",
        "tool_calls": [],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 3, "output_tokens": 4, **NO_DETAILS},
        "reasoning": "hmmunsigned",  # all the text shown, signed or not
        "message": {
            "role": "assistant",
            "content": "Answer two",
            "tool_calls": [],
            "provider_data": provider_data,
        },
        "provider_data": provider_data,
        "cost": genai_cost("bedrock", MODEL, {"input_tokens": 3, "output_tokens": 4}),
    }


def test_reasoning_round_trip(server: MockLLMServer, llm: AWSInterface) -> None:
    signed = {"reasoningText": {"text": "hmm", "signature": "c2ln"}}
    use = {"toolUseId": "tooluse_1", "name": "f", "input": {}}
    content = [
        {"reasoningContent": signed},
        {"reasoningContent": {"redactedContent": "cmVk"}},
        {"toolUse": use},
    ]
    server.enqueue_raw(200, raw_response(content, "tool_use"), provider="bedrock")
    first = llm.generate("q", tools=[{"name": "f"}])
    history = [
        {"role": "user", "content": "q"},
        first["message"],
        {"role": "tool", "tool_call_id": "tooluse_1", "name": "f", "content": "ok"},
    ]
    body = sent(server, llm, history, tools=[{"name": "f"}])
    assert body["messages"][1] == {"role": "assistant", "content": content}


def test_unsigned_reasoning_is_dropped(server: MockLLMServer, llm: AWSInterface) -> None:
    content = [{"reasoningContent": {"reasoningText": {"text": "x"}}}, {"text": "A"}]
    server.enqueue_raw(200, raw_response(content), provider="bedrock")
    assert "provider_data" not in llm.generate("q")


# --- recorded exchanges -----------------------------------------------------------------------


def recorded(streaming: bool) -> list[Any]:
    if not FIXTURES.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason="shared/fixtures is absent"))]
    params = []
    for path in sorted(FIXTURES.glob("*.json")):
        fixture = json.loads(path.read_text())
        if bool(fixture.get("streaming")) == streaming:
            params.append(pytest.param(fixture, id=path.stem[-60:]))
    return params


def expected_stop(fixture: dict[str, Any]) -> str:
    derived = fixture["derived"]
    if derived["tool_calls"]:
        return "tool_use"
    return {
        "end_turn": "end_turn",
        "max_tokens": "max_tokens",
        "stop_sequence": "stop_sequence",
        "content_filtered": "content_filter",
        "guardrail_intervened": "content_filter",
    }.get(derived["finish_reason"], "other")


def _server_tool_uses(fixture: dict[str, Any]) -> set[str]:
    """The ids of the answer's ``toolUse`` blocks of type ``server_tool_use``: calls Bedrock
    ran itself (a Nova system tool), which derived lists among the tool calls but which
    are the result's server_tool_calls (DESIGN §18), never calls for the client to run."""
    body = fixture["response"]["body"]
    if isinstance(body, dict):
        blocks = (((body.get("output") or {}).get("message") or {}).get("content")) or []
    else:  # a stream: the decoded events' block starts
        starts = [(e.get("payload") or {}).get("start") for e in fixture["derived"]["events"]]
        blocks = [s for s in starts if isinstance(s, dict)]
    uses = [b["toolUse"] for b in blocks if isinstance(b.get("toolUse"), dict)]
    return {u["toolUseId"] for u in uses if u.get("type") == "server_tool_use"}


def expected_calls(fixture: dict[str, Any]) -> list[dict[str, Any]]:
    calls = []
    server = _server_tool_uses(fixture)
    for call in fixture["derived"]["tool_calls"]:
        if call["id"] in server:
            continue
        arguments = call["arguments"]
        if isinstance(arguments, str):
            arguments = json.loads(arguments) if arguments.strip() else {}
        calls.append({"id": call["id"], "name": call["name"], "arguments": arguments})
    return calls


def check_recorded(result: dict[str, Any], fixture: dict[str, Any]) -> None:
    if fixture["response"]["status"] >= 400:
        assert result["stop_reason"] == "error"
        assert result["error"]["type"] == "invalid_request"
        assert result["error"]["message"] == fixture["derived"]["error"]["message"]
        return
    derived = fixture["derived"]
    assert result["tool_calls"] == expected_calls(fixture)
    assert result["content"] == (derived["text"] or None)
    assert result["stop_reason"] == expected_stop(fixture)
    assert result["usage"] == derived["usage_norm"]  # cache reads and writes added in
    assert result["reasoning"] == (derived["reasoning_text"] or None)
    json.dumps(result)  # plain data only


@pytest.mark.parametrize("fixture", recorded(streaming=False))
def test_recorded_exchange(
    server: MockLLMServer, llm: AWSInterface, fixture: dict[str, Any]
) -> None:
    server.enqueue_recorded(fixture, provider="bedrock")
    check_recorded(llm.generate("q"), fixture)


# --- faults ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "code", "kind", "retryable"),
    [
        # Bedrock's codes beyond the contract's status matrix (contract.py): the code, not
        # the status, names the type.
        (403, "UnrecognizedClientException", "authentication", False),
        (424, "ModelErrorException", "server", False),  # a status §5 does not retry
        (401, None, "authentication", False),  # the mock renders a 401 as AWS's auth error
    ],
)
def test_client_errors(
    server: MockLLMServer,
    llm: AWSInterface,
    status: int,
    code: str | None,
    kind: str,
    retryable: bool,
) -> None:
    server.enqueue_error(status, "bedrock", message="nope", error_type=code)
    result = llm.generate("q")
    assert result == {
        "content": None,
        "tool_calls": [],
        "stop_reason": "error",
        "usage": None,
        "reasoning": None,
        "message": None,
        "cost": None,
        "error": {
            "type": kind,
            "message": f"{code or 'UnrecognizedClientException'}: nope",
            "status_code": status,
            "provider": "bedrock",
            "retryable": retryable,
        },
    }


# --- retries (Zerda's: botocore's are off) -----------------------------------------------------


@pytest.fixture
def short_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Backoff without a Retry-After starts at ~10 ms instead of 0.5 s."""
    monkeypatch.setattr("zerda.llm._retry.INITIAL_RETRY_DELAY", 0.01)


def attempts(server: MockLLMServer) -> int:
    return len(server.requests_for("bedrock"))


@pytest.mark.parametrize(
    ("status", "code", "kind"),
    # The contract's matrix has the common statuses; a 5xx with no code is Bedrock's own.
    [(502, None, "server")],
)
def test_retryable_status_is_retried_max_retries_times(
    server: MockLLMServer, status: int, code: str | None, kind: str
) -> None:
    llm = make(server, max_retries=2)
    for _ in range(4):
        server.enqueue_error(status, "bedrock", message="again", error_type=code, retry_after=0.01)
    error = llm.generate("q")["error"]
    assert error == {
        "type": kind,
        "message": f"{code or 'InternalServerException'}: again",
        "status_code": status,
        "provider": "bedrock",
        "retryable": True,
    }
    assert (attempts(server), server.pending("bedrock")) == (3, 1)


@pytest.mark.parametrize(
    ("status", "code"),
    [(424, "ModelErrorException"), (400, "ServiceQuotaExceededException")],
)
def test_other_statuses_are_not_retried(server: MockLLMServer, status: int, code: str) -> None:
    llm = make(server, max_retries=2)
    server.enqueue_error(status, "bedrock", error_type=code)
    server.enqueue("bedrock", text="not reached")
    error = llm.generate("q")["error"]
    assert (error["status_code"], error["retryable"]) == (status, False)
    assert (attempts(server), server.pending("bedrock")) == (1, 1)


def test_aws_max_attempts_is_ignored(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "5")
    monkeypatch.setenv("AWS_RETRY_MODE", "adaptive")
    llm = make(server, max_retries=1)
    for _ in range(3):
        server.enqueue_error(500, "bedrock", retry_after=0.01)
    assert llm.generate("q")["error"]["type"] == "server"
    assert attempts(server) == 2


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"x-amz-retry-after": "1500"}, 1.5),
        ({"x-amz-retry-after": "250", "retry-after": "7"}, 0.25),  # Bedrock's own first
        ({"retry-after": "3"}, 3.0),
        ({"retry-after-ms": "40"}, 0.04),
        ({"x-amz-retry-after": "soon", "retry-after": "2"}, 2.0),
        ({}, None),
    ],
)
def test_retry_after_headers(headers: dict[str, str], seconds: float | None) -> None:
    from botocore.exceptions import ClientError

    response: Any = {
        "Error": {"Code": "ThrottlingException", "Message": "slow"},
        "ResponseMetadata": {"HTTPStatusCode": 429, "HTTPHeaders": headers},
    }
    assert bedrock_errors._retry_after(ClientError(response, "Converse")) == seconds


@pytest.mark.usefixtures("short_backoff")
def test_timeout_is_retried(server: MockLLMServer) -> None:
    llm = make(server, max_retries=1, timeout=0.2)
    server.enqueue("bedrock", text="late", delay=0.6)
    server.enqueue("bedrock", text="in time")
    assert llm.generate("q")["content"] == "in time"
    assert attempts(server) == 2


@pytest.mark.parametrize("kind", ["malformed", "empty"])
def test_broken_body_is_a_server_error_not_retried(server: MockLLMServer, kind: Any) -> None:
    from botocore.parsers import ResponseParserError

    llm = make(server, max_retries=2)
    server.enqueue_fault(kind, "bedrock")
    server.enqueue_fault(kind, "bedrock")
    error = llm.generate("q")["error"]
    assert error == {
        "type": "server",
        "message": "bedrock sent a malformed response: it could not be parsed: "
        "the response has no output or stopReason",
        "status_code": None,
        "provider": "bedrock",
        "retryable": False,
    }
    assert (attempts(server), server.pending("bedrock")) == (1, 1)
    with pytest.raises(ServerError) as info:
        llm.generate("q", raise_errors=True)
    assert isinstance(info.value.__cause__, ResponseParserError)


def test_authentication_error_type(server: MockLLMServer, llm: AWSInterface) -> None:
    server.enqueue_error(403, "bedrock", error_type="ExpiredTokenException")
    with pytest.raises(AuthenticationError):
        llm.generate("q", raise_errors=True)


# --- async -----------------------------------------------------------------------------------


async def test_generate_async_does_not_block_the_loop(
    server: MockLLMServer, llm: AWSInterface
) -> None:
    server.enqueue("bedrock", text="slow", delay=0.3)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.create_task(ticker())
    result = await llm.generate_async("q")
    task.cancel()
    assert result["content"] == "slow"
    assert ticks >= 10


@pytest.mark.usefixtures("short_backoff")
async def test_generate_async_retries_like_generate(server: MockLLMServer) -> None:
    llm = make(server, max_retries=2)
    server.enqueue_fault("drop", "bedrock")
    server.enqueue_error(409, "bedrock", error_type="ConflictException", retry_after=0.01)
    server.enqueue("bedrock", text="third")
    assert (await llm.generate_async("q"))["content"] == "third"
    assert attempts(server) == 3
    server.enqueue_error(400, "bedrock")
    assert (await llm.generate_async("q"))["error"]["retryable"] is False
    assert attempts(server) == 4


async def test_async_retry_waits_without_holding_a_pool_thread(server: MockLLMServer) -> None:
    """With one pool thread, a call waiting 0.4 s to retry leaves it free for another."""
    llm = make(server, max_retries=1, pool_size=1)
    server.enqueue_error(503, "bedrock", retry_after=0.4)
    server.set_default("bedrock", text="ok")
    llm.client  # noqa: B018 - built before the clock starts
    start = time.perf_counter()
    waiting = asyncio.create_task(llm.generate_async("q"))
    await asyncio.sleep(0)  # its first attempt is submitted first
    other = await llm.generate_async("q")
    other_elapsed = time.perf_counter() - start
    assert (await waiting)["content"] == "ok"
    assert other["content"] == "ok"
    assert other_elapsed < 0.3
    assert time.perf_counter() - start >= 0.39
    assert attempts(server) == 3


async def test_64_concurrent_calls_run_in_the_interface_pool(server: MockLLMServer) -> None:
    llm = make(server)
    server.set_default("bedrock", text="ok", delay=0.3)
    llm.client  # noqa: B018 - built before the clock starts
    start = time.perf_counter()
    results = await asyncio.gather(*(llm.generate_async("q") for _ in range(64)))
    elapsed = time.perf_counter() - start
    assert [r["content"] for r in results] == ["ok"] * 64
    # asyncio's default executor has min(32, cpus + 4) threads: 6 on 2 cores, so >= 3.3 s.
    assert elapsed < 3.0
    assert len(llm._pool._threads) > 32  # more than any default executor has
