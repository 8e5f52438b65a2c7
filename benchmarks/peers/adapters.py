"""One adapter per peer: how it makes the benchmark's call on each wire, against the
MockLLMServer at the address it is given.

Every adapter sends the conversation of ``bench_data`` (system, user, a tool call and its
result, two tools, ``max_tokens=256``) written the way the peer's documentation writes it,
built once outside the timing (as an application holds its history in the peer's form):

- LiteLLM, any-llm and aisuite take OpenAI-shaped messages and tools (``openai_messages``);
- pydantic-ai's model request layer (``pydantic_ai.direct``) takes its own message model:
  ``ModelRequest`` / ``ModelResponse`` parts, and ``ToolDefinition``s
  (``pydantic_messages``).

``generate`` makes one call and returns the peer's result, ``stream`` makes one streamed
call and iterates every chunk (returns how many), ``agenerate`` is the async call,
``tool_names`` reads the tool calls back out of a result (the check that the answer was
parsed, not an error), ``send_image`` sends one user message with a PNG.

No peer is imported at module level: :func:`missing` says which are not installed, and the
run reports them "n/a: not installed".
"""

from __future__ import annotations

import base64
import importlib.util
import json
import os
from typing import Any

from bench_data import MAX_TOKENS, MODELS, SYSTEM, TOOLS

WIRES = ("openai", "anthropic", "gemini")
API_KEY = "test-key"

# LiteLLM fetches its model cost map from GitHub on import unless told to use the copy it
# ships (docs.litellm.ai, "Environment variables": LITELLM_LOCAL_MODEL_COST_MAP); the
# benchmark never reaches the internet.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


# --- the conversation in the peers' forms ---------------------------------------------------


def openai_messages(messages: list[dict[str, Any]], system: str) -> list[dict[str, Any]]:
    """Zerda's unified history as OpenAI Chat messages (the form LiteLLM, any-llm and
    aisuite document), the system prompt first."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}]
    for m in messages:
        if m["role"] == "assistant":
            msg: dict[str, Any] = {"role": "assistant", "content": m.get("content")}
            calls = [_openai_call(c) for c in m.get("tool_calls") or []]
            if calls:
                msg["tool_calls"] = calls
            out.append(msg)
        elif m["role"] == "tool":
            content = m["content"]
            text = content if isinstance(content, str) else json.dumps(content)
            out.append({"role": "tool", "tool_call_id": m["tool_call_id"], "content": text})
        else:
            out.append({"role": m["role"], "content": m["content"]})
    return out


def _openai_call(call: dict[str, Any]) -> dict[str, Any]:
    arguments = json.dumps(call["arguments"])
    return {
        "id": call["id"],
        "type": "function",
        "function": {"name": call["name"], "arguments": arguments},
    }


def openai_tools() -> list[dict[str, Any]]:
    return [{"type": "function", "function": dict(t)} for t in TOOLS]


def pydantic_messages(messages: list[dict[str, Any]], system: str) -> list[Any]:
    """Zerda's unified history as pydantic-ai's message model: requests (system prompt,
    user prompts, tool returns) and responses (text, tool calls)."""
    from pydantic_ai.messages import ModelRequest, ModelResponse, SystemPromptPart

    out: list[Any] = []
    parts: list[Any] = [SystemPromptPart(content=system)]
    for m in messages:
        if m["role"] == "assistant":
            out.append(ModelRequest(parts=parts))
            parts = []
            out.append(ModelResponse(parts=_response_parts(m)))
        else:
            parts.append(_request_part(m))
    if parts:
        out.append(ModelRequest(parts=parts))
    return out


def _response_parts(message: dict[str, Any]) -> list[Any]:
    from pydantic_ai.messages import TextPart, ToolCallPart

    parts: list[Any] = [TextPart(content=message["content"])] if message.get("content") else []
    for c in message.get("tool_calls") or []:
        parts.append(ToolCallPart(tool_name=c["name"], args=c["arguments"], tool_call_id=c["id"]))
    return parts


def _request_part(message: dict[str, Any]) -> Any:
    from pydantic_ai.messages import ToolReturnPart, UserPromptPart

    if message["role"] == "tool":
        return ToolReturnPart(
            tool_name=message["name"],
            content=message["content"],
            tool_call_id=message["tool_call_id"],
        )
    return UserPromptPart(content=message["content"])


def data_url(png: bytes) -> str:
    """The image as the OpenAI-shaped peers document it: a base64 data URL the caller builds."""
    return "data:image/png;base64," + base64.b64encode(png).decode()


# --- the adapters ---------------------------------------------------------------------------


class Peer:
    """One peer on one wire. ``kwargs`` is ``MockLLMServer.sdk_client_kwargs(wire)``: the
    address (``base_url``, or Gemini's ``http_options.base_url``) and the API key."""

    name = ""  # in the tables
    distribution = ""  # its version is recorded
    module = ""  # importable when installed
    # Wires the peer cannot send to the mock, and why (reported "n/a: <reason>").
    not_supported: dict[str, str] = {}

    def __init__(self, wire: str, kwargs: dict[str, Any]) -> None:
        self.wire = wire
        self.base_url: str = kwargs.get("base_url") or kwargs["http_options"]["base_url"]
        self.model = MODELS[wire]

    def prepare(self, messages: list[dict[str, Any]]) -> Any:
        """The history in the peer's own form (built once, outside the timing)."""
        return openai_messages(messages, SYSTEM)

    call: dict[str, Any] = {}  # the keyword arguments of every call but the messages

    def generate(self, native: Any) -> Any:
        return self.send(native, self.call)

    def send(self, messages: Any, call: dict[str, Any]) -> Any:
        raise NotImplementedError

    def stream(self, native: Any) -> int:
        raise NotImplementedError

    async def agenerate(self, native: Any) -> Any:
        raise NotImplementedError

    def tool_names(self, result: Any) -> list[str]:
        """OpenAI-shaped result (LiteLLM, any-llm, aisuite): the tool calls' names."""
        calls = result.choices[0].message.tool_calls or []
        return [c.function.name for c in calls]

    def send_image(self, question: str, png: bytes) -> Any:
        content = [
            {"type": "text", "text": question},
            {"type": "image_url", "image_url": {"url": data_url(png)}},
        ]
        plain = {k: v for k, v in self.call.items() if k != "tools"}
        return self.send([{"role": "user", "content": content}], plain)

    def close(self) -> None:
        pass

    @classmethod
    def import_code(cls, wire: str) -> str:
        """Python run in a fresh interpreter (``kw`` bound to the client kwargs): import
        the peer and build what its call needs, as far as it builds it before a call."""
        raise NotImplementedError


def _drain(chunks: Any) -> int:
    n = 0
    for _ in chunks:
        n += 1
    return n


class LiteLLM(Peer):
    """``litellm.completion`` with ``api_base``: LiteLLM's own HTTP handlers for Anthropic
    and Gemini, the openai SDK for OpenAI (docs.litellm.ai, "Providers")."""

    name = "LiteLLM"
    distribution = "litellm"
    module = "litellm"
    PREFIX = {"openai": "openai", "anthropic": "anthropic", "gemini": "gemini"}

    def __init__(self, wire: str, kwargs: dict[str, Any]) -> None:
        import litellm

        super().__init__(wire, kwargs)
        self.litellm = litellm
        # Gemini: LiteLLM appends /models/<model>:generateContent to api_base, the SDKs
        # append /v1beta/models/...: the same path on the mock.
        api_base = self.base_url + ("/v1beta" if wire == "gemini" else "")
        self.call: dict[str, Any] = {
            "model": f"{self.PREFIX[wire]}/{self.model}",
            "api_base": api_base,
            "api_key": API_KEY,
            "tools": openai_tools(),
            "max_tokens": MAX_TOKENS,
        }
        # OpenAI: the usage chunk too, as Zerda and the raw side ask for it.
        self.stream_extra = {"stream_options": {"include_usage": True}} if wire == "openai" else {}

    def send(self, messages: Any, call: dict[str, Any]) -> Any:
        return self.litellm.completion(messages=messages, **call)

    def stream(self, native: Any) -> int:
        return _drain(
            self.litellm.completion(messages=native, stream=True, **self.call, **self.stream_extra)
        )

    async def agenerate(self, native: Any) -> Any:
        return await self.litellm.acompletion(messages=native, **self.call)

    @classmethod
    def import_code(cls, wire: str) -> str:
        return "import litellm"  # no client object: LiteLLM builds its clients at the first call


class AnyLLM(Peer):
    """``AnyLLM.create(provider, api_key=, api_base=)`` then ``completion`` (any-llm's
    documented client; its sync calls run its async ones on a loop of its own)."""

    name = "any-llm"
    distribution = "any-llm-sdk"
    module = "any_llm"

    def __init__(self, wire: str, kwargs: dict[str, Any]) -> None:
        from any_llm import AnyLLM as Client

        super().__init__(wire, kwargs)
        self.client = Client.create(wire, api_key=API_KEY, api_base=self.base_url)
        self.call = {"model": self.model, "tools": openai_tools(), "max_tokens": MAX_TOKENS}

    def send(self, messages: Any, call: dict[str, Any]) -> Any:
        return self.client.completion(messages=messages, **call)

    def stream(self, native: Any) -> int:
        return _drain(self.client.completion(messages=native, stream=True, **self.call))

    async def agenerate(self, native: Any) -> Any:
        return await self.client.acompletion(messages=native, **self.call)

    @classmethod
    def import_code(cls, wire: str) -> str:
        base = "kw.get('base_url') or kw['http_options']['base_url']"
        return (
            "from any_llm import AnyLLM\n"
            f"AnyLLM.create({wire!r}, api_key=kw['api_key'], api_base={base})"
        )


class PydanticAI(Peer):
    """pydantic-ai's model request layer (``pydantic_ai.direct.model_request_sync`` and
    friends) with the wire's model class and provider pointed at the mock: no agent, no
    run loop, one model request (ai.pydantic.dev, "Direct Model Requests")."""

    name = "pydantic-ai"
    distribution = "pydantic-ai-slim"
    module = "pydantic_ai"

    def __init__(self, wire: str, kwargs: dict[str, Any]) -> None:
        from pydantic_ai import direct
        from pydantic_ai.models import ModelRequestParameters
        from pydantic_ai.tools import ToolDefinition

        super().__init__(wire, kwargs)
        self.direct = direct
        self.model_obj = _pydantic_model(wire, self.model, self.base_url)
        tools = [
            ToolDefinition(
                name=t["name"], description=t["description"], parameters_json_schema=t["parameters"]
            )
            for t in TOOLS
        ]
        self.call: dict[str, Any] = {
            "model_settings": {"max_tokens": MAX_TOKENS},
            "model_request_parameters": ModelRequestParameters(function_tools=tools),
        }

    def prepare(self, messages: list[dict[str, Any]]) -> Any:
        return pydantic_messages(messages, SYSTEM)

    def send(self, messages: Any, call: dict[str, Any]) -> Any:
        return self.direct.model_request_sync(self.model_obj, messages, **call)

    def stream(self, native: Any) -> int:
        with self.direct.model_request_stream_sync(self.model_obj, native, **self.call) as events:
            return _drain(events)

    async def agenerate(self, native: Any) -> Any:
        return await self.direct.model_request(self.model_obj, native, **self.call)

    def tool_names(self, result: Any) -> list[str]:
        from pydantic_ai.messages import ToolCallPart

        return [p.tool_name for p in result.parts if isinstance(p, ToolCallPart)]

    def send_image(self, question: str, png: bytes) -> Any:
        from pydantic_ai.messages import BinaryContent, ModelRequest, UserPromptPart

        # The documented way to send bytes (ai.pydantic.dev, "Image, Audio, Video &
        # Document Input"): BinaryContent; the model class encodes it.
        part = UserPromptPart(content=[question, BinaryContent(data=png, media_type="image/png")])
        return self.send(
            [ModelRequest(parts=[part])], {"model_settings": {"max_tokens": MAX_TOKENS}}
        )

    @classmethod
    def import_code(cls, wire: str) -> str:
        model, provider = PYDANTIC_CLASSES[wire]
        return (
            "from pydantic_ai import direct\n"
            f"from pydantic_ai.models.{MODULE_OF[wire]} import {model}\n"
            f"from pydantic_ai.providers.{MODULE_OF[wire]} import {provider}\n"
            f"{model}('m', provider={provider}(api_key=kw['api_key'], base_url="
            "kw.get('base_url') or kw['http_options']['base_url']))"
        )


MODULE_OF = {"openai": "openai", "anthropic": "anthropic", "gemini": "google"}
PYDANTIC_CLASSES = {
    "openai": ("OpenAIChatModel", "OpenAIProvider"),
    "anthropic": ("AnthropicModel", "AnthropicProvider"),
    "gemini": ("GoogleModel", "GoogleProvider"),
}


def _pydantic_model(wire: str, model: str, base_url: str) -> Any:
    """The wire's pydantic-ai model with its provider at ``base_url``."""
    import importlib

    model_cls, provider_cls = PYDANTIC_CLASSES[wire]
    models = importlib.import_module(f"pydantic_ai.models.{MODULE_OF[wire]}")
    providers = importlib.import_module(f"pydantic_ai.providers.{MODULE_OF[wire]}")
    provider = getattr(providers, provider_cls)(base_url=base_url, api_key=API_KEY)
    return getattr(models, model_cls)(model, provider=provider)


class AISuite(Peer):
    """``aisuite.Client(provider_configs=...)`` and ``chat.completions.create`` with
    ``"<provider>:<model>"``; each provider's config goes to its SDK's client."""

    name = "aisuite"
    distribution = "aisuite"
    module = "aisuite"

    def __init__(self, wire: str, kwargs: dict[str, Any]) -> None:
        import aisuite

        super().__init__(wire, kwargs)
        self.client = aisuite.Client(provider_configs={wire: dict(kwargs)})
        self.call = {
            "model": f"{wire}:{self.model}",
            "tools": openai_tools(),
            "max_tokens": MAX_TOKENS,
        }

    def send(self, messages: Any, call: dict[str, Any]) -> Any:
        return self.client.chat.completions.create(messages=messages, **call)

    def stream(self, native: Any) -> int:
        return _drain(
            self.client.chat.completions.create(messages=native, stream=True, **self.call)
        )

    async def agenerate(self, native: Any) -> Any:
        return await self.client.chat.completions.acreate(messages=native, **self.call)

    @classmethod
    def import_code(cls, wire: str) -> str:
        # aisuite builds a provider (and its SDK client) at its first call to it: built
        # here by the same factory, so that the figure holds the SDK's import too.
        return (
            "import aisuite\nfrom aisuite.provider import ProviderFactory\n"
            f"aisuite.Client(provider_configs={{{wire!r}: kw}})\n"
            f"ProviderFactory.create_provider({wire!r}, kw)"
        )


PEERS: dict[str, type[Peer]] = {
    "litellm": LiteLLM,
    "any-llm": AnyLLM,
    "pydantic-ai": PydanticAI,
    "aisuite": AISuite,
}


def missing(peer: str) -> str | None:
    """Why ``peer`` cannot run here (not installed), or None."""
    cls = PEERS[peer]
    if importlib.util.find_spec(cls.module) is None:
        return f"not installed (pip install {cls.distribution}; `make bench-peers` does)"
    return None


def not_applicable(peer: str, wire: str) -> str | None:
    """The reason ``peer`` has no figure on ``wire``, or None when it runs there."""
    return PEERS[peer].not_supported.get(wire) or missing(peer)
