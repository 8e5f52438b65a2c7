"""What the private google-genai functions Gemini's fast path relies on do
(src/zerda/llm/wires/gemini/sdk.py; their names and signatures are the rows of
wires/gemini/fastpath.py, walked by tests/llm/wires/test_private_names.py): each fails
loudly when a behaviour Zerda depends on changes. And the fast path really is taken:
``models.generate_content`` is never called."""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Iterator
from typing import Any

import pytest

from zerda.llm import create_interface
from zerda.llm.wires.gemini import sdk as _gemini_sdk
from zerda.testing import MockLLMServer

genai = pytest.importorskip("google.genai")

from google.genai import _api_client, _common, _transformers, types  # noqa: E402

MODEL = "gemini-2.5-flash"


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as srv:
        yield srv


# The names and signatures of the private google-genai functions the fast path calls are
# the gemini table's rows (wires/gemini/fastpath.py), walked by
# tests/llm/wires/test_private_names.py. What they do is checked here.


@pytest.mark.parametrize("name", ["request", "async_request"])
def test_the_api_clients_request_methods_are_async_where_named(name: str) -> None:
    method = getattr(_api_client.BaseApiClient, name)
    assert inspect.signature(method).parameters["http_options"].default is None
    assert inspect.iscoroutinefunction(method) == name.startswith("async_")


def test_the_model_path_transform() -> None:
    gemini = genai.Client(api_key="k")._api_client
    vertex = genai.Client(vertexai=True, project="p", location="l", api_key=None)._api_client
    assert _transformers.t_model(gemini, MODEL) == f"models/{MODEL}"
    assert _transformers.t_model(gemini, f"models/{MODEL}") == f"models/{MODEL}"
    assert _transformers.t_model(vertex, MODEL) == f"publishers/google/models/{MODEL}"
    assert _gemini_sdk.model_path(gemini, MODEL, stream=True) == (
        f"models/{MODEL}:streamGenerateContent?alt=sse"
    )


def test_the_config_converter_splits_top_level_and_generation_fields() -> None:
    api_client = genai.Client(api_key="k")._api_client
    top, generation = _gemini_sdk.convert_config(
        api_client,
        {
            "system_instruction": "s",
            "top_k": 3,
            "seed": 1,
            "safety_settings": [
                {"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}
            ],
        },
    )
    assert top == {
        "systemInstruction": {"parts": [{"text": "s"}], "role": "user"},
        "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}],
    }
    assert generation == {"topK": 3.0, "seed": 1}


def test_bytes_are_sent_as_urlsafe_base64() -> None:
    assert _common.encode_unserializable_types(
        _common.convert_to_dict({"a": [{"b": b"\xfb\xff"}]})
    ) == {"a": [{"b": "-_8="}]}


def test_the_response_converter_reads_the_rest_json() -> None:
    api_client = genai.Client(api_key="k")._api_client
    body = (
        '{"candidates": [{"content": {"role": "model", "parts": [{"text": "hi"},'
        ' {"functionCall": {"id": "c1", "name": "f", "args": {"a": 1}},'
        ' "thoughtSignature": "c2ln"}]}, "finishReason": "STOP"}],'
        ' "usageMetadata": {"promptTokenCount": 3, "totalTokenCount": 5},'
        ' "responseId": "r1"}'
    )
    response = _gemini_sdk.parse(
        api_client, _api_client.SdkHttpResponse(headers={"x-a": "1"}, body=body)
    )
    assert isinstance(response, types.GenerateContentResponse)
    part = response.candidates[0].content.parts[1]
    assert (part.function_call.id, part.function_call.args, part.thought_signature) == (
        "c1",
        {"a": 1},
        b"sig",
    )
    assert response.candidates[0].finish_reason == types.FinishReason.STOP
    assert response.usage_metadata.prompt_token_count == 3
    assert response.sdk_http_response.headers == {"x-a": "1"}
    assert (
        _gemini_sdk.parse(api_client, _api_client.SdkHttpResponse(headers={}, body="")).candidates
        is None
    )


def test_generate_content_still_posts_the_converted_body_as_zerda_does(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SDK's own call goes through ``_api_client.request('post', path, body,
    http_options)`` with the path Zerda builds: the behaviour Zerda's path copies."""
    client = genai.Client(**server.sdk_client_kwargs("gemini"))
    seen: list[tuple[Any, ...]] = []
    request = client._api_client.request

    def spy(*args: Any) -> Any:
        seen.append(args)
        return request(*args)

    monkeypatch.setattr(client._api_client, "request", spy)
    server.enqueue("gemini", text="ok")
    client.models.generate_content(
        model=MODEL, contents="hi", config={"http_options": {"timeout": 5000}}
    )
    [(method, path, body, http_options)] = seen
    assert (method, path) == ("post", _gemini_sdk.model_path(client._api_client, MODEL, False))
    assert body == {
        "contents": [{"parts": [{"text": "hi"}], "role": "user"}],
        "generationConfig": {},
    }
    assert http_options.timeout == 5000


def _no_sdk_call(llm: Any) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("models.generate_content was called")

    for models_ in (llm.client.models, llm.async_client.models):
        for name in ("generate_content", "generate_content_stream"):
            setattr(models_, name, refuse)


@pytest.mark.parametrize("row", ["gemini", "vertex"])
def test_the_fast_path_never_calls_generate_content(
    server: MockLLMServer, row: str, request: pytest.FixtureRequest
) -> None:
    llm = create_interface(row, model=MODEL, max_retries=0, **server.client_options(row))
    request.addfinalizer(llm.close)

    async def both() -> tuple[Any, Any]:
        _no_sdk_call(llm)
        server.enqueue(row, text="a")
        server.enqueue(row, text="b")
        generated = await llm.generate_async("hi", raise_errors=True)
        streamed = [e async for e in llm.stream_async("hi")][-1]["result"]
        return generated, streamed

    _no_sdk_call(llm)
    server.enqueue(row, text="c")
    server.enqueue(row, text="d")
    assert llm.generate("hi", raise_errors=True)["content"] == "c"
    assert list(llm.stream("hi"))[-1]["result"]["content"] == "d"
    generated, streamed = asyncio.run(both())
    assert (generated["content"], streamed["content"]) == ("a", "b")


def test_a_per_call_timeout_reaches_the_request(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm = create_interface("gemini", model=MODEL, max_retries=0, **server.client_options("gemini"))
    seen: list[Any] = []
    build = llm.client._api_client._build_request

    def spy(method: str, path: str, body: Any, http_options: Any = None) -> Any:
        built = build(method, path, body, http_options)
        seen.append(built.timeout)
        return built

    monkeypatch.setattr(llm.client._api_client, "_build_request", spy)
    server.enqueue("gemini", text="ok")
    llm.generate("hi", timeout=2.5, raise_errors=True)
    llm.close()
    assert seen == [2.5]


def test_generate_content_s_body_goes_as_zerdas_bytes_unless_the_sdk_must_write_it(
    server: MockLLMServer,
) -> None:
    """Zerda's bytes (an image's text never copied whole: issue 37), given to the SDK's
    sender as the request's data; an ``extra_body``, which the SDK merges into its dict,
    leaves the dict to ``request()``."""
    client = genai.Client(**server.sdk_client_kwargs("gemini"))  # held: it closes when collected
    api_client = client._api_client
    body = {"contents": [{"parts": [{"text": "hï"}], "role": "user"}], "generationConfig": {}}
    written = _gemini_sdk._payload_bytes(api_client, body, None)
    assert (
        written
        == '{"contents":[{"parts":[{"text":"hï"}],"role":"user"}],"generationConfig":{}}'.encode()
    )
    assert _gemini_sdk._payload_bytes(api_client, body, {"extra_body": {"labels": {}}}) is None
    server.enqueue("gemini", text="ok")
    answer = _gemini_sdk._post(
        api_client, _gemini_sdk.model_path(api_client, MODEL, False), body, None
    )
    assert json.loads(answer.body)["candidates"][0]["content"]["parts"] == [{"text": "ok"}]
    assert server.last_request("gemini").body == body
