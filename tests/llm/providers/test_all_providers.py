"""Checks every provider must pass alike, over the real SDKs and MockLLMServer."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from zerda.llm import create_interface, registry
from zerda.llm.registry import NAMES as PROVIDERS
from zerda.testing import MockLLMServer

ALL = list(PROVIDERS)
SDK_MODULES = ("openai", "groq", "mistralai", "ollama", "anthropic", "boto3", "google.genai")
SCRIPTS: list[dict[str, Any]] = [
    {"text": "Hello."},
    {
        "text": "Let me check.",
        "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
    },
    {
        "tool_calls": [
            {"name": "get_weather", "arguments": {"city": "A"}},
            {"name": "get_weather", "arguments": {}},
        ]
    },
    {"text": "Cut", "stop_reason": "max_tokens"},
    {"text": "x", "usage": {"input_tokens": 7, "output_tokens": 9}},
]
TOOLS = [
    {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
]


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s


def make(server: MockLLMServer, provider: str) -> Any:
    return create_interface(
        provider, model="test-model", max_retries=0, **server.client_options(provider)
    )


@pytest.mark.parametrize("provider", ALL)
def test_provider_modules_import_no_sdk(provider: str) -> None:
    module = registry.get(provider).cls.partition(":")[0]
    code = f"import sys, {module}; print([m for m in {SDK_MODULES!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("provider", ALL)
@pytest.mark.parametrize("script", range(len(SCRIPTS)))
async def test_generate_and_generate_async_give_identical_results(
    server: MockLLMServer, provider: str, script: int
) -> None:
    fields = {
        **SCRIPTS[script],
        "tool_calls": [
            {**c, "id": f"id{i}"} for i, c in enumerate(SCRIPTS[script].get("tool_calls", []))
        ],
    }
    if provider == "gemini":  # Gemini sends no call ids unless the model gave one
        fields["tool_calls"] = [
            {k: v for k, v in c.items() if k != "id"} for c in fields["tool_calls"]
        ]
    server.enqueue(provider, **fields)
    server.enqueue(provider, **fields)
    llm = make(server, provider)
    sync_result = llm.generate("hi", tools=TOOLS)
    async_result = await llm.generate_async("hi", tools=TOOLS)
    assert sync_result == async_result
    assert sync_result["stop_reason"] != "error", sync_result.get("error")
    assert server.requests_for(provider)[-1].body == server.requests_for(provider)[-2].body


@pytest.mark.parametrize("provider", ALL)
def test_one_interface_serves_several_event_loops(server: MockLLMServer, provider: str) -> None:
    llm = make(server, provider)
    for answer in ("first", "second"):
        server.enqueue(provider, text=answer)
        result = asyncio.run(llm.generate_async("hi"))
        assert result["content"] == answer, result.get("error")


@pytest.mark.parametrize("provider", ALL)
def test_the_sync_client_is_built_once(server: MockLLMServer, provider: str) -> None:
    llm = make(server, provider)
    server.enqueue(provider, text="a")
    server.enqueue(provider, text="b")
    llm.generate("hi")
    client = llm.client
    llm.generate("hi")
    assert llm.client is client
