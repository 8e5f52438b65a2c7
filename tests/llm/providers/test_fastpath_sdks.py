"""The fast path (issue 12) on Anthropic, Mistral and Bedrock: Zerda's body goes out
through the SDK's client without the SDK's documented call re-walking it, and what that
call would send (body, headers, options) is sent. The canaries fail loudly when the SDK
internals this relies on change (the SDK ranges are pinned in pyproject.toml)."""

from __future__ import annotations

import inspect
import json
import math
import warnings
from typing import Any

import pytest

from zerda.llm.providers import create_interface
from zerda.testing import MockLLMServer

HISTORY = [
    {"role": "user", "content": "Weather in Paris? é"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "a1b2c3d4e", "name": "get_weather", "arguments": {"city": "Paris"}}],
    },
    {"role": "tool", "tool_call_id": "a1b2c3d4e", "content": {"temperature": 18}},
]
TOOLS = [{"name": "get_weather", "description": "d", "parameters": {"type": "object"}}]


def _refuse(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the SDK's documented call was used")


# --- Anthropic -------------------------------------------------------------------------


def _anthropic(server: MockLLMServer, **options: Any) -> Any:
    llm = create_interface(
        "anthropic:claude-haiku-4-5", **server.client_options("anthropic"), **options
    )
    llm.client.messages.create = _refuse
    llm.async_client.messages.create = _refuse
    return llm


def test_anthropic_sends_what_messages_create_sends() -> None:
    """The same body (the SDK's compact UTF-8 JSON, fields in Zerda's order) and headers as
    messages.create() with the same keyword arguments, the caller's extra headers and body
    fields among them."""
    import anthropic

    extra = {"extra_headers": {"X-Extra": "1"}, "extra_body": {"top_k": 3}, "workspace_id": "w1"}
    with MockLLMServer() as server:
        server.set_default("anthropic", text="ok")
        llm = _anthropic(server)
        native = llm._native_request(HISTORY, {"tools": TOOLS, "max_tokens": 50, **extra})
        result = llm.generate(HISTORY, tools=TOOLS, max_tokens=50, **extra)
        ours = server.last_request("anthropic")
        sdk = anthropic.Anthropic(**server.sdk_client_kwargs("anthropic"), max_retries=0)
        sdk.messages.create(**native)
        theirs = server.last_request("anthropic")
    assert result["content"] == "ok"
    assert ours.path == theirs.path == "/v1/messages"
    assert ours.body == theirs.body
    # Byte for byte what the SDK's encoder writes for these fields in Zerda's order (msgspec
    # wrote them: zerda.llm._body_json).
    assert ours.raw_body == anthropic._utils._json.openapi_dumps(ours.body)
    assert "é".encode() in ours.raw_body and b", " not in ours.raw_body
    assert json.loads(ours.raw_body)["top_k"] == 3
    skip = {"x-stainless-retry-count", "x-stainless-read-timeout", "content-length"}
    assert {k: v for k, v in ours.headers.items() if k not in skip} == {
        k: v for k, v in theirs.headers.items() if k not in skip
    }
    assert ours.headers["anthropic-version"] and ours.headers["x-extra"] == "1"
    assert ours.headers["anthropic-workspace-id"] == "w1"


def test_anthropic_stream_and_async_go_through_post() -> None:
    with MockLLMServer() as server:
        server.enqueue("anthropic", text="one")
        server.enqueue("anthropic", text="two")
        server.enqueue("anthropic", text="three")
        llm = _anthropic(server)
        events = list(llm.stream("hi"))
        sent = server.last_request("anthropic")

        async def both() -> tuple[Any, Any]:
            result = await llm.generate_async("hi")
            streamed = [e async for e in llm.stream_async("hi")]
            await llm.aclose()
            return result, streamed

        import asyncio

        result, streamed = asyncio.run(both())
    assert sent.body["stream"] is True
    assert events[-1]["result"]["content"] == "one"
    assert result["content"] == "two"
    assert streamed[-1]["result"]["content"] == "three"


def test_anthropic_default_timeout_is_create_s() -> None:
    """No timeout given and the client's default: create()'s timeout from max_tokens."""
    from zerda.llm.wires.anthropic import fastpath as _anthropic_post

    with MockLLMServer() as server:
        llm = _anthropic(server)
        sdk = llm.sdk
        args = _anthropic_post.post_arguments(
            sdk, llm.client, {"model": "m", "messages": [], "max_tokens": 100}, is_async=False
        )
        expected = llm.client._calculate_nonstreaming_timeout(100, None)
        given = _anthropic_post.post_arguments(
            sdk,
            llm.client,
            {"model": "m", "messages": [], "max_tokens": 1, "timeout": 3},
            is_async=False,
        )
        streamed = _anthropic_post.post_arguments(
            sdk,
            llm.client,
            {"model": "m", "messages": [], "max_tokens": 1, "stream": True},
            is_async=False,
        )
    assert args["options"]["timeout"] == expected
    assert given["options"]["timeout"] == 3
    assert "timeout" not in streamed["options"]
    assert args["cast_to"] is object and "content" in args and "body" not in args


def test_anthropic_clients_that_route_by_body_get_the_body_as_json() -> None:
    """AnthropicBedrock / AnthropicVertex rewrite /v1/messages from the JSON body
    (_prepare_options): they get ``body=``, as create() gives it, never bytes."""
    import anthropic

    from zerda.llm.wires.anthropic import fastpath as _anthropic_post

    bedrock = anthropic.AnthropicBedrock(
        aws_region="us-east-1",
        aws_access_key="a",
        aws_secret_key="b",
        base_url="http://127.0.0.1:9",
    )
    args = _anthropic_post.post_arguments(
        anthropic, bedrock, {"model": "m", "messages": [], "max_tokens": 1}, is_async=False
    )
    assert args["body"] == {"model": "m", "messages": [], "max_tokens": 1}
    assert "content" not in args


@pytest.mark.parametrize("value", [{1, 2}, math.nan], ids=["a set", "NaN"])
def test_anthropic_a_value_that_is_not_plain_json_goes_as_body(value: Any) -> None:
    """msgspec would write NaN as null: the body goes to the SDK's encoder, which refuses it."""
    import anthropic

    from zerda.llm.wires.anthropic import fastpath as _anthropic_post

    client = anthropic.Anthropic(api_key="k", base_url="http://127.0.0.1:9")
    kwargs = {"model": "m", "messages": [], "max_tokens": 1, "metadata": {"user_id": value}}
    args = _anthropic_post.post_arguments(anthropic, client, kwargs, is_async=False)
    assert "content" not in args
    assert args["body"]["metadata"]["user_id"] is value  # the SDK's encoder decides


def test_anthropic_warns_for_a_deprecated_model_as_create_does() -> None:
    import anthropic

    from zerda.llm.wires.anthropic import fastpath as _anthropic_post

    model = next(iter(anthropic._data.DEPRECATED_MODELS))
    client = anthropic.Anthropic(api_key="k", base_url="http://127.0.0.1:9")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _anthropic_post.post_arguments(
            anthropic, client, {"model": model, "messages": [], "max_tokens": 1}, is_async=False
        )
    assert [w.category for w in caught] == [DeprecationWarning]
    assert model in str(caught[0].message)


# test_canary_anthropic_post_and_options: its names and signatures are the anthropic table's
# (wires/anthropic/fastpath.py), walked by tests/llm/wires/test_private_names.py. What the
# fast path copies from create() and the client stays checked here:


def test_anthropic_what_the_fast_path_copies_still_holds() -> None:
    anthropic = pytest.importorskip("anthropic")
    client = anthropic.Anthropic(api_key="k", base_url="http://127.0.0.1:9")
    assert client._calculate_nonstreaming_timeout(1024, None) is not None
    # content= bytes go out under the client's own JSON content type.
    assert client.default_headers["Content-Type"] == "application/json"
    assert anthropic.AnthropicBedrock._prepare_options is not anthropic.Anthropic._prepare_options
    create = set(inspect.signature(anthropic.resources.messages.Messages.create).parameters)
    assert {"user_profile_id", "workspace_id", "extra_headers", "extra_body", "timeout"} <= create


# --- Mistral ---------------------------------------------------------------------------


def _mistral(server: MockLLMServer) -> Any:
    llm = create_interface("mistral:m", fast_path=True, **server.client_options("mistral"))
    llm.client.chat.complete = _refuse
    llm.client.chat.stream = _refuse
    llm.client.chat.complete_async = _refuse
    llm.client.chat.stream_async = _refuse
    return llm


def test_mistral_sends_what_chat_complete_sends() -> None:
    from mistralai.client import Mistral

    with MockLLMServer() as server:
        server.set_default("mistral", text="ok")
        llm = _mistral(server)
        kwargs = {"tools": TOOLS, "max_tokens": 50, "random_seed": 3, "http_headers": {"X-A": "1"}}
        native = llm._native_request(HISTORY, kwargs)
        result = llm.generate(HISTORY, **kwargs)
        ours = server.last_request("mistral")
        Mistral(**server.sdk_client_kwargs("mistral")).chat.complete(**native)
        theirs = server.last_request("mistral")
    assert result["content"] == "ok"
    assert ours.path == theirs.path
    assert ours.body == theirs.body
    assert (
        ours.raw_body == json.dumps(ours.body, ensure_ascii=False, separators=(",", ":")).encode()
    )
    assert {k: v for k, v in ours.headers.items() if k != "content-length"} == {
        k: v for k, v in theirs.headers.items() if k != "content-length"
    }


def test_mistral_stream_and_async_go_through_the_sdk_steps() -> None:
    import asyncio

    with MockLLMServer() as server:
        for text in ("one", "two", "three"):
            server.enqueue("mistral", text=text)
        llm = _mistral(server)
        events = list(llm.stream("hi"))
        sent = server.last_request("mistral")

        async def both() -> tuple[Any, Any]:
            result = await llm.generate_async("hi")
            streamed = [e async for e in llm.stream_async("hi")]
            await llm.aclose()
            return result, streamed

        result, streamed = asyncio.run(both())
    assert sent.body["stream"] is True and sent.headers["accept"] == "text/event-stream"
    assert events[-1]["result"]["content"] == "one"
    assert result["content"] == "two"
    assert streamed[-1]["result"]["content"] == "three"


# test_canary_mistral_request_steps: its names and signatures are the mistral table's
# (wires/mistral/fastpath.py), walked by tests/llm/wires/test_private_names.py.


# --- Bedrock ---------------------------------------------------------------------------


def test_bedrock_checks_what_the_caller_adds_before_sending() -> None:
    """Zerda's clients skip botocore's validation of the whole request; a mistyped field
    the caller passes is still refused by botocore's validator, naming it."""
    with MockLLMServer() as server:
        llm = create_interface("bedrock:m", **server.client_options("bedrock"))
        result = llm.generate("hi", inferenceConfig={"maxTokens": "many"})
        sent = len(server.requests_for("bedrock"))
    assert result["error"]["type"] == "invalid_request"
    assert "inferenceConfig.maxTokens" in result["error"]["message"]
    assert sent == 0


def test_bedrock_a_callers_client_keeps_its_own_validation() -> None:
    import boto3

    with MockLLMServer() as server:
        client = boto3.client(**server.sdk_client_kwargs("bedrock"))
        llm = create_interface("bedrock:m", client=client)
        result = llm.generate("hi", inferenceConfig={"maxTokens": "many"})
    assert result["error"]["type"] == "invalid_request"
    assert getattr(llm, "_checks_native", False) is False


def test_botocore_validation_switch() -> None:
    """The documented Config switch the fast path turns off, read back by _make_client
    (validate_parameters is a row of the bedrock table: wires/bedrock/fastpath.py)."""
    pytest.importorskip("botocore")
    from botocore.config import Config

    assert Config(parameter_validation=False).parameter_validation is False
    assert Config().merge(Config(parameter_validation=True)).parameter_validation is True
