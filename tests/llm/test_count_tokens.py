"""``llm.count_tokens`` / ``count_tokens_async`` (DESIGN.md §21, docs/cost-and-limits.md):
exact through the counting endpoints of the rows that have one (the request the SDK sent
is the one generate sends, less the generation settings), an estimate marked
``exact: False`` everywhere else, on every registry row, sync and async alike."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from zerda.llm import InvalidRequestError, ServerError, create_interface, image, registry
from zerda.llm._estimate import estimate_input_tokens
from zerda.llm.fallback import FallbackInterface
from zerda.testing import MockLLMServer
from zerda.testing._counting import request_tokens

NAMES = list(registry.NAMES)
EXACT = [n for n in NAMES if registry.get(n).traits.count_tokens]
ESTIMATED = [n for n in NAMES if n not in EXACT]
KEYS = {k for spec in registry.REGISTRY.values() for k in spec.env_keys}

WEATHER = {
    "name": "get_weather",
    "description": "Weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}
QUESTION = [{"role": "user", "content": "Weather in Oslo?"}]
SYSTEM = "Be brief."


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch, server: MockLLMServer) -> None:
    for key in (*KEYS, "OPENAI_API_KEY", "OPENAI_API_VERSION", "AZURE_OPENAI_ENDPOINT"):
        monkeypatch.delenv(key, raising=False)
    server.reset()


def make(server: MockLLMServer, name: str, **options: Any) -> Any:
    spec = registry.get(name)
    # The fast path unless a test says otherwise (ZERDA_FAST_PATH=0 runs change nothing here:
    # the tests off it say fast_path=False).
    options = {"max_retries": 0, "fast_path": True, **server.client_options(name), **options}
    return create_interface(name, model=spec.demo_model, **options)


def counted(server: MockLLMServer, name: str) -> Any:
    """The one request the count sent (the log holds nothing else)."""
    [request] = server.requests_for(name)
    return request


# --- the exact native requests -----------------------------------------------------------

_CLAUDE_TOOL = {
    "name": "get_weather",
    "description": "Weather for a city.",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}
_GEMINI_REQUEST = {
    "contents": [{"parts": [{"text": "Weather in Oslo?"}], "role": "user"}],
    "systemInstruction": {"parts": [{"text": "Be brief."}], "role": "user"},
    "tools": [
        {
            "functionDeclarations": [
                {
                    "description": "Weather for a city.",
                    "name": "get_weather",
                    "parameters": {"properties": {"city": {"type": "STRING"}}, "type": "OBJECT"},
                }
            ]
        }
    ],
}
# What each exact row's SDK sent for count_tokens(QUESTION, tools=[WEATHER], system=SYSTEM).
SENT: dict[str, tuple[str, dict[str, Any]]] = {
    "anthropic": (
        "/v1/messages/count_tokens",
        {
            "model": "claude-sonnet-4-6",
            "messages": [{"role": "user", "content": "Weather in Oslo?"}],
            "system": "Be brief.",
            "tools": [_CLAUDE_TOOL],
        },
    ),
    "anthropic-vertex": (
        "/projects/mock-project/locations/us-east5/publishers/anthropic/models/count-tokens:rawPredict",
        {
            "model": "claude-sonnet-4-6",
            "messages": [{"role": "user", "content": "Weather in Oslo?"}],
            "system": "Be brief.",
            "tools": [_CLAUDE_TOOL],
        },
    ),
    "gemini": (
        "/v1/models/gemini-2.5-flash:countTokens",
        {
            "generateContentRequest": {
                "model": "models/gemini-2.5-flash",
                **_GEMINI_REQUEST,
                "generationConfig": {},
            }
        },
    ),
    "vertex": (
        "/v1beta1/projects/mock-project/locations/us-central1/publishers/google/models/"
        "gemini-2.5-flash:countTokens",
        {**_GEMINI_REQUEST, "generationConfig": {}},
    ),
    "bedrock": (
        "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/count-tokens",
        {
            "input": {
                "converse": {
                    "messages": [{"role": "user", "content": [{"text": "Weather in Oslo?"}]}],
                    "system": [{"text": "Be brief."}],
                    "toolConfig": {
                        "tools": [
                            {
                                "toolSpec": {
                                    "name": "get_weather",
                                    "description": "Weather for a city.",
                                    "inputSchema": {"json": WEATHER["parameters"]},
                                }
                            }
                        ]
                    },
                }
            }
        },
    ),
    "openai-responses": (
        "/v1/responses/input_tokens",
        {
            "model": "gpt-5-mini",
            "input": [{"role": "user", "content": "Weather in Oslo?"}],
            "instructions": "Be brief.",
            "tools": [{"type": "function", **WEATHER, "strict": False}],
        },
    ),
}


def test_every_exact_row_has_its_expected_request() -> None:
    # A row given a counting endpoint must say here what its SDK sends.
    assert sorted(SENT) == sorted(EXACT)


@pytest.mark.parametrize("name", EXACT)
def test_exact_rows_count_through_their_endpoint(server: MockLLMServer, name: str) -> None:
    result = make(server, name).count_tokens(QUESTION, tools=[WEATHER], system=SYSTEM)
    request = counted(server, name)
    path, body = SENT[name]
    assert (request.method, request.path, request.rejected_by) == ("POST", path, None)
    sent = dict(request.body)
    if name == "anthropic-vertex":  # the SDK adds its API version to Vertex AI's body
        assert isinstance(sent.pop("anthropic_version"), str)
    assert sent == body
    # Nothing queued: the mock answers its count of the request.
    assert result == {"input_tokens": request_tokens(request.body), "exact": True}


@pytest.mark.parametrize("name", EXACT)
def test_the_count_is_the_endpoints_answer(server: MockLLMServer, name: str) -> None:
    server.enqueue(name, usage={"input_tokens": 4321, "output_tokens": 0})
    assert make(server, name).count_tokens(QUESTION) == {"input_tokens": 4321, "exact": True}
    assert server.pending(name) == 0


# The generation settings generate sends that a counting endpoint does not take.
_NOT_COUNTED = {
    "anthropic": ("max_tokens",),
    "anthropic-vertex": ("max_tokens",),
    "openai-responses": ("store", "include", "max_output_tokens"),
}


def _as_counted(name: str, generated: dict[str, Any]) -> dict[str, Any]:
    """The body the count of a generate request sends, from generate's own body."""
    if name == "gemini":
        return {"generateContentRequest": {"model": "models/gemini-2.5-flash", **generated}}
    if name == "vertex":
        return {
            k: generated[k]
            for k in ("contents", "systemInstruction", "tools", "generationConfig")
            if k in generated
        }
    if name == "bedrock":
        converse = {k: v for k, v in generated.items() if k != "inferenceConfig"}
        return {"input": {"converse": converse}}
    return {k: v for k, v in generated.items() if k not in _NOT_COUNTED[name]}


def _png(width: int, height: int) -> bytes:
    """A PNG's signature and IHDR (all the estimate and the SDKs read of it)."""
    ihdr = width.to_bytes(4, "big") + height.to_bytes(4, "big") + b"\x08\x02\x00\x00\x00"
    return b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + ihdr + b"\x00" * 64


def _history() -> list[dict[str, Any]]:
    """A tool round trip whose question carries an image."""
    call = {"id": "call_1", "name": "get_weather", "arguments": {"city": "Oslo"}}
    question = [{"type": "text", "text": "Weather here?"}, image(_png(64, 64))]
    return [
        {"role": "user", "content": question},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    ]


@pytest.mark.parametrize("name", EXACT)
def test_the_count_sends_what_generate_sends(server: MockLLMServer, name: str) -> None:
    """Same history conversion, tools and system prompt as generate (media included)."""
    llm = make(server, name)
    server.enqueue(name, text="Sunny.")
    generated = llm.generate(_history(), tools=[WEATHER], system=SYSTEM)
    assert generated["content"] == "Sunny.", generated.get("error")
    llm.count_tokens(_history(), tools=[WEATHER], system=SYSTEM)
    generate_request, count_request = server.requests_for(name)
    assert count_request.rejected_by is None
    body = dict(count_request.body)
    if name == "anthropic-vertex":
        generate_body = {k: v for k, v in generate_request.body.items() if k != "max_tokens"}
        assert body == {**generate_body, "model": "claude-sonnet-4-6"}
        return
    assert body == _as_counted(name, generate_request.body)


# --- every row, sync and async --------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_every_row_counts_sync_and_async_alike(server: MockLLMServer, name: str) -> None:
    llm = make(server, name)
    sync = llm.count_tokens(QUESTION, tools=[WEATHER], system=SYSTEM)
    sent = [r.body for r in server.requests_for(name)]
    server.reset()
    async_ = asyncio.run(llm.count_tokens_async(QUESTION, tools=[WEATHER], system=SYSTEM))
    assert async_ == sync
    assert [r.body for r in server.requests_for(name)] == sent
    assert sync["exact"] is (name in EXACT)
    assert isinstance(sync["input_tokens"], int) and sync["input_tokens"] > 0
    assert len(sent) == (1 if name in EXACT else 0)


@pytest.mark.parametrize("name", ESTIMATED)
def test_rows_without_an_endpoint_estimate(server: MockLLMServer, name: str) -> None:
    llm = make(server, name)
    result = llm.count_tokens(QUESTION, tools=[WEATHER], system=SYSTEM)
    # The estimate of the checked request (the system prompt as text, the tool unified).
    expected = estimate_input_tokens(QUESTION, tools=[WEATHER], system=SYSTEM)
    assert result == {"input_tokens": expected, "exact": False}
    assert server.requests == []


@pytest.mark.parametrize("name", ESTIMATED)
def test_a_row_without_an_endpoint_never_raises_for_it(server: MockLLMServer, name: str) -> None:
    # Whatever the server would answer, nothing is asked: raise_errors has nothing to raise.
    server.enqueue_error(500, name, message="never asked")
    result = make(server, name, raise_errors=True).count_tokens("hi")
    assert result["exact"] is False and result["input_tokens"] > 0
    assert server.pending(name) == 1


# --- media, through the estimate -----------------------------------------------------------


@pytest.mark.parametrize("name", ["ollama", "mistral"])
def test_media_count_as_the_providers_count_them(server: MockLLMServer, name: str) -> None:
    llm = make(server, name)
    text = [{"type": "text", "text": "What is this?"}]
    big, small = image(_png(1600, 1200)), image(_png(100, 100))
    plain = llm.count_tokens([{"role": "user", "content": text}])["input_tokens"]
    with_big = llm.count_tokens([{"role": "user", "content": [*text, big]}])
    with_small = llm.count_tokens([{"role": "user", "content": [*text, small]}])
    # By pixels, never by the characters of the base64 (both images are ~100 bytes).
    assert with_big["exact"] is False
    assert with_big["input_tokens"] - plain > 1000 > with_small["input_tokens"] - plain > 0
    assert len(big["data"]) < 200


# --- failures ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", EXACT)
def test_a_failed_count_is_an_error_result(server: MockLLMServer, name: str) -> None:
    server.enqueue_error(400, name, message="no counting for you")
    result = make(server, name).count_tokens("hi")
    assert result["input_tokens"] is None and result["exact"] is False
    assert result["error"]["type"] == "invalid_request"
    assert "no counting for you" in result["error"]["message"]
    assert set(result) == {"input_tokens", "exact", "error"}


@pytest.mark.parametrize("name", EXACT)
async def test_a_failed_count_raises_with_raise_errors(server: MockLLMServer, name: str) -> None:
    server.enqueue_error(400, name, message="refused")
    with pytest.raises(InvalidRequestError, match="refused"):
        make(server, name).count_tokens("hi", raise_errors=True)
    server.enqueue_error(400, name, message="refused")
    with pytest.raises(InvalidRequestError, match="refused"):
        await make(server, name, raise_errors=True).count_tokens_async("hi")


@pytest.mark.parametrize("name", EXACT)
def test_a_count_is_retried_as_a_call_is(
    server: MockLLMServer, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from zerda.llm import base

    monkeypatch.setattr(base, "_sleep", lambda seconds: None)
    server.enqueue_error(429, name, message="slow down")
    server.enqueue(name, usage={"input_tokens": 7})
    assert make(server, name, max_retries=1).count_tokens("hi") == {
        "input_tokens": 7,
        "exact": True,
    }
    assert len(server.requests_for(name)) == 2


def test_a_malformed_count_is_an_error_not_a_count(server: MockLLMServer) -> None:
    server.enqueue_raw(200, {"type": "message_tokens_count"}, provider="anthropic")
    result = make(server, "anthropic").count_tokens("hi")
    assert result["input_tokens"] is None
    assert result["error"]["type"] == "server"
    assert "malformed" in result["error"]["message"]
    server.enqueue_raw(200, {"input_tokens": "12"}, provider="anthropic")
    with pytest.raises(ServerError, match="malformed"):
        make(server, "anthropic").count_tokens("hi", raise_errors=True)


@pytest.mark.parametrize("name", ["anthropic", "ollama"])
def test_bad_input_is_refused_before_anything_is_sent(server: MockLLMServer, name: str) -> None:
    result = make(server, name).count_tokens([{"role": "robot", "content": "hi"}])
    assert result["error"]["type"] == "invalid_request"
    assert "messages[0]" in result["error"]["message"]
    assert server.requests == []


def test_a_closed_interface_refuses_to_count(server: MockLLMServer) -> None:
    llm = make(server, "ollama")
    llm.close()
    with pytest.raises(RuntimeError):
        llm.count_tokens("hi")


# --- where the SDK or the call cannot count ---------------------------------------------------


def test_an_openai_release_without_input_tokens_estimates(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The floor (openai 1.97.2) has no responses.input_tokens: importing it fails there.
    monkeypatch.setitem(sys.modules, "openai.resources.responses.input_tokens", None)
    result = make(server, "openai-responses").count_tokens("hi")
    expected = estimate_input_tokens([{"role": "user", "content": "hi"}])
    assert result == {"input_tokens": expected, "exact": False}
    assert server.requests == []


def test_a_botocore_without_count_tokens_estimates(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The floor (botocore 1.37.24) has no CountTokens operation.
    llm = make(server, "bedrock")
    monkeypatch.delattr(type(llm.client), "count_tokens")
    assert llm.count_tokens("hi")["exact"] is False
    assert server.requests == []


def test_gemini_off_the_fast_path_counts_what_its_documented_call_carries(
    server: MockLLMServer,
) -> None:
    llm = make(server, "gemini", fast_path=False)
    assert llm.count_tokens("hi")["exact"] is True
    assert counted(server, "gemini").body == {
        "contents": [{"parts": [{"text": "hi"}], "role": "user"}]
    }
    server.reset()
    # google-genai's Gemini API converter refuses a system instruction or tools in the count.
    estimate = llm.count_tokens("hi", system=SYSTEM, tools=[WEATHER])
    assert estimate == {
        "input_tokens": estimate_input_tokens(
            [{"role": "user", "content": "hi"}], tools=[WEATHER], system=SYSTEM
        ),
        "exact": False,
    }
    assert server.requests == []


def test_vertex_off_the_fast_path_counts_system_and_tools(server: MockLLMServer) -> None:
    result = make(server, "vertex", fast_path=False).count_tokens(
        QUESTION, tools=[WEATHER], system=SYSTEM
    )
    assert result["exact"] is True
    body = counted(server, "vertex").body
    assert body["systemInstruction"]["parts"] == [{"text": "Be brief."}]
    assert body["tools"][0]["functionDeclarations"][0]["name"] == "get_weather"
    assert body["contents"] == _GEMINI_REQUEST["contents"]


@pytest.mark.parametrize("name", ["anthropic", "openai-responses", "bedrock"])
def test_off_the_fast_path_the_same_request_is_counted(server: MockLLMServer, name: str) -> None:
    make(server, name).count_tokens(QUESTION, tools=[WEATHER], system=SYSTEM)
    make(server, name, fast_path=False).count_tokens(QUESTION, tools=[WEATHER], system=SYSTEM)
    fast, documented = server.requests_for(name)
    assert fast.body == documented.body


# --- a fallback ------------------------------------------------------------------------------


async def test_a_fallback_counts_with_its_first_interface(server: MockLLMServer) -> None:
    first, second = make(server, "anthropic"), make(server, "ollama")
    fallback = FallbackInterface([first, second])
    server.enqueue("anthropic", usage={"input_tokens": 99})
    assert fallback.count_tokens("hi") == {"input_tokens": 99, "exact": True}
    server.enqueue("anthropic", usage={"input_tokens": 98})
    assert await fallback.count_tokens_async("hi") == {"input_tokens": 98, "exact": True}
    assert {r.provider for r in server.requests} == {"anthropic"}
    # The fallback's raise_errors applies to its count.
    server.enqueue_error(400, "anthropic", message="nope")
    with pytest.raises(InvalidRequestError):
        FallbackInterface([first, second], raise_errors=True).count_tokens("hi")
