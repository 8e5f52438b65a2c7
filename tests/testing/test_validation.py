"""MockLLMServer refuses what the real APIs refuse (issue 16): each bad request gets the
provider's own status and error body, and strict=False serves it anyway."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from zerda.testing import MockLLMServer

KEYS = {"authorization": "Bearer test-key", "x-api-key": "k", "x-goog-api-key": "k"}
KEYS["anthropic-version"] = "2023-06-01"  # every Anthropic SDK sends it (versioning page)
USER = {"role": "user", "content": "hi"}
GEMINI_PATH = "/gemini/v1beta/models/gemini-2.5-flash:generateContent"
BEDROCK_PATH = "/bedrock/model/anthropic.claude-3-5-sonnet/converse"


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s


@pytest.fixture(scope="module")
def lenient() -> Iterator[MockLLMServer]:
    with MockLLMServer(strict=False) as s:
        yield s


def post(
    server: MockLLMServer, path: str, body: Any, headers: dict[str, str] | None = None
) -> httpx.Response:
    return httpx.post(server.url + path, json=body, headers=KEYS if headers is None else headers)


def _openai_call(call_id: str = "call_1") -> dict[str, Any]:
    fn = {"name": "f", "arguments": "{}"}
    return {
        "role": "assistant",
        "tool_calls": [{"id": call_id, "type": "function", "function": fn}],
    }


def _tool(call_id: str, content: str = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def _bedrock_use(*ids: str) -> dict[str, Any]:
    blocks = [{"toolUse": {"toolUseId": i, "name": "f", "input": {}}} for i in ids]
    return {"role": "assistant", "content": blocks}


def _bedrock_results(*ids: str) -> dict[str, Any]:
    blocks = [{"toolResult": {"toolUseId": i, "content": [{"text": "ok"}]}} for i in ids]
    return {"role": "user", "content": blocks}


def _gemini_call_turn(n: int) -> dict[str, Any]:
    return {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}] * n}


def _gemini_responses(n: int) -> dict[str, Any]:
    part = {"functionResponse": {"name": "f", "response": {"ok": True}}}
    return {"role": "user", "parts": [part] * n}


def _gemini_tools(parameters: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"functionDeclarations": [{"name": "f", "parameters": parameters}]}]


GEMINI_USER = {"role": "user", "parts": [{"text": "hi"}]}
BEDROCK_USER = {"role": "user", "content": [{"text": "hi"}]}
BEDROCK_TOOLS = {
    "tools": [{"toolSpec": {"name": "f", "inputSchema": {"json": {"type": "object"}}}}]
}
MISTRAL_CALL = {
    "role": "assistant",
    "tool_calls": [{"id": "abcdefghi", "function": {"name": "f", "arguments": "{}"}}],
}

# (id, path, body, headers or None for all keys, status, expected error body)
CASES: list[tuple[str, str, Any, dict[str, str] | None, int, Any]] = [
    (
        "anthropic without max_tokens",
        "/anthropic/v1/messages",
        {"model": "claude", "messages": [USER]},
        None,
        400,
        {"type": "invalid_request_error", "message": "max_tokens: Field required"},
    ),
    (
        "anthropic tool_result without tool_use",
        "/anthropic/v1/messages",
        {
            "model": "claude",
            "max_tokens": 10,
            "messages": [
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1"}]}
            ],
        },
        None,
        400,
        {
            "type": "invalid_request_error",
            "message": "messages.0.content.0: unexpected `tool_use_id` found in `tool_result` "
            "blocks: toolu_1. Each `tool_result` block must have a corresponding `tool_use` "
            "block in the previous message.",
        },
    ),
    (
        "anthropic without a key",
        "/anthropic/v1/messages",
        {"model": "claude", "max_tokens": 10, "messages": [USER]},
        {},
        401,
        {"type": "authentication_error", "message": "x-api-key header is required"},
    ),
    (
        "anthropic image of an unsupported type",
        "/anthropic/v1/messages",
        {
            "model": "claude",
            "max_tokens": 10,
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "image",
                            "source": {"type": "base64", "media_type": "image/bmp", "data": "AA=="},
                        }
                    ],
                }
            ],
        },
        None,
        400,
        {
            "type": "invalid_request_error",
            "message": "messages.0.content.0.image.source.base64.media_type: Input should be "
            "'image/jpeg', 'image/png', 'image/gif' or 'image/webp'",
        },
    ),
    (
        "openai tool message with no matching call",
        "/openai/v1/chat/completions",
        {"model": "gpt", "messages": [USER, _tool("call_1")]},
        None,
        400,
        {
            "error": {
                "message": "Invalid parameter: messages with role 'tool' must be a response to "
                "a preceeding message with 'tool_calls'.",
                "type": "invalid_request_error",
                "param": "messages.[1].role",
                "code": None,
            }
        },
    ),
    (
        "openai tool call with no result",
        "/openai/v1/chat/completions",
        {"model": "gpt", "messages": [USER, _openai_call("call_9"), USER]},
        None,
        400,
        {
            "error": {
                "message": "An assistant message with 'tool_calls' must be followed by tool "
                "messages responding to each 'tool_call_id'. The following tool_call_ids did "
                "not have response messages: call_9",
                "type": "invalid_request_error",
                "param": "messages.[1].role",
                "code": None,
            }
        },
    ),
    (
        "openai bad tool name",
        "/openai/v1/chat/completions",
        {
            "model": "gpt",
            "messages": [USER],
            "tools": [{"type": "function", "function": {"name": "get weather"}}],
        },
        None,
        400,
        {
            "error": {
                "message": "Invalid 'tools[0].function.name': string does not match pattern. "
                "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
                "type": "invalid_request_error",
                "param": "tools[0].function.name",
                "code": "invalid_value",
            }
        },
    ),
    (
        "openai without a key",
        "/openai/v1/chat/completions",
        {"model": "gpt", "messages": [USER]},
        {},
        401,
        None,  # checked below: the long "You didn't provide an API key" body
    ),
    (
        "groq without a key",
        "/groq/openai/v1/chat/completions",
        {"model": "llama", "messages": [USER]},
        {},
        401,
        {
            "error": {
                "message": "Invalid API Key",
                "type": "invalid_request_error",
                "code": "invalid_api_key",
            }
        },
    ),
    (
        "mistral id that is not 9 characters",
        "/mistral/v1/chat/completions",
        {"model": "mistral", "messages": [USER, _openai_call("call_1"), _tool("call_1")]},
        None,
        400,
        {
            "object": "error",
            "message": "Tool call id was call_1 but must be a-z, A-Z, 0-9, with a length of 9.",
            "type": "invalid_function_call",
            "param": None,
            "code": "3280",
        },
    ),
    (
        "mistral tool right after user",
        "/mistral/v1/chat/completions",
        {"model": "mistral", "messages": [USER, _tool("abcdefghi")]},
        None,
        400,
        {
            "object": "error",
            "message": "Unexpected role 'tool' after role 'user'",
            "type": "invalid_request_message_order",
            "param": None,
            "code": "3230",
        },
    ),
    (
        "mistral without a key",
        "/mistral/v1/chat/completions",
        {"model": "mistral", "messages": [USER]},
        {},
        401,
        {"detail": "Unauthorized"},
    ),
    (
        "bedrock tool history without toolConfig",
        BEDROCK_PATH,
        {"messages": [BEDROCK_USER, _bedrock_use("t1"), _bedrock_results("t1")]},
        None,
        400,
        {
            "message": "The toolConfig field must be defined when using toolUse and toolResult "
            "content blocks."
        },
    ),
    (
        "bedrock conversation starting with an assistant turn",
        "/bedrock/model/amazon.nova-micro-v1:0/converse",
        {"messages": [{"role": "assistant", "content": [{"text": "hello"}]}, BEDROCK_USER]},
        None,
        400,
        {
            "message": "A conversation must start with a user message. Try again with a "
            "conversation that starts with a user message."
        },
    ),
    (
        "bedrock two results for one use",
        BEDROCK_PATH,
        {
            "messages": [BEDROCK_USER, _bedrock_use("t1"), _bedrock_results("t1", "t2")],
            "toolConfig": BEDROCK_TOOLS,
        },
        None,
        400,
        {
            "message": "The number of toolResult blocks at messages.2.content exceeds the "
            "number of toolUse blocks of previous turn."
        },
    ),
    (
        "bedrock unsigned",
        BEDROCK_PATH,
        {"messages": [BEDROCK_USER]},
        {},
        403,
        {"message": "Missing Authentication Token"},
    ),
    (
        "gemini additionalProperties",
        GEMINI_PATH,
        {
            "contents": [GEMINI_USER],
            "tools": _gemini_tools({"type": "object", "additionalProperties": False}),
        },
        None,
        400,
        None,  # checked below, with the fieldViolations details
    ),
    (
        "gemini two calls answered by one response",
        GEMINI_PATH,
        {"contents": [GEMINI_USER, _gemini_call_turn(2), _gemini_responses(1)]},
        None,
        400,
        {
            "error": {
                "code": 400,
                "message": "Please ensure that the number of function response parts is equal "
                "to the number of function call parts of the function call turn.",
                "status": "INVALID_ARGUMENT",
            }
        },
    ),
    (
        "gemini without a key",
        GEMINI_PATH,
        {"contents": [GEMINI_USER]},
        {},
        403,
        {
            "error": {
                "code": 403,
                "message": "Method doesn't allow unregistered callers (callers without "
                "established identity). Please use API Key or other form of API consumer "
                "identity to call this API.",
                "status": "PERMISSION_DENIED",
            }
        },
    ),
    (
        "ollama without a model",
        "/ollama/api/chat",
        {"messages": [USER]},
        {},
        400,
        {"error": "model is required"},
    ),
]


@pytest.mark.parametrize(
    ("path", "body", "headers", "status", "expected"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_bad_request_gets_the_real_error(
    server: MockLLMServer,
    path: str,
    body: Any,
    headers: dict[str, str] | None,
    status: int,
    expected: Any,
) -> None:
    server.enqueue(text="never served")
    resp = post(server, path, body, headers)
    assert resp.status_code == status
    if expected is not None:
        answer = resp.json()
        if "request_id" in answer:  # Anthropic's envelope around the error object
            assert answer["type"] == "error"
            answer = answer["error"]
        assert answer == expected
    assert server.last_request().rejected_by  # logged, with the rule it broke
    assert server.pending() == 1  # a refused request takes nothing from the queue
    server.reset()


@pytest.mark.parametrize(
    ("path", "body", "headers"), [c[1:4] for c in CASES], ids=[c[0] for c in CASES]
)
def test_strict_false_serves_every_bad_request(
    lenient: MockLLMServer, path: str, body: Any, headers: dict[str, str] | None
) -> None:
    lenient.enqueue(text="served")
    assert post(lenient, path, body, headers).status_code == 200
    assert lenient.last_request().rejected_by is None


def test_openai_missing_key_body(server: MockLLMServer) -> None:
    resp = post(server, "/openai/v1/chat/completions", {"model": "m", "messages": [USER]}, {})
    error = resp.json()["error"]
    assert error["message"].startswith("You didn't provide an API key.")
    assert (error["type"], error["param"], error["code"]) == ("invalid_request_error", None, None)
    assert resp.headers["x-request-id"].startswith("req_")


def test_gemini_unknown_schema_field_names_each_place(server: MockLLMServer) -> None:
    parameters = {
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "b": {"type": "array", "items": {"type": "object", "additionalProperties": True}},
        },
        "$schema": "x",
    }
    body = {"contents": [GEMINI_USER], "tools": _gemini_tools(parameters)}
    error = post(server, GEMINI_PATH, body).json()["error"]
    where = [
        "tools[0].function_declarations[0].parameters",
        "tools[0].function_declarations[0].parameters.properties[1].value.items",
    ]
    lines = [
        'Invalid JSON payload received. Unknown name "$schema" at \'' + where[0] + "': Cannot "
        "find field.",
        'Invalid JSON payload received. Unknown name "additionalProperties" at '
        f"'{where[1]}': Cannot find field.",
    ]
    assert error == {
        "code": 400,
        "message": "\n".join(lines),
        "status": "INVALID_ARGUMENT",
        "details": [
            {
                "@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": [
                    {"field": where[0], "description": lines[0]},
                    {"field": where[1], "description": lines[1]},
                ],
            }
        ],
    }


def test_gemini_json_schema_parameters_are_not_checked(server: MockLLMServer) -> None:
    server.enqueue("gemini", text="ok")
    declaration = {"name": "f", "parametersJsonSchema": {"additionalProperties": False}}
    body = {"contents": [GEMINI_USER], "tools": [{"functionDeclarations": [declaration]}]}
    assert post(server, GEMINI_PATH, body).status_code == 200


def test_valid_tool_round_trips_are_answered(server: MockLLMServer) -> None:
    """The good shapes next to the bad ones above are served."""
    cases = [
        (
            "/openai/v1/chat/completions",
            {"model": "gpt", "messages": [USER, _openai_call("call_1"), _tool("call_1")]},
        ),
        (
            "/mistral/v1/chat/completions",
            {"model": "mistral", "messages": [USER, MISTRAL_CALL, _tool("abcdefghi")]},
        ),
        (
            BEDROCK_PATH,
            {
                "messages": [BEDROCK_USER, _bedrock_use("t1"), _bedrock_results("t1")],
                "toolConfig": BEDROCK_TOOLS,
            },
        ),
        (GEMINI_PATH, {"contents": [GEMINI_USER, _gemini_call_turn(2), _gemini_responses(2)]}),
    ]
    for path, body in cases:
        server.enqueue(text="ok")
        assert post(server, path, body).status_code == 200, path


def test_deeply_nested_body_is_logged_and_refused(server: MockLLMServer) -> None:
    depth = 1000
    raw = b'{"model": "m", "messages": ' + b"[" * depth + b"]" * depth + b"}"
    resp = httpx.post(server.url + "/openai/v1/chat/completions", content=raw, headers=KEYS)
    assert resp.status_code == 400  # not a crash: the body is not a request OpenAI takes
    assert server.last_request().raw_body == raw


def test_unknown_endpoint_is_404_without_model_not_found(server: MockLLMServer) -> None:
    resp = post(server, "/openai/v1/embeddingz", {"model": "m"})
    assert resp.status_code == 404
    assert resp.json()["error"]["code"] is None


def test_bedrock_401_is_an_auth_error(server: MockLLMServer) -> None:
    server.enqueue_error(
        401, "bedrock", message="The security token included in the request is invalid."
    )
    resp = post(server, BEDROCK_PATH, {"messages": [BEDROCK_USER]})
    assert resp.status_code == 401
    assert resp.headers["x-amzn-errortype"].startswith("UnrecognizedClientException:")
