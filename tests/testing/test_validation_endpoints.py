"""MockLLMServer refuses what the Responses API, Azure, Claude on Bedrock / Vertex AI and
Gemini on Vertex AI refuse: the status and error body each real API answers with, the rule
logged, nothing taken from the queue; strict=False serves the same requests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from zerda.testing import MockLLMServer

BEARER = {"authorization": "Bearer test-key"}
SIGNED = {"authorization": "AWS4-HMAC-SHA256 Credential=test"}
USER = {"role": "user", "content": "hi"}
RESPONSES = "/openai-responses/v1/responses"
OPENAI_RESPONSES = "/openai/v1/responses"
BEDROCK = "/anthropic-bedrock/model/anthropic.claude-sonnet-4-6/invoke"
CLAUDE_VERTEX = (
    "/anthropic-vertex/projects/p/locations/us-east5/publishers/anthropic/models/m:rawPredict"
)
GEMINI_VERTEX = (
    "/vertex/v1beta1/projects/p/locations/us-central1/publishers/google/models/m:generateContent"
)
CLAUDE_BODY = {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 10, "messages": [USER]}


def _openai_error(message: str, param: str | None, code: str | None) -> dict[str, Any]:
    return {
        "error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    }


def _malformed(problem: str) -> dict[str, str]:
    return {
        "message": f"Malformed input request: #: {problem}, please reformat your input and try "
        "again."
    }


# (id, path, body, headers, status, expected body, rule)
CASES: list[tuple[str, str, Any, dict[str, str], int, Any, str]] = [
    (
        "responses assistant message with an input part",
        RESPONSES,
        {
            "model": "gpt-5",
            "input": [
                USER,
                {"role": "assistant", "content": [{"type": "input_text", "text": "x"}]},
            ],
        },
        BEARER,
        400,
        _openai_error(
            "Invalid value: 'input_text'. Supported values are: 'output_text' and 'refusal'.",
            "input[1].content[0]",
            "invalid_value",
        ),
        "content_parts_valid",
    ),
    (
        "responses tool output with an output part",
        RESPONSES,
        {
            "model": "gpt-5",
            "input": [
                USER,
                {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
                {
                    "type": "function_call_output",
                    "call_id": "c1",
                    "output": [{"type": "output_text", "text": "x"}],
                },
            ],
        },
        BEARER,
        400,
        _openai_error(
            "Invalid value: 'output_text'. Supported values are: 'input_text', 'input_image', "
            "and 'input_file'.",
            "input[2].output[0]",
            "invalid_value",
        ),
        "content_parts_valid",
    ),
    (
        "responses chat-shaped function tool",
        RESPONSES,
        {
            "model": "gpt-5",
            "input": [USER],
            "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
        },
        BEARER,
        400,
        _openai_error(
            "Missing required parameter: 'tools[0].name'.",
            "tools[0].name",
            "missing_required_parameter",
        ),
        "function_tools_valid",
    ),
    (
        "responses tool name with a dot",
        RESPONSES,
        {"model": "gpt-5", "input": [USER], "tools": [{"type": "function", "name": "fs.read"}]},
        BEARER,
        400,
        _openai_error(
            "Invalid 'tools[0].name': string does not match pattern. Expected a string that "
            "matches the pattern '^[a-zA-Z0-9_-]+$'.",
            "tools[0].name",
            "invalid_value",
        ),
        "function_tools_valid",
    ),
    (
        "responses json_schema format without its schema",
        RESPONSES,
        {
            "model": "gpt-5",
            "input": [USER],
            "text": {"format": {"type": "json_schema", "name": "city"}},
        },
        BEARER,
        400,
        _openai_error(
            "Missing required parameter: 'text.format.schema'.",
            "text.format.schema",
            "missing_required_parameter",
        ),
        "text_format_valid",
    ),
    (
        "azure responses without credentials",
        "/azure-responses/openai/responses?api-version=2025-04-01-preview",
        {"model": "my-deployment", "input": [USER]},
        {},
        401,
        {
            "error": {
                "message": "Access denied due to missing subscription key. Make sure to include "
                "subscription key when making requests to an API.",
                "type": "invalid_request_error",
                "param": None,
                "code": "401",
            }
        },
        "credentials_present",
    ),
    (
        "claude on bedrock with the model in the body",
        BEDROCK,
        {**CLAUDE_BODY, "model": "claude", "stream": True},
        SIGNED,
        400,
        _malformed(
            "extraneous key [model] is not permitted#: extraneous key [stream] is not permitted"
        ),
        "no_path_keys_in_body",
    ),
    (
        "claude on bedrock without anthropic_version",
        BEDROCK,
        {"max_tokens": 10, "messages": [USER]},
        SIGNED,
        400,
        _malformed("required key [anthropic_version] not found"),
        "version_valid",
    ),
    (
        "claude on bedrock with a model id as the version",
        BEDROCK,
        {**CLAUDE_BODY, "anthropic_version": "claude-3-sonnet-20240229-v1:0"},
        SIGNED,
        400,
        {"message": "Invalid API version: claude-3-sonnet-20240229-v1:0"},
        "version_valid",
    ),
    (
        "claude on bedrock: a messages rule, as a ValidationException",
        BEDROCK,
        {**CLAUDE_BODY, "messages": [{"role": "user", "content": ""}]},
        SIGNED,
        400,
        None,
        "content_not_empty",
    ),
    (
        "claude on vertex without anthropic_version",
        CLAUDE_VERTEX,
        {"max_tokens": 10, "messages": [USER]},
        BEARER,
        400,
        {"type": "invalid_request_error", "message": "anthropic_version: Field required"},
        "version_valid",
    ),
    (
        "gemini on vertex with an API key",
        GEMINI_VERTEX,
        {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
        {"x-goog-api-key": "k"},
        401,
        {
            "error": {
                "code": 401,
                "message": "API keys are not supported by this API. Expected OAuth2 access "
                "token or other authentication credentials that assert a principal. See "
                "https://cloud.google.com/docs/authentication",
                "status": "UNAUTHENTICATED",
            }
        },
        "oauth_present",
    ),
    # --- issue 33: the Responses API's ranges, schemas and Chat-style items; the same rules
    # on /openai/v1/responses, where responses.create lands with the openai row's base URL ---
    (
        "responses temperature below 0 on the openai row",
        OPENAI_RESPONSES,
        {"model": "gpt-5", "input": "hi", "temperature": -1},
        BEARER,
        400,
        _openai_error(
            "Invalid 'temperature': decimal below minimum value. Expected a value >= 0, but got "
            "-1 instead.",
            "temperature",
            "decimal_below_min_value",
        ),
        "temperature_in_range",
    ),
    (
        "responses chat-style tool_calls in input",
        RESPONSES,
        {"model": "gpt-5", "input": [USER, {"role": "assistant", "tool_calls": []}]},
        BEARER,
        400,
        _openai_error(
            "Unknown parameter: 'input[1].tool_calls'.", "input[1].tool_calls", "unknown_parameter"
        ),
        "chat_items_refused",
    ),
    (
        "responses required tool_choice without tools",
        OPENAI_RESPONSES,
        {"model": "gpt-5", "input": "hi", "tool_choice": "required"},
        BEARER,
        400,
        _openai_error(
            "Tool choice 'required' must be specified with 'tools' parameter.", "tool_choice", None
        ),
        "tool_choice_needs_tools",
    ),
    (
        "responses strict tool without additionalProperties",
        RESPONSES,
        {
            "model": "gpt-5",
            "input": "hi",
            "tools": [
                {
                    "type": "function",
                    "name": "f",
                    "strict": True,
                    "parameters": {"type": "object", "properties": {"a": {"type": "string"}}},
                }
            ],
        },
        BEARER,
        400,
        _openai_error(
            "Invalid schema for function 'f': In context=(), 'additionalProperties' is required "
            "to be supplied and to be false.",
            "tools[0].parameters",
            "invalid_function_parameters",
        ),
        "tool_schemas_valid",
    ),
    (
        "responses text format schema that is not a JSON Schema",
        RESPONSES,
        {
            "model": "gpt-5",
            "input": "hi",
            "text": {"format": {"type": "json_schema", "name": "r", "schema": {"type": "objet"}}},
        },
        BEARER,
        400,
        _openai_error(
            "Invalid schema for response_format 'r': schema must be a JSON Schema of 'type: "
            '"object"\', got \'type: "objet"\'.',
            "text.format.schema",
            None,
        ),
        "text_format_schema_valid",
    ),
]
IDS = [c[0] for c in CASES]


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s


@pytest.fixture(scope="module")
def lenient() -> Iterator[MockLLMServer]:
    with MockLLMServer(strict=False) as s:
        yield s


@pytest.mark.parametrize(
    ("path", "body", "headers", "status", "expected", "rule"), [c[1:] for c in CASES], ids=IDS
)
def test_bad_request_gets_the_real_error(
    server: MockLLMServer,
    path: str,
    body: Any,
    headers: dict[str, str],
    status: int,
    expected: Any,
    rule: str,
) -> None:
    server.reset()
    provider = path.split("/")[1]
    server.enqueue(provider, text="never served")
    resp = httpx.post(server.url + path, json=body, headers=headers)
    assert resp.status_code == status, resp.text
    answer = resp.json()
    if "request_id" in answer:  # Anthropic's envelope around the error object
        answer = answer["error"]
    if expected is not None:
        assert answer == expected
    if provider == "anthropic-bedrock":
        assert resp.headers["x-amzn-errortype"].startswith("ValidationException")
    assert server.last_request(provider).rejected_by == rule
    assert server.pending(provider) == 1


@pytest.mark.parametrize(("path", "body", "headers"), [c[1:4] for c in CASES], ids=IDS)
def test_strict_false_serves_every_bad_request(
    lenient: MockLLMServer, path: str, body: Any, headers: dict[str, str]
) -> None:
    provider = path.split("/")[1]
    lenient.enqueue(provider, text="served")
    assert httpx.post(lenient.url + path, json=body, headers=headers).status_code == 200
    assert lenient.last_request(provider).rejected_by is None


def test_openai_row_answers_responses_in_the_responses_shape(server: MockLLMServer) -> None:
    """POST /openai/v1/responses (the openai row's base URL + the SDK's /responses) is
    validated with the Responses rules and answered with a Responses body."""
    import openai

    server.reset()
    server.enqueue("openai", text="hello")
    client = openai.OpenAI(**server.sdk_client_kwargs("openai"), max_retries=0)
    response = client.responses.create(model="gpt-5", input="hi")
    assert (response.object, response.output_text) == ("response", "hello")
    assert server.last_request("openai").path == "/v1/responses"
