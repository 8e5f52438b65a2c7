"""Every recorded real exchange under ../shared/fixtures/recorded, served verbatim by
MockLLMServer.enqueue_recorded, is accepted by the matching official SDK: 2xx responses
(JSON and streams) parse without error, error statuses raise the SDK's status error."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from zerda.testing import MockLLMServer

# ZERDA_FIXTURES names the fixtures folder where ../shared is not beside the checkout (a worktree).
FIXTURES = Path(__file__).resolve().parents[2] / ".." / "shared" / "fixtures"
RECORDED = Path(os.environ.get("ZERDA_FIXTURES") or FIXTURES) / "recorded"
FILES = sorted(RECORDED.glob("*/*.json")) if RECORDED.is_dir() else []
MESSAGES = [{"role": "user", "content": "hi"}]


# langchaingo's Gemini recordings asked for integer enums ("finishReason": 1), a form only
# the Go SDK requests; google-genai parses enum names and rightly rejects them.
_INT_ENUMS = "enum-encoding=int"


def _params() -> list[Any]:
    if not FILES:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{RECORDED} is absent"))]
    return [pytest.param(f, id=f"{f.parent.name}/{f.stem}") for f in FILES]


def _int_enums(fixture: dict[str, Any]) -> bool:
    query = fixture["request"].get("query") or {}
    return fixture["response"]["status"] < 400 and _INT_ENUMS in str(query.get("$alt", ""))


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def clients(server: MockLLMServer) -> dict[str, Any]:
    """One SDK client per provider, made on first use (client set-up dominates the cost)."""
    return {}


# -- one caller per wire protocol: send a request, consume the whole response -----------------


def _openai_like(client: Any, fixture: dict[str, Any]) -> None:
    stream = bool(fixture.get("streaming"))
    result = client.chat.completions.create(
        model=fixture.get("model") or "m", messages=MESSAGES, stream=stream
    )
    if stream:
        list(result)


def _openai_responses(client: Any, fixture: dict[str, Any]) -> None:
    stream = bool(fixture.get("streaming"))
    result = client.responses.create(model=fixture.get("model") or "m", input="hi", stream=stream)
    if stream:
        list(result)


def _mistral(client: Any, fixture: dict[str, Any]) -> None:
    model = fixture.get("model") or "mistral-small-latest"
    if fixture.get("streaming"):
        list(client.chat.stream(model=model, messages=MESSAGES))
    else:
        client.chat.complete(model=model, messages=MESSAGES)


def _ollama(client: Any, fixture: dict[str, Any]) -> None:
    stream = bool(fixture.get("streaming"))
    result = client.chat(model=fixture.get("model") or "llama3.2", messages=MESSAGES, stream=stream)
    if stream:
        list(result)


def _anthropic(client: Any, fixture: dict[str, Any]) -> None:
    stream = bool(fixture.get("streaming"))
    model = fixture.get("model") or "claude-sonnet-4-6"
    result = client.messages.create(model=model, max_tokens=64, messages=MESSAGES, stream=stream)
    if stream:
        list(result)


def _bedrock(client: Any, fixture: dict[str, Any]) -> None:
    # The model id is in the recorded path, URL-encoded: /model/{modelId}/converse[-stream].
    model_id = unquote(fixture["request"]["path"].split("/")[2])
    messages = [{"role": "user", "content": [{"text": "hi"}]}]
    if fixture["request"]["path"].endswith("/converse-stream"):
        list(client.converse_stream(modelId=model_id, messages=messages)["stream"])
    else:
        client.converse(modelId=model_id, messages=messages)


def _gemini(client: Any, fixture: dict[str, Any]) -> None:
    model = fixture.get("model") or "gemini-2.5-flash"
    if fixture["request"]["path"].endswith(":streamGenerateContent"):
        list(client.models.generate_content_stream(model=model, contents="hi"))
    else:
        client.models.generate_content(model=model, contents="hi")


# -- SDK clients and their status errors ------------------------------------------------------


def _make_client(kind: str, server: MockLLMServer) -> Any:
    if kind in ("openai", "ollama-openai", "openai-responses"):
        import openai

        base = (
            server.base_url("ollama") + "/v1" if kind == "ollama-openai" else server.base_url(kind)
        )
        return openai.OpenAI(base_url=base, api_key="test-key", max_retries=0)
    if kind == "groq":
        import groq

        return groq.Groq(**server.sdk_client_kwargs("groq"), max_retries=0)
    if kind == "mistral":
        from mistralai.client import Mistral

        return Mistral(**server.sdk_client_kwargs("mistral"))
    if kind == "ollama":
        import ollama

        return ollama.Client(**server.sdk_client_kwargs("ollama"))
    if kind == "anthropic":
        import anthropic

        return anthropic.Anthropic(**server.sdk_client_kwargs("anthropic"), max_retries=0)
    if kind == "bedrock":
        import boto3
        from botocore.config import Config

        config = Config(retries={"total_max_attempts": 1, "mode": "standard"})
        return boto3.client(**server.sdk_client_kwargs("bedrock"), config=config)
    from google import genai

    return genai.Client(**server.sdk_client_kwargs("gemini"))


def _stream_error(kind: str) -> type[BaseException]:
    """What the SDK raises for an error event inside a 200 stream."""
    import groq
    import openai

    return groq.APIError if kind == "groq" else openai.APIError


def _status_error(kind: str) -> type[BaseException]:
    if kind in ("openai", "ollama-openai", "openai-responses"):
        import openai

        return openai.APIStatusError
    if kind == "groq":
        import groq

        return groq.APIStatusError
    if kind == "mistral":
        from mistralai.client.errors import MistralError

        return MistralError
    if kind == "ollama":
        import ollama

        return ollama.ResponseError
    if kind == "anthropic":
        import anthropic

        return anthropic.APIStatusError
    if kind == "bedrock":
        from botocore.exceptions import ClientError

        return ClientError
    from google.genai import errors

    return errors.APIError


_CALLERS: dict[str, Callable[[Any, dict[str, Any]], None]] = {
    "openai": _openai_like,
    "openai-responses": _openai_responses,
    "ollama-openai": _openai_like,
    "groq": _openai_like,
    "mistral": _mistral,
    "ollama": _ollama,
    "anthropic": _anthropic,
    "bedrock": _bedrock,
    "gemini": _gemini,
}


def _kind(fixture: dict[str, Any]) -> str:
    """Which SDK speaks this exchange: Ollama's OpenAI-compatible endpoint needs openai's."""
    provider = str(fixture["provider"])
    if provider == "ollama" and fixture["request"]["path"].startswith("/v1/"):
        return "ollama-openai"
    return provider


@pytest.mark.parametrize("path", _params())
def test_recorded_exchange_is_accepted_by_the_sdk(
    path: Path, server: MockLLMServer, clients: dict[str, Any]
) -> None:
    fixture = json.loads(path.read_text(encoding="utf-8"))
    if _int_enums(fixture):
        pytest.skip("recorded with integer enums for the Go SDK; google-genai reads names")
    kind = _kind(fixture)
    if kind not in clients:
        clients[kind] = _make_client(kind, server)
    server.reset()
    server.enqueue_recorded(fixture, provider=fixture["provider"])

    call = _CALLERS[kind]
    if fixture["response"]["status"] >= 400:
        with pytest.raises(_status_error(kind)):
            call(clients[kind], fixture)
    elif fixture["derived"].get("error"):  # a 200 stream that carries an error event
        with pytest.raises(_stream_error(kind)):
            call(clients[kind], fixture)
    else:
        call(clients[kind], fixture)

    assert len(server.requests) == 1
    assert server.requests[0].provider == fixture["provider"]
