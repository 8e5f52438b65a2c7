"""The raw SDK side of each comparison: the same request as Zerda's, written by hand in the
provider's native form, sent with the provider's own SDK the way its documentation shows.

Each ``Raw*`` class builds its clients from ``MockLLMServer.sdk_client_kwargs`` and offers
``generate`` (one call), ``stream`` (one streamed call, every chunk iterated) and
``generate_async``. The raw side stops at the SDK's return value: reading the tool calls
out of it is work Zerda does and the raw caller would still have to do, so the ratios are,
if anything, unfavourable to Zerda.
"""

from __future__ import annotations

import asyncio
import base64
import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bench_data import (
    CALL_ARGS,
    CALL_ID,
    MAX_TOKENS,
    MODELS,
    QUESTION,
    SYSTEM,
    TOOL_OUTPUT,
    TOOLS,
)

# Zerda's Bedrock pool size and connection pool (aws.DEFAULT_POOL_SIZE): the raw side gets
# the same, so async throughput compares the code, not the pool sizes.
BEDROCK_POOL = 64


class RawBase:
    """Builds the native request once: both sides reuse their prepared inputs, so the
    timings hold the libraries' work only (neither Zerda nor the SDKs mutate them)."""

    provider = ""

    def __init__(self, kwargs: dict[str, Any]) -> None:
        self.kwargs = kwargs
        self.req = self.build_request()
        self.stream_req = self.build_stream_request()

    def build_request(self) -> dict[str, Any]:
        raise NotImplementedError

    def build_stream_request(self) -> dict[str, Any]:
        return self.req

    def generate(self) -> Any:
        raise NotImplementedError

    async def generate_async(self) -> Any:
        raise NotImplementedError

    def stream(self) -> int:
        """One streamed call, every chunk iterated; returns the number of chunks."""
        raise NotImplementedError

    def close(self) -> None:
        pass


def _openai_tools() -> list[dict[str, Any]]:
    return [{"type": "function", "function": dict(t)} for t in TOOLS]


def _openai_messages(mistral: bool = False) -> list[dict[str, Any]]:
    tool: dict[str, Any] = {
        "role": "tool",
        "tool_call_id": CALL_ID,
        "content": json.dumps(TOOL_OUTPUT),
    }
    if mistral:
        tool["name"] = "get_weather"
    call = {
        "id": CALL_ID,
        "type": "function",
        "function": {"name": "get_weather", "arguments": json.dumps(CALL_ARGS)},
    }
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        tool,
    ]


class RawOpenAI(RawBase):
    """OpenAI; Groq subclasses it (same Stainless SDK shape)."""

    provider = "openai"
    max_tokens_field = "max_completion_tokens"

    def __init__(self, kwargs: dict[str, Any]) -> None:
        super().__init__(kwargs)
        self.client = self._sdk_client(kwargs)
        self._async: Any = None

    def _sdk_client(self, kwargs: dict[str, Any]) -> Any:
        import openai

        return openai.OpenAI(**kwargs)

    def _sdk_async_client(self, kwargs: dict[str, Any]) -> Any:
        import openai

        return openai.AsyncOpenAI(**kwargs)

    @property
    def async_client(self) -> Any:
        if self._async is None:
            self._async = self._sdk_async_client(self.kwargs)
        return self._async

    def build_request(self) -> dict[str, Any]:
        return {
            "model": MODELS[self.provider],
            "messages": _openai_messages(),
            "tools": _openai_tools(),
            self.max_tokens_field: MAX_TOKENS,
        }

    def build_stream_request(self) -> dict[str, Any]:
        # Zerda asks for the usage chunk too (its done result carries usage).
        return {**self.build_request(), "stream": True, "stream_options": {"include_usage": True}}

    def generate(self) -> Any:
        return self.client.chat.completions.create(**self.req)

    async def generate_async(self) -> Any:
        return await self.async_client.chat.completions.create(**self.req)

    def stream(self) -> int:
        n = 0
        with self.client.chat.completions.create(**self.stream_req) as chunks:
            for _ in chunks:
                n += 1
        return n

    def close(self) -> None:
        self.client.close()


class RawGroq(RawOpenAI):
    provider = "groq"

    def _sdk_client(self, kwargs: dict[str, Any]) -> Any:
        import groq

        return groq.Groq(**kwargs)

    def _sdk_async_client(self, kwargs: dict[str, Any]) -> Any:
        import groq

        return groq.AsyncGroq(**kwargs)

    def build_stream_request(self) -> dict[str, Any]:
        return {**self.build_request(), "stream": True}  # Groq sends usage in x_groq unasked


class RawMistral(RawOpenAI):
    provider = "mistral"
    max_tokens_field = "max_tokens"

    def _sdk_client(self, kwargs: dict[str, Any]) -> Any:
        from mistralai.client import Mistral

        return Mistral(**kwargs)

    @property
    def async_client(self) -> Any:
        return self.client  # one Mistral client has the sync and the async methods

    def build_request(self) -> dict[str, Any]:
        return {**super().build_request(), "messages": _openai_messages(mistral=True)}

    def build_stream_request(self) -> dict[str, Any]:
        return self.req  # chat.stream is its own method and sends usage unasked

    def close(self) -> None:
        pass  # the Mistral client has no close()

    def generate(self) -> Any:
        return self.client.chat.complete(**self.req)

    async def generate_async(self) -> Any:
        return await self.client.chat.complete_async(**self.req)

    def stream(self) -> int:
        n = 0
        with self.client.chat.stream(**self.req) as events:
            for _ in events:
                n += 1
        return n


class RawOllama(RawBase):
    provider = "ollama"

    def __init__(self, kwargs: dict[str, Any]) -> None:
        import ollama

        super().__init__(kwargs)
        self.sdk = ollama
        self.client = ollama.Client(**kwargs)
        self._async: Any = None

    @property
    def async_client(self) -> Any:
        if self._async is None:
            self._async = self.sdk.AsyncClient(**self.kwargs)
        return self._async

    def build_request(self) -> dict[str, Any]:
        call = {"id": CALL_ID, "function": {"name": "get_weather", "arguments": CALL_ARGS}}
        result = {
            "role": "tool",
            "tool_call_id": CALL_ID,
            "tool_name": "get_weather",
            "content": json.dumps(TOOL_OUTPUT),
        }
        messages = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": QUESTION},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            result,
        ]
        return {
            "model": MODELS["ollama"],
            "messages": messages,
            "tools": _openai_tools(),
            "options": {"num_predict": MAX_TOKENS},
        }

    def generate(self) -> Any:
        return self.client.chat(**self.req)

    async def generate_async(self) -> Any:
        return await self.async_client.chat(**self.req)

    def stream(self) -> int:
        n = 0
        for _ in self.client.chat(**self.req, stream=True):
            n += 1
        return n


class RawAnthropic(RawBase):
    provider = "anthropic"

    def __init__(self, kwargs: dict[str, Any]) -> None:
        import anthropic

        super().__init__(kwargs)
        self.sdk = anthropic
        self.client = anthropic.Anthropic(**kwargs)
        self._async: Any = None

    @property
    def async_client(self) -> Any:
        if self._async is None:
            self._async = self.sdk.AsyncAnthropic(**self.kwargs)
        return self._async

    def build_request(self) -> dict[str, Any]:
        call = {"type": "tool_use", "id": CALL_ID, "name": "get_weather", "input": CALL_ARGS}
        result = {"type": "tool_result", "tool_use_id": CALL_ID, "content": json.dumps(TOOL_OUTPUT)}
        tools = [
            {"name": t["name"], "description": t["description"], "input_schema": t["parameters"]}
            for t in TOOLS
        ]
        return {
            "model": MODELS["anthropic"],
            "system": SYSTEM,
            "messages": [
                {"role": "user", "content": QUESTION},
                {"role": "assistant", "content": [call]},
                {"role": "user", "content": [result]},
            ],
            "tools": tools,
            "max_tokens": MAX_TOKENS,
        }

    def generate(self) -> Any:
        return self.client.messages.create(**self.req)

    async def generate_async(self) -> Any:
        return await self.async_client.messages.create(**self.req)

    def stream(self) -> int:
        n = 0
        with self.client.messages.create(**self.req, stream=True) as events:
            for _ in events:
                n += 1
        return n

    def close(self) -> None:
        self.client.close()


class RawBedrock(RawBase):
    """boto3 has no async client: the async side runs converse in a thread pool of Zerda's
    size, the way an asyncio application would (``run_in_executor``)."""

    provider = "bedrock"

    def __init__(self, kwargs: dict[str, Any]) -> None:
        import boto3
        from botocore.config import Config

        super().__init__(kwargs)
        self.client = boto3.client(**kwargs)
        config = Config(max_pool_connections=BEDROCK_POOL)
        self.async_client = boto3.client(**kwargs, config=config)
        self._pool = ThreadPoolExecutor(max_workers=BEDROCK_POOL)

    def build_request(self) -> dict[str, Any]:
        call = {"toolUse": {"toolUseId": CALL_ID, "name": "get_weather", "input": CALL_ARGS}}
        result = {"toolResult": {"toolUseId": CALL_ID, "content": [{"json": TOOL_OUTPUT}]}}
        specs = [
            {
                "toolSpec": {
                    "name": t["name"],
                    "description": t["description"],
                    "inputSchema": {"json": t["parameters"]},
                }
            }
            for t in TOOLS
        ]
        return {
            "modelId": MODELS["bedrock"],
            "system": [{"text": SYSTEM}],
            "messages": [
                {"role": "user", "content": [{"text": QUESTION}]},
                {"role": "assistant", "content": [call]},
                {"role": "user", "content": [result]},
            ],
            "toolConfig": {"tools": specs},
            "inferenceConfig": {"maxTokens": MAX_TOKENS},
        }

    def generate(self) -> Any:
        return self.client.converse(**self.req)

    async def generate_async(self) -> Any:
        loop = asyncio.get_running_loop()
        call = self.async_client.converse
        return await loop.run_in_executor(self._pool, lambda: call(**self.req))

    def stream(self) -> int:
        n = 0
        for _ in self.client.converse_stream(**self.req)["stream"]:
            n += 1
        return n

    def close(self) -> None:
        self._pool.shutdown(wait=False)


class RawGemini(RawBase):
    provider = "gemini"

    def __init__(self, kwargs: dict[str, Any]) -> None:
        from google import genai

        super().__init__(kwargs)
        self.client = genai.Client(**kwargs)

    @property
    def async_client(self) -> Any:
        return self.client.aio

    def build_request(self) -> dict[str, Any]:
        call = {
            "function_call": {"id": CALL_ID, "name": "get_weather", "args": CALL_ARGS},
            # Gemini's documented placeholder for a call that carries no signature, which
            # Zerda sends too; the SDK base64-encodes bytes, so this is sent verbatim:
            # https://ai.google.dev/gemini-api/docs/thought-signatures
            "thought_signature": base64.urlsafe_b64decode("skip_thought_signature_validator"),
        }
        result = {
            "function_response": {"id": CALL_ID, "name": "get_weather", "response": TOOL_OUTPUT}
        }
        return {
            "model": MODELS["gemini"],
            "contents": [
                {"role": "user", "parts": [{"text": QUESTION}]},
                {"role": "model", "parts": [call]},
                {"role": "user", "parts": [result]},
            ],
            "config": {
                "system_instruction": SYSTEM,
                "tools": [{"function_declarations": [dict(t) for t in TOOLS]}],
                "max_output_tokens": MAX_TOKENS,
            },
        }

    def generate(self) -> Any:
        return self.client.models.generate_content(**self.req)

    async def generate_async(self) -> Any:
        return await self.client.aio.models.generate_content(**self.req)

    def stream(self) -> int:
        n = 0
        for _ in self.client.models.generate_content_stream(**self.req):
            n += 1
        return n


RAW = {
    "openai": RawOpenAI,
    "groq": RawGroq,
    "mistral": RawMistral,
    "ollama": RawOllama,
    "anthropic": RawAnthropic,
    "bedrock": RawBedrock,
    "gemini": RawGemini,
}
