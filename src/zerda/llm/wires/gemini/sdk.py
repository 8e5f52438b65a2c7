"""Gemini's fast path (issue 12): Zerda's own REST body sent through google-genai's client.

``models.generate_content()`` validates its arguments into pydantic models and walks them
again to write the REST body (``models._GenerateContentParameters_to_mldev`` /
``_to_vertex``): at 1,000 tool round trips that is about 70 times the cost of encoding the
body. Zerda writes the GenerateContentRequest JSON itself (gemini.py) and posts it with the
SDK's own API client, ``client._api_client.request('post', path, body, http_options)``
(``request_streamed`` with ``?alt=sse``, and the async ``async_request`` /
``async_request_streamed``), exactly as ``generate_content`` does after its conversion: the
client keeps its base URL, API key or Google Cloud credentials, headers, per-call
``http_options`` (timeouts), error classes (``errors.APIError``) and connection pool. The
answer becomes the SDK's ``GenerateContentResponse`` as ``generate_content`` makes it
(``_GenerateContentResponse_from_mldev`` / ``_from_vertex``, then ``_from_response``):
one response is cheap to validate, and Zerda's response mapping stays as it was.

What is small and intricate stays the SDK's own: the ``**native`` config fields and the
tool declarations (google-genai's Schema model: ``"type": "STRING"``, numbers as floats)
are validated and converted by the SDK's config converter, the tools once per tool set.

These are private names of google-genai, every one a row of
:data:`zerda.llm.wires.gemini.fastpath.PRIVATE_NAMES` (walked by
tests/llm/wires/test_private_names.py; what they do is checked by
tests/llm/providers/test_gemini_private_api.py). Off the fast path, or on a google-genai
lacking one, the interface uses the documented calls instead (documented.py).
"""

from __future__ import annotations

import base64
import functools
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

from zerda.llm.errors import InvalidRequestError

Body = dict[str, Any]


def model_path(api_client: Any, model: str, stream: bool) -> str:
    """The request path ``generate_content`` posts to: ``models/{m}:generateContent`` on the
    Gemini API, ``publishers/google/models/{m}:...`` on Vertex AI (``t.t_model``; the client
    adds ``projects/.../locations/...`` itself)."""
    from google.genai import _transformers

    name = _transformers.t_model(api_client, model)
    return f"{name}:streamGenerateContent?alt=sse" if stream else f"{name}:generateContent"


# --- the SDK's config converter, for **native and the tools -------------------------------


def convert_config(api_client: Any, config: dict[str, Any]) -> tuple[Body, Body]:
    """``config`` (GenerateContentConfig fields, snake_case) validated and converted as
    ``generate_content`` converts them: (the request's top-level fields, its
    ``generationConfig``). A field the SDK refuses is an invalid_request naming it."""
    from google.genai import _common, models, types

    try:
        model = types.GenerateContentConfig.model_validate(config)
    except ValueError as exc:  # pydantic's ValidationError
        raise InvalidRequestError(config_problem(exc)) from exc
    convert = (
        models._GenerateContentConfig_to_vertex
        if api_client.vertexai
        else models._GenerateContentConfig_to_mldev
    )
    top: Body = {}
    generation = convert(api_client, model, top, None)
    top = _common.encode_unserializable_types(_common.convert_to_dict(top))
    generation = _common.encode_unserializable_types(_common.convert_to_dict(generation))
    return top, generation


def config_problem(exc: Exception) -> str:
    """pydantic's refusal of the config, naming each argument it refused."""
    errors = getattr(exc, "errors", None)
    problems = []
    for error in errors() if callable(errors) else []:
        where = ".".join(str(part) for part in error.get("loc", ()))
        problems.append(f"{where or 'config'}: {error.get('msg', 'invalid')}")
    detail = "; ".join(problems) or str(exc)
    return (
        f"google-genai's GenerateContentConfig refuses the argument(s) given: {detail} "
        "(extra keyword arguments become config fields)"
    )


def rest_tools(api_client: Any, tools_json: str) -> list[Any]:
    """The ``tools`` of the body for Zerda's adapted declarations (``tools_json``: their
    JSON), converted by the SDK once per tool set and API: the same tools come back every
    turn, and the result is only read (json-encoded by the client)."""
    return _rest_tools(bool(api_client.vertexai), tools_json, _Holder(api_client))


class _Holder:
    """The API client, out of the cache key: only its ``vertexai`` flag (in the key) changes
    what the tools become."""

    def __init__(self, api_client: Any) -> None:
        self.api_client = api_client

    def __hash__(self) -> int:
        return 0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Holder)


@functools.lru_cache(maxsize=64)
def _rest_tools(vertex: bool, tools_json: str, holder: _Holder) -> list[Any]:
    top, _ = convert_config(holder.api_client, {"tools": json.loads(tools_json)})
    tools: list[Any] = top["tools"]
    return tools


# --- sending and reading ------------------------------------------------------------------


class _Hops:
    """The hops of one generateContent call, as ``generate_content`` continues it
    (google-genai 3.x's automatic continuation, unless ``continuation`` is off: an answer
    that stops with ``CONTINUATION`` and a ``continuationToken`` is asked for again with the
    token, and the hops' answers are merged by the SDK's own merger). Sync and async
    differ only in the awaited request."""

    def __init__(self, body: Body, continuation: bool) -> None:
        self.body, self.continuation = body, continuation
        self.responses: list[Any] = []
        self.token: bytes | None = None

    def next_body(self) -> Body | None:
        """The body of the next hop; None when the answer is complete."""
        return _resumed(self.body, self.token) if not self.responses or self.token else None

    def add(self, response: Any) -> None:
        from google.genai import _extra_utils

        self.responses.append(response)
        self.token = (
            _extra_utils.should_continue_generation(response) if self.continuation else None
        )

    def result(self) -> Any:
        from google.genai import _extra_utils

        if len(self.responses) == 1:
            return self.responses[0]
        return _extra_utils.merge_continuation_responses(self.responses)


def send(
    api_client: Any, model: str, body: Body, http_options: Any, continuation: bool = True
) -> Any:
    """One generateContent call, continued as ``generate_content`` continues it
    (:class:`_Hops`)."""
    path = model_path(api_client, model, stream=False)
    hops = _Hops(body, continuation)
    while (hop := hops.next_body()) is not None:
        hops.add(parse(api_client, api_client.request("post", path, hop, http_options)))
    return hops.result()


async def send_async(
    api_client: Any, model: str, body: Body, http_options: Any, continuation: bool = True
) -> Any:
    path = model_path(api_client, model, stream=False)
    hops = _Hops(body, continuation)
    while (hop := hops.next_body()) is not None:
        answer = await api_client.async_request("post", path, hop, http_options)
        hops.add(parse(api_client, answer))
    return hops.result()


def send_streamed(
    api_client: Any, model: str, body: Body, http_options: Any, continuation: bool = True
) -> Iterator[Any]:
    """The stream's chunks as GenerateContentResponses; the request goes out on the first
    ``next()`` (the SDK's generator). Its hops are driven by the SDK's own
    ``StreamContinuation``, as ``generate_content_stream`` drives them (a stream that ends
    or drops after a checkpoint token resumes from it; without tokens, one hop)."""
    from google.genai import _extra_utils

    path = model_path(api_client, model, stream=True)
    state = _extra_utils.StreamContinuation(_continuation_config(continuation))
    while True:
        hop = _resumed(body, _token(state.start_hop()))
        error: Exception | None = None
        try:
            for response in api_client.request_streamed("post", path, hop, http_options):
                yield state.observe(parse(api_client, response))
        except Exception as exc:  # end_hop raises it again unless the stream resumes
            error = exc
        if not state.end_hop(error):
            return


async def send_streamed_async(
    api_client: Any, model: str, body: Body, http_options: Any, continuation: bool = True
) -> AsyncIterator[Any]:
    from google.genai import _extra_utils

    path = model_path(api_client, model, stream=True)
    state = _extra_utils.StreamContinuation(_continuation_config(continuation))
    while True:
        hop = _resumed(body, _token(state.start_hop()))
        error: Exception | None = None
        try:
            responses = await api_client.async_request_streamed("post", path, hop, http_options)
            async for response in responses:
                yield state.observe(parse(api_client, response))
        except Exception as exc:
            error = exc
        if not state.end_hop(error):
            return


def _continuation_config(continuation: bool) -> Any:
    return None if continuation else {"automatic_continuation": False}


def _token(config: Any) -> bytes | None:
    """The continuation token of the config ``StreamContinuation`` gives a hop."""
    if isinstance(config, dict):
        return config.get("continuation_token")
    return getattr(config, "continuation_token", None)


def _resumed(body: Body, token: bytes | None) -> Body:
    """The body of a continuation hop: the same request with the token, which
    google-genai's converter puts at the top level, URL-safe base64."""
    if not token:
        return body
    return {**body, "continuationToken": base64.urlsafe_b64encode(token).decode("ascii")}


def parse(api_client: Any, response: Any) -> Any:
    """An ``SdkHttpResponse`` as the ``GenerateContentResponse`` ``generate_content`` makes
    of it (an empty body is ``{}``, as there; its ``.parsed`` is left out: Zerda parses
    structured answers itself)."""
    from google.genai import models, types

    data = json.loads(response.body) if response.body else {}
    convert = (
        models._GenerateContentResponse_from_vertex
        if api_client.vertexai
        else models._GenerateContentResponse_from_mldev
    )
    result = types.GenerateContentResponse._from_response(
        response=convert(data, None, None), kwargs={}
    )
    result.sdk_http_response = types.HttpResponse(headers=response.headers)
    return result


# --- the SDK's own call, from Zerda's body (batch requests, benchmarks) ----------------


def sdk_kwargs(model: str, body: Body) -> dict[str, Any]:
    """``generate_content``'s keyword arguments that send ``body``: the contents as they are
    (google-genai's models take the camelCase names), base64 fields as the bytes the SDK
    encodes again, and a ``GenerateContentConfig`` of the other fields (read as JSON, so
    that its base64 fields are decoded too)."""
    from google.genai import types

    fields = {k: v for k, v in body.items() if k not in ("contents", "generationConfig")}
    fields.update(body.get("generationConfig") or {})
    return {
        "model": model,
        "contents": [_decoded_content(c) for c in body["contents"]],
        "config": types.GenerateContentConfig.model_validate_json(json.dumps(fields)),
    }


def _decoded_content(content: Body) -> Body:
    return {**content, "parts": [_decoded_part(p) for p in content.get("parts") or []]}


def _decoded_part(part: Body) -> Body:
    part = dict(part)
    if "thoughtSignature" in part:
        part["thoughtSignature"] = base64.urlsafe_b64decode(part["thoughtSignature"])
    for key in ("inlineData", "inline_data"):
        if key in part:
            part[key] = {**part[key], "data": base64.urlsafe_b64decode(part[key]["data"])}
    response = part.get("functionResponse")
    if isinstance(response, dict) and response.get("parts"):
        part["functionResponse"] = {
            **response,
            "parts": [_decoded_part(p) for p in response["parts"]],
        }
    return part
