"""Issue 16's wire details, through the running server: each provider's own 404 for an
unknown URL (never ``model_not_found``), request-id headers, Gemini's JSON-array stream
without ``alt=sse``, Bedrock's 401, Groq's ``tool_use_failed`` in Groq's shape (in a stream
and as a 400), and a body nested far too deep answered with an error and logged."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from zerda.llm import create_interface
from zerda.testing import GEMINI_THOUGHT_SIGNATURE, MockLLMServer

KEYS = {"authorization": "Bearer k", "x-api-key": "k", "x-goog-api-key": "k"}
KEYS["anthropic-version"] = "2023-06-01"  # every Anthropic SDK sends it (versioning page)
USER = {"role": "user", "content": "hi"}


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s


@pytest.fixture
def mock(server: MockLLMServer) -> MockLLMServer:
    server.reset()
    return server


def post(server: MockLLMServer, path: str, body: Any = None, **kw: Any) -> httpx.Response:
    content = kw.pop("content", None)
    if content is None:
        content = json.dumps(body if body is not None else {"model": "m"}).encode()
    headers = {"content-type": "application/json", **KEYS}
    return httpx.post(server.url + path, content=content, headers=headers, timeout=30, **kw)


# --- unknown URLs: the provider's own 404 ----------------------------------------------

UNKNOWN_URL = "Please check the URL for typos, or see the docs at"
NOT_FOUND = [
    (
        "/openai/v1/embeddingz",
        {
            "error": {
                "message": "Invalid URL (POST /v1/embeddingz)",
                "type": "invalid_request_error",
                "param": None,
                "code": None,
            }
        },
    ),
    (
        "/openai/chat/completions",
        {
            "error": {
                "message": f"Unknown request URL: POST /chat/completions. {UNKNOWN_URL} "
                "https://platform.openai.com/docs/api-reference/.",
                "type": "invalid_request_error",
                "param": None,
                "code": "unknown_url",
            }
        },
    ),
    (
        "/groq/openai/chat/completions",
        {
            "error": {
                "message": f"Unknown request URL: POST /openai/chat/completions. {UNKNOWN_URL} "
                "https://console.groq.com/docs/",
                "type": "invalid_request_error",
                "code": "unknown_url",
            }
        },
    ),
    ("/anthropic/v1/message", {"type": "not_found_error", "message": "Not Found"}),
]


@pytest.mark.parametrize(("path", "expected"), NOT_FOUND, ids=[p for p, _ in NOT_FOUND])
def test_unknown_url_gets_the_providers_own_404(
    mock: MockLLMServer, path: str, expected: dict[str, Any]
) -> None:
    resp = post(mock, path)
    assert resp.status_code == 404
    body = resp.json()
    if path.startswith("/anthropic"):
        assert (body.pop("type"), body.pop("request_id")) == ("error", resp.headers["request-id"])
        body = body["error"]
    assert body == expected
    assert mock.last_request().path == _without_prefix(path)


def _without_prefix(path: str) -> str:
    """``/v1/x`` from ``/openai/v1/x``: the path as the provider sees it."""
    return "/" + path.split("/", 2)[2]


def test_ollama_unknown_url_is_gins_plain_text_404(mock: MockLLMServer) -> None:
    resp = post(mock, "/ollama/api/chatt")
    assert (resp.status_code, resp.text) == (404, "404 page not found")
    assert resp.headers["content-type"] == "text/plain"


@pytest.mark.parametrize(
    "path", ["/mistral/v1/chat/complete", "/bedrock/model/m/conversee", "/gemini/v1beta/x"]
)
def test_other_unknown_urls_never_say_model_not_found(mock: MockLLMServer, path: str) -> None:
    resp = post(mock, path)
    assert resp.status_code == 404
    assert "model_not_found" not in resp.text
    assert f"POST {_without_prefix(path)}" in resp.text


# --- request ids ---------------------------------------------------------------------------

REQUEST_IDS = {
    "openai": {"x-request-id": r"req_[0-9a-f]{32}"},
    "groq": {"x-request-id": r"req_[0-9a-f]{32}"},
    "mistral": {"mistral-correlation-id": r"[0-9a-f-]{36}", "x-kong-request-id": r"[0-9a-f-]{36}"},
    "anthropic": {"request-id": r"req_011C[A-Za-z0-9]{22}"},
    "bedrock": {"x-amzn-requestid": r"[0-9a-f-]{36}"},
}


VALID = {
    "openai": ("/openai/v1/chat/completions", {"model": "m", "messages": [USER]}),
    "groq": ("/groq/openai/v1/chat/completions", {"model": "m", "messages": [USER]}),
    "mistral": ("/mistral/v1/chat/completions", {"model": "m", "messages": [USER]}),
    "anthropic": ("/anthropic/v1/messages", {"model": "m", "max_tokens": 5, "messages": [USER]}),
    "bedrock": ("/bedrock/model/m/converse", {"messages": [{"role": "user", "content": [{"text": "hi"}]}]}),
}  # fmt: skip


@pytest.mark.parametrize("provider", sorted(REQUEST_IDS))
def test_success_and_error_carry_the_request_id_header(mock: MockLLMServer, provider: str) -> None:
    """OpenAI and Groq ``x-request-id``, Anthropic ``request-id``, Mistral's gateway ids,
    Bedrock ``x-amzn-RequestId`` (cited in each wire's folder)."""
    path, body = VALID[provider]
    mock.enqueue(provider, text="ok")
    mock.enqueue_error(500, provider, message="boom")
    for status in (200, 500):
        resp = post(mock, path, body)
        assert resp.status_code == status
        for name, pattern in REQUEST_IDS[provider].items():
            assert re.fullmatch(pattern, resp.headers[name]), (name, resp.headers.get(name))


# --- Gemini stream without alt=sse ------------------------------------------------------------


def test_gemini_stream_without_alt_sse_is_one_json_array(mock: MockLLMServer) -> None:
    """As recorded in gemini/langchaingo__llms.googleai.TestGoogleAIWithStreaming__i00: a
    ``[{...}\\n,\\r\\n{...}]`` array served as application/json, not SSE."""
    mock.enqueue("gemini", text="Hello there", fragments=2)
    path = "/gemini/v1beta/models/gemini-2.0-flash:streamGenerateContent"
    resp = post(mock, path, {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
    assert resp.headers["content-type"].startswith("application/json")
    chunks = resp.json()
    assert [c["candidates"][0]["content"]["parts"] for c in chunks] == [
        [{"text": "Hello "}],
        [{"text": "there"}],
    ]
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    assert b",\r\n" in resp.content and not resp.text.startswith("data:")


# --- Bedrock 401 -----------------------------------------------------------------------------


def test_bedrock_401_is_unrecognized_client(mock: MockLLMServer) -> None:
    message = "The security token included in the request is invalid."
    mock.enqueue_error(401, "bedrock", message=message)
    llm = create_interface("bedrock", model="m", max_retries=0, **mock.client_options("bedrock"))
    error = llm.generate("hi")["error"]
    assert error == {
        "type": "authentication",
        "message": f"UnrecognizedClientException: {message}",
        "status_code": 401,
        "provider": "bedrock",
        "retryable": False,
    }
    mock.enqueue_error(401, "bedrock", message=message)
    resp = post(
        mock,
        "/bedrock/model/m/converse",
        {"messages": [{"role": "user", "content": [{"text": "hi"}]}]},
    )
    assert resp.json() == {"message": message}
    assert resp.headers["x-amzn-errortype"] == (
        "UnrecognizedClientException:http://internal.amazon.com/coral/com.amazon.bedrock/"
    )


# --- Groq's tool_use_failed -----------------------------------------------------------------

FAILED = {"code": "tool_use_failed", "failed_generation": '{"name": "f", "arguments": {"x"'}
GROQ_MESSAGE = "Failed to call a function. Please adjust your prompt."


def test_groq_tool_use_failed_mid_stream_in_groqs_shape(mock: MockLLMServer) -> None:
    """As recorded in groq/pydantic-ai__test_groq.test_tool_use_failed_error_streaming__i00:
    ``event: error`` with the error object and its ``status_code``, after text."""
    error = {"status": 400, "message": GROQ_MESSAGE, "error_type": "invalid_request_error"}
    mock.enqueue("groq", text="Let me", stream_error={**error, "fields": FAILED})
    raw = post(mock, "/groq/openai/v1/chat/completions", {"model": "m", "messages": [USER],
                                                          "stream": True}).text  # fmt: skip
    last = raw.strip().split("\n\n")[-1]
    assert last.split("\n")[0] == "event: error"
    assert json.loads(last.split("\n", 1)[1].removeprefix("data: ")) == {
        "error": {
            "message": GROQ_MESSAGE,
            "type": "invalid_request_error",
            "code": "tool_use_failed",
            "failed_generation": FAILED["failed_generation"],
            "status_code": 400,
        }
    }
    mock.enqueue("groq", text="Let me", stream_error={**error, "fields": FAILED})
    llm = create_interface("groq", model="m", max_retries=0, **mock.client_options("groq"))
    done = list(llm.stream("hi"))[-1]["result"]
    assert (done["content"], done["stop_reason"], done["error"]["type"]) == (
        "Let me",
        "error",
        "invalid_request",
    )
    assert GROQ_MESSAGE in done["error"]["message"]


def test_groq_tool_use_failed_as_a_400(mock: MockLLMServer) -> None:
    mock.enqueue_error(400, "groq", message=GROQ_MESSAGE, fields=FAILED)
    resp = post(mock, "/groq/openai/v1/chat/completions", {"model": "m", "messages": [USER]})
    assert (resp.status_code, resp.json()) == (
        400,
        {
            "error": {
                "message": GROQ_MESSAGE,
                "type": "invalid_request_error",
                "code": "tool_use_failed",
                "failed_generation": FAILED["failed_generation"],
            }
        },
    )


# --- a body nested ~1,000 levels ---------------------------------------------------------------

NESTED_PATHS = {
    "/openai/v1/chat/completions": 400,
    "/groq/openai/v1/chat/completions": 400,
    "/mistral/v1/chat/completions": 422,
    "/ollama/api/chat": 400,
    "/anthropic/v1/messages": 400,
    "/bedrock/model/m/converse": 400,
    "/gemini/v1beta/models/gemini-2.5-flash:generateContent": 400,
}


@pytest.mark.parametrize("depth", [1_000, 100_000])
@pytest.mark.parametrize("path", sorted(NESTED_PATHS))
def test_a_deeply_nested_body_is_refused_and_logged(
    mock: MockLLMServer, path: str, depth: int
) -> None:
    raw = b'{"model": "m", "messages": ' + b"[" * depth + b"]" * depth + b"}"
    mock.enqueue(text="never")
    resp = post(mock, path, content=raw)
    assert resp.status_code == NESTED_PATHS[path]
    assert resp.json()  # the provider's own error body, not a crash
    logged = mock.last_request()
    rule = "body_present" if path.startswith("/ollama") else "json_object_body"
    assert (logged.raw_body, logged.rejected_by) == (raw, rule)
    assert mock.pending() == 1


# --- Gemini's thought signature, where thinking models put it ---------------------------------


def _gemini_parts(mock: MockLLMServer, model: str, **script: Any) -> list[dict[str, Any]]:
    mock.enqueue("gemini", **script)
    path = f"/gemini/v1beta/models/{model}:generateContent"
    body = post(mock, path, {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}).json()
    parts: list[dict[str, Any]] = body["candidates"][0]["content"]["parts"]
    return parts


CALLS = [{"name": "f", "arguments": {}}, {"name": "g", "arguments": {"a": 1}}]


@pytest.mark.parametrize("model", ["gemini-2.5-flash", "gemini-3-flash-preview", "m-1"])
def test_thinking_models_sign_the_first_call_of_a_turn(mock: MockLLMServer, model: str) -> None:
    """Recordings: gemini/pydantic-ai__test_google.test_google_instructions_only_with_tool_calls__i00
    (three calls, the first signed) and every gemini-2.5 recording with a call; text parts
    beside calls carry none."""
    assert _gemini_parts(mock, model, text="On it.", tool_calls=CALLS) == [
        {"text": "On it."},
        {"functionCall": {"name": "f", "args": {}}, "thoughtSignature": GEMINI_THOUGHT_SIGNATURE},
        {"functionCall": {"name": "g", "args": {"a": 1}}},
    ]


@pytest.mark.parametrize("model", ["gemini-2.0-flash", "gemini-1.5-pro"])
def test_models_before_2_5_sign_nothing(mock: MockLLMServer, model: str) -> None:
    """Recording gemini/pydantic-ai__test_google.test_google_tool_output__i00 (2.0-flash)."""
    assert _gemini_parts(mock, model, tool_calls=CALLS[:1]) == [
        {"functionCall": {"name": "f", "args": {}}}
    ]


def test_a_script_sets_the_signatures_itself(mock: MockLLMServer) -> None:
    data = {"gemini": {"thought_signatures": [None, "c2ln"]}}
    assert _gemini_parts(mock, "gemini-2.5-flash", tool_calls=CALLS, provider_data=data) == [
        {"functionCall": {"name": "f", "args": {}}},
        {"functionCall": {"name": "g", "args": {"a": 1}}, "thoughtSignature": "c2ln"},
    ]
    unsigned = {"gemini": {"thought_signatures": []}}
    assert _gemini_parts(
        mock, "gemini-2.5-flash", tool_calls=CALLS[:1], provider_data=unsigned
    ) == [{"functionCall": {"name": "f", "args": {}}}]
