"""Gemini's fast path (issue 12): Zerda's own REST body sent through google-genai's client.

``models.generate_content()`` validates its arguments into pydantic models and walks them
again to write the REST body (``models._GenerateContentParameters_to_mldev`` /
``_to_vertex``): at 1,000 tool round trips that is about 70 times the cost of encoding the
body. Zerda writes the GenerateContentRequest JSON itself (gemini.py) and posts it with the
SDK's own API client, ``client._api_client.request('post', path, body, http_options)``
(and the async ``async_request``), exactly as ``generate_content`` does after its
conversion: the client keeps its base URL, API key or Google Cloud credentials, headers,
per-call ``http_options`` (timeouts), error classes (``errors.APIError``) and connection
pool. The answer becomes the SDK's ``GenerateContentResponse`` as ``generate_content``
makes it (``_GenerateContentResponse_from_mldev`` / ``_from_vertex``, then
``_from_response``): one response is cheap to validate, and Zerda's response mapping stays
as it was. A stream (``streamGenerateContent`` with ``?alt=sse``) is many: its chunks stay
the JSON the SDK's SSE reader parses, read by stream.py (issue 37: building a pydantic
response for every chunk was most of a stream's CPU).

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

from zerda.llm._body_json import body_pieces
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


def _payload_bytes(api_client: Any, body: Body, http_options: Any) -> bytes | None:
    """The body's JSON bytes, written by Zerda (:mod:`zerda.llm._body_json`: an image's or
    a document's base64 text is never copied whole, where ``request()`` writes the dict as
    JSON text, then bytes; and msgspec writes the rest faster than ``json.dumps``). None
    for a value that is not plain JSON, for ``extra_body`` (which the SDK merges into the
    dict) and for Vertex AI with Google Cloud credentials (whose sync sender writes the
    dict itself): ``request()`` takes those."""
    extras = [_extra_body(o) for o in (http_options, api_client._http_options)]
    adc = api_client.vertexai and (api_client.project or api_client.location)
    if any(extras) or (adc and not api_client.api_key):
        return None
    pieces = body_pieces(body, checked="contents")
    return None if pieces is None else pieces.joined()


def _extra_body(options: Any) -> Any:
    """The ``extra_body`` of http_options given as a dict or an ``HttpOptions``."""
    if isinstance(options, dict):
        return options.get("extra_body")
    return getattr(options, "extra_body", None)


def _post(api_client: Any, path: str, body: Body, http_options: Any) -> Any:
    """``api_client.request("post", path, body, http_options)``, the body given as the
    bytes :func:`_payload_bytes` writes (the SDK sends bytes as they are): its
    ``_build_request`` with no fields, then its ``_request``, as ``request()`` does."""
    data = _payload_bytes(api_client, body, http_options)
    if data is None:
        return api_client.request("post", path, body, http_options)
    from google.genai import _api_client

    http_request = api_client._build_request("post", path, {}, http_options)
    http_request.data = data
    answer = api_client._request(http_request, http_options, stream=False)
    text = answer.response_stream[0] if answer.response_stream else ""
    return _api_client.SdkHttpResponse(headers=answer.headers, body=text)


async def _post_async(api_client: Any, path: str, body: Body, http_options: Any) -> Any:
    data = _payload_bytes(api_client, body, http_options)
    if data is None:
        return await api_client.async_request("post", path, body, http_options)
    from google.genai import _api_client

    http_request = api_client._build_request("post", path, {}, http_options)
    http_request.data = data
    answer = await api_client._async_request(http_request, http_options, stream=False)
    text = answer.response_stream[0] if answer.response_stream else ""
    return _api_client.SdkHttpResponse(headers=answer.headers, body=text)


def send(
    api_client: Any, model: str, body: Body, http_options: Any, continuation: bool = True
) -> Any:
    """One generateContent call, continued as ``generate_content`` continues it
    (:class:`_Hops`)."""
    path = model_path(api_client, model, stream=False)
    hops = _Hops(body, continuation)
    while (hop := hops.next_body()) is not None:
        hops.add(parse(api_client, _post(api_client, path, hop, http_options)))
    return hops.result()


async def send_async(
    api_client: Any, model: str, body: Body, http_options: Any, continuation: bool = True
) -> Any:
    path = model_path(api_client, model, stream=False)
    hops = _Hops(body, continuation)
    while (hop := hops.next_body()) is not None:
        hops.add(parse(api_client, await _post_async(api_client, path, hop, http_options)))
    return hops.result()


def send_streamed(
    api_client: Any, model: str, body: Body, http_options: Any, continuation: bool = True
) -> Iterator[Body]:
    """The stream's chunks as the JSON objects the API sends (stream.py: no
    GenerateContentResponse is built); the request goes out on the first ``next()``. Its
    hops are continued as ``generate_content_stream`` continues them
    (:class:`~zerda.llm.wires.gemini.stream.Hops`: a stream that ends or drops after a
    checkpoint token resumes from it; without tokens, one hop)."""
    from zerda.llm.wires.gemini.stream import Hops

    path = model_path(api_client, model, stream=True)
    hops = Hops(continuation)
    while True:
        hop = _resumed(body, hops.start())
        error: Exception | None = None
        try:
            for chunk in _chunks(api_client, path, hop, http_options):
                yield hops.observe(chunk)
        except Exception as exc:  # end raises it again unless the stream resumes
            error = exc
        if not hops.end(error):
            return


async def send_streamed_async(
    api_client: Any, model: str, body: Body, http_options: Any, continuation: bool = True
) -> AsyncIterator[Body]:
    from zerda.llm.wires.gemini.stream import Hops

    path = model_path(api_client, model, stream=True)
    hops = Hops(continuation)
    while True:
        hop = _resumed(body, hops.start())
        error: Exception | None = None
        try:
            async for chunk in _chunks_async(api_client, path, hop, http_options):
                yield hops.observe(chunk)
        except Exception as exc:
            error = exc
        if not hops.end(error):
            return


def _chunks(api_client: Any, path: str, body: Body, http_options: Any) -> Iterator[Any]:
    """``request_streamed("post", path, body, http_options)`` without its last steps: each
    SSE event's JSON as the SDK's reader parses it (``HttpResponse.segments``), where
    ``request_streamed`` writes it as text again for an ``SdkHttpResponse``; an error
    event raised as its ``APIError``, as there. (streamGenerateContent with ``alt=sse``: one
    ``GenerateContentResponse`` JSON object a ``data:`` event,
    https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent)"""
    from google.genai import errors

    request = api_client._build_request("post", path, body, http_options)
    response = api_client._request(request, http_options, stream=True)
    for chunk in response.segments():
        if _is_error(chunk):
            errors.APIError.raise_error(chunk.get("error", {}).get("code"), chunk, response)
        yield chunk


async def _chunks_async(
    api_client: Any, path: str, body: Body, http_options: Any
) -> AsyncIterator[Any]:
    from google.genai import errors

    request = api_client._build_request("post", path, body, http_options)
    response = await api_client._async_request(request, http_options, stream=True)
    async for chunk in response.async_segments():
        if _is_error(chunk):
            code = chunk.get("error", {}).get("code")
            await errors.APIError.raise_error_async(code, chunk, response)
        yield chunk


def _is_error(chunk: Any) -> bool:
    """An SSE event whose JSON starts with ``"error"`` (``request_streamed``'s test: its
    text starts with ``{"error":``): the API's error mid-stream."""
    return isinstance(chunk, dict) and next(iter(chunk), None) == "error"


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


def _blob_bytes(data: str) -> bytes:
    """A blob's bytes: the caller's own when Zerda encoded them (:func:`zerda.llm.parts.encode`),
    else decoded (standard or URL-safe base64: the URL-safe decoder takes both)."""
    raw = getattr(data, "raw", None)
    return raw if isinstance(raw, bytes) else base64.urlsafe_b64decode(data)


def _decoded_part(part: Body) -> Body:
    part = dict(part)
    if "thoughtSignature" in part:
        part["thoughtSignature"] = base64.urlsafe_b64decode(part["thoughtSignature"])
    for key in ("inlineData", "inline_data"):
        if key in part:
            part[key] = {**part[key], "data": _blob_bytes(part[key]["data"])}
    response = part.get("functionResponse")
    if isinstance(response, dict) and response.get("parts"):
        part["functionResponse"] = {
            **response,
            "parts": [_decoded_part(p) for p in response["parts"]],
        }
    return part
