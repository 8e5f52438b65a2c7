"""MockLLMServer answers the providers' token-counting endpoints (Anthropic
``/v1/messages/count_tokens`` and Vertex AI's ``count-tokens:rawPredict``, Gemini and
Vertex AI ``countTokens``, Bedrock ``CountTokens``, Responses ``/v1/responses/input_tokens``):
each in its API's answer shape, with a deterministic count of the request or the count a
queued script gives, and validated as the real APIs validate them."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from zerda.llm import registry
from zerda.testing import MockLLMServer
from zerda.testing import wires as mock_wires
from zerda.testing._counting import request_tokens

BEARER = {"authorization": "Bearer test-key"}
SIGNED = {"authorization": "AWS4-HMAC-SHA256 Credential=test"}
CLAUDE_KEY = {"x-api-key": "test-key", "anthropic-version": "2023-06-01"}
GOOGLE_KEY = {"x-goog-api-key": "test-key"}
USER = {"role": "user", "content": "hi"}
GEMINI_CONTENTS = [{"role": "user", "parts": [{"text": "hi"}]}]

CLAUDE = "/anthropic/v1/messages/count_tokens"
CLAUDE_VERTEX = (
    "/anthropic-vertex/projects/p/locations/us-east5/publishers/anthropic/models/"
    "count-tokens:rawPredict"
)
GEMINI = "/gemini/v1beta/models/gemini-2.5-flash:countTokens"
VERTEX = (
    "/vertex/v1beta1/projects/p/locations/l/publishers/google/models/gemini-2.5-flash:countTokens"
)
BEDROCK = "/bedrock/model/anthropic.claude-sonnet-4-6/count-tokens"
RESPONSES = "/openai-responses/v1/responses/input_tokens"
CLAUDE_BODY = {"model": "claude-sonnet-4-6", "messages": [USER]}
CONVERSE_BODY = {
    "input": {"converse": {"messages": [{"role": "user", "content": [{"text": "hi"}]}]}}
}


def _answer(path: str, n: int) -> Any:
    """Each API's answer for a count of ``n``."""
    if path in (CLAUDE, CLAUDE_VERTEX):
        return {"input_tokens": n}  # https://docs.anthropic.com/en/api/messages-count-tokens
    if path in (GEMINI, VERTEX):
        return {"totalTokens": n, "promptTokensDetails": [{"modality": "TEXT", "tokenCount": n}]}
    if path == BEDROCK:
        return {"inputTokens": n}
    return {"object": "response.input_tokens", "input_tokens": n}


# (id, path, a valid body, headers)
VALID: list[tuple[str, str, Any, dict[str, str]]] = [
    ("anthropic", CLAUDE, CLAUDE_BODY, CLAUDE_KEY),
    (
        "anthropic-vertex",
        CLAUDE_VERTEX,
        {**CLAUDE_BODY, "anthropic_version": "vertex-2023-10-16"},
        BEARER,
    ),
    ("gemini contents", GEMINI, {"contents": GEMINI_CONTENTS}, GOOGLE_KEY),
    (
        "gemini generateContentRequest",
        GEMINI,
        {
            "generateContentRequest": {
                "model": "models/gemini-2.5-flash",
                "contents": GEMINI_CONTENTS,
                "systemInstruction": {"parts": [{"text": "Be brief."}]},
                "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
            }
        },
        GOOGLE_KEY,
    ),
    (
        "vertex",
        VERTEX,
        {"contents": GEMINI_CONTENTS, "systemInstruction": {"parts": [{"text": "Be brief."}]}},
        BEARER,
    ),
    ("bedrock", BEDROCK, CONVERSE_BODY, SIGNED),
    ("openai-responses", RESPONSES, {"model": "gpt-5-mini", "input": "hi"}, BEARER),
    ("openai-responses without a model", RESPONSES, {"input": [USER]}, BEARER),
]
VALID_IDS = [c[0] for c in VALID]


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s


@pytest.fixture(scope="module")
def lenient() -> Iterator[MockLLMServer]:
    with MockLLMServer(strict=False) as s:
        yield s


def _provider(path: str) -> str:
    return path.split("/")[1]


@pytest.mark.parametrize(("path", "body", "headers"), [c[1:] for c in VALID], ids=VALID_IDS)
def test_with_nothing_queued_the_count_is_the_requests(
    server: MockLLMServer, path: str, body: Any, headers: dict[str, str]
) -> None:
    server.reset()
    resp = httpx.post(server.url + path, json=body, headers=headers)
    assert resp.status_code == 200, resp.text
    assert resp.json() == _answer(path, request_tokens(body))
    assert server.last_request(_provider(path)).rejected_by is None


def test_the_requests_count_is_its_json_over_four() -> None:
    # Compact, keys sorted: {"a":"bcdefgh"} is 15 characters, 4 tokens.
    assert request_tokens({"a": "bcdefgh"}) == 4
    assert request_tokens({"b": 1, "a": 2}) == request_tokens({"a": 2, "b": 1}) == 4
    assert request_tokens({}) == 1


def test_a_longer_request_counts_more(server: MockLLMServer) -> None:
    server.reset()
    short = {"model": "gpt-5-mini", "input": "hi"}
    long = {"model": "gpt-5-mini", "input": "hi " * 400}
    counts = [
        httpx.post(server.url + RESPONSES, json=b, headers=BEARER).json()["input_tokens"]
        for b in (short, long, short)
    ]
    assert counts[0] == counts[2] < counts[1] - 250


@pytest.mark.parametrize(("path", "body", "headers"), [c[1:] for c in VALID], ids=VALID_IDS)
def test_a_queued_script_sets_the_count(
    server: MockLLMServer, path: str, body: Any, headers: dict[str, str]
) -> None:
    server.reset()
    server.enqueue(_provider(path), usage={"input_tokens": 1234, "output_tokens": 0})
    resp = httpx.post(server.url + path, json=body, headers=headers)
    assert resp.json() == _answer(path, 1234)
    assert server.pending(_provider(path)) == 0


@pytest.mark.parametrize(("path", "body", "headers"), [c[1:] for c in VALID], ids=VALID_IDS)
def test_a_queued_error_answers_a_count(
    server: MockLLMServer, path: str, body: Any, headers: dict[str, str]
) -> None:
    server.reset()
    server.enqueue_error(429, _provider(path), message="slow down", retry_after=2)
    resp = httpx.post(server.url + path, json=body, headers=headers)
    assert resp.status_code == 429
    assert "slow down" in resp.text
    assert resp.headers["retry-after"] == "2"


def test_a_default_answer_counts_too(server: MockLLMServer) -> None:
    server.reset()
    server.set_default(text="a default for generate")  # no usage: the request's count
    body = {"model": "gpt-5-mini", "input": "hi"}
    resp = httpx.post(server.url + RESPONSES, json=body, headers=BEARER)
    assert resp.json() == _answer(RESPONSES, request_tokens(body))


def test_generate_endpoints_still_need_a_queued_answer(server: MockLLMServer) -> None:
    # Only counting endpoints answer with nothing queued.
    server.reset()
    body = {"model": "claude-sonnet-4-6", "max_tokens": 10, "messages": [USER]}
    resp = httpx.post(server.url + "/anthropic/v1/messages", json=body, headers=CLAUDE_KEY)
    assert resp.status_code == 400
    assert "nothing queued" in resp.text


def test_a_wire_without_a_counting_endpoint_does_not_serve_one(server: MockLLMServer) -> None:
    # Claude on Bedrock: the SDK refuses to count there, and the mock serves no such path.
    server.reset()
    path = "/anthropic-bedrock/model/anthropic.claude-sonnet-4-6/count-tokens"
    resp = httpx.post(server.url + path, json=CLAUDE_BODY, headers=SIGNED)
    assert resp.status_code == 404


# --- validation -------------------------------------------------------------------------------


def _claude_error(message: str) -> dict[str, str]:
    return {"type": "invalid_request_error", "message": message}


def _google_error(message: str) -> dict[str, Any]:
    return {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}


# (id, path, body, headers, status, expected error, rule)
CASES: list[tuple[str, str, Any, dict[str, str], int, Any, str]] = [
    (
        "anthropic max_tokens",
        CLAUDE,
        {**CLAUDE_BODY, "max_tokens": 100},
        CLAUDE_KEY,
        400,
        _claude_error("max_tokens: Extra inputs are not permitted"),
        "count_fields_known",
    ),
    (
        "anthropic without a model",
        CLAUDE,
        {"messages": [USER]},
        CLAUDE_KEY,
        400,
        _claude_error("model: Field required"),
        "model_present",
    ),
    (
        "anthropic without a key",
        CLAUDE,
        CLAUDE_BODY,
        {},
        401,
        {"type": "authentication_error", "message": "x-api-key header is required"},
        "api_key_present",
    ),
    (
        "anthropic history rules",
        CLAUDE,
        {"model": "m", "messages": [{"role": "system", "content": "x"}]},
        CLAUDE_KEY,
        400,
        _claude_error("messages.0.role: Input should be 'user' or 'assistant'"),
        "roles_valid",
    ),
    (
        "anthropic-vertex without anthropic_version",
        CLAUDE_VERTEX,
        CLAUDE_BODY,
        BEARER,
        400,
        _claude_error("anthropic_version: Field required"),
        "version_valid",
    ),
    (
        "anthropic-vertex without a model",
        CLAUDE_VERTEX,
        {"anthropic_version": "vertex-2023-10-16", "messages": [USER]},
        BEARER,
        400,
        _claude_error("model: Field required"),
        "model_present",
    ),
    (
        "gemini contents and generateContentRequest",
        GEMINI,
        {"contents": GEMINI_CONTENTS, "generateContentRequest": {"model": "models/m"}},
        GOOGLE_KEY,
        400,
        _google_error(
            "* CountTokensRequest: exactly one of contents and generate_content_request "
            "must be set\n"
        ),
        "count_input_given",
    ),
    (
        "gemini generateContentRequest without a model",
        GEMINI,
        {"generateContentRequest": {"contents": GEMINI_CONTENTS}},
        GOOGLE_KEY,
        400,
        _google_error("* GenerateContentRequest.model: model is not specified\n"),
        "count_model_given",
    ),
    (
        "gemini rules on the counted request",
        GEMINI,
        {
            "generateContentRequest": {
                "model": "models/m",
                "contents": [{"role": "assistant", "parts": [{"text": "x"}]}],
            }
        },
        GOOGLE_KEY,
        400,
        _google_error("Please use a valid role: user, model."),
        "roles_valid",
    ),
    (
        "vertex toolConfig",
        VERTEX,
        {"contents": GEMINI_CONTENTS, "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}}},
        BEARER,
        400,
        _google_error(
            'Invalid JSON payload received. Unknown name "toolConfig": Cannot find field.'
        ),
        "count_fields_known",
    ),
    (
        "vertex with an API key",
        VERTEX,
        {"contents": GEMINI_CONTENTS},
        GOOGLE_KEY,
        401,
        None,
        "oauth_present",
    ),
    (
        "bedrock without input",
        BEDROCK,
        {},
        SIGNED,
        400,
        {
            "message": "1 validation error detected: Value null at 'input' failed to satisfy "
            "constraint: Member must not be null"
        },
        "count_input_given",
    ),
    (
        "bedrock two inputs",
        BEDROCK,
        {"input": {**CONVERSE_BODY["input"], "invokeModel": {"body": "{}"}}},
        SIGNED,
        400,
        {"message": "input: exactly one of converse and invokeModel must be set"},
        "count_input_given",
    ),
    (
        "bedrock converse rules",
        BEDROCK,
        {"input": {"converse": {"messages": [{"role": "user", "content": [{"text": "x"}]}] * 2}}},
        SIGNED,
        400,
        {
            "message": "A conversation must alternate between user and assistant roles. Make "
            "sure the conversation alternates between user and assistant roles and try again."
        },
        "roles_alternate",
    ),
    (
        "responses store",
        RESPONSES,
        {"model": "gpt-5-mini", "input": "hi", "store": False},
        BEARER,
        400,
        {
            "error": {
                "message": "Unknown parameter: 'store'.",
                "type": "invalid_request_error",
                "param": "store",
                "code": "unknown_parameter",
            }
        },
        "count_fields_known",
    ),
    (
        "responses an output without its call",
        RESPONSES,
        {"input": [{"type": "function_call_output", "call_id": "c9", "output": "x"}]},
        BEARER,
        400,
        None,
        "outputs_answer_calls",
    ),
]
IDS = [c[0] for c in CASES]


@pytest.mark.parametrize(
    ("path", "body", "headers", "status", "expected", "rule"), [c[1:] for c in CASES], ids=IDS
)
def test_a_bad_count_request_gets_the_real_error(
    server: MockLLMServer,
    path: str,
    body: Any,
    headers: dict[str, str],
    status: int,
    expected: Any,
    rule: str,
) -> None:
    server.reset()
    provider = _provider(path)
    server.enqueue(provider, usage={"input_tokens": 1})
    resp = httpx.post(server.url + path, json=body, headers=headers)
    assert resp.status_code == status, resp.text
    answer = resp.json()
    if "request_id" in answer:  # Anthropic's envelope around the error object
        answer = answer["error"]
    if expected is not None:
        assert answer == expected
    assert server.last_request(provider).rejected_by == rule
    assert server.pending(provider) == 1  # nothing taken from the queue


@pytest.mark.parametrize(("path", "body", "headers"), [c[1:4] for c in CASES], ids=IDS)
def test_strict_false_counts_every_bad_request(
    lenient: MockLLMServer, path: str, body: Any, headers: dict[str, str]
) -> None:
    resp = httpx.post(lenient.url + path, json=body, headers=headers)
    assert resp.json() == _answer(path, request_tokens(body))


# --- layout -----------------------------------------------------------------------------------


COUNTING_ROWS = [n for n in registry.NAMES if registry.get(n).traits.count_tokens]


@pytest.mark.parametrize("name", COUNTING_ROWS)
def test_every_row_with_a_counting_endpoint_is_served(name: str) -> None:
    """A row whose traits name a counting endpoint speaks a wire whose MockWire serves one,
    with a renderer that answers it."""
    wire = mock_wires.mock_wire(registry.get(name).wire)
    assert wire.count_paths is not None
    assert callable(getattr(importlib.import_module(wire.renderer), "render_count", None))
