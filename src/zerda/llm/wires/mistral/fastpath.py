"""Mistral's fast path (issue 12): Zerda's chat body sent through the ``mistralai`` SDK's
own request machinery, without ``chat.complete()`` building and dumping its pydantic
request models (99% of the CPU of a call with a long history: 850 ms at 1,000 tool round
trips, measured in docs/decisions.md).

The Speakeasy SDK has no documented low-level call, so this uses the two steps
``chat.complete()`` itself takes, on the ``Chat`` resource of the caller's client:
``_build_request`` (server URL, security headers, user agent, per-call headers and
timeout) and ``do_request`` (the SDK's hooks, its httpx client and pool, its retry
configuration when the client has one), then reads the answer as ``complete()`` does:
422 as ``HTTPValidationError``, other 4XX/5XX as ``SDKError``, a stream through the SDK's
own SSE reader (``EventStream``). The body is Zerda's JSON, encoded once; responses and
stream chunks are read as plain JSON dicts, which the OpenAI-shaped readers take. These are private
names, all in :data:`PRIVATE_NAMES` (DESIGN §22), which one canary test walks
(tests/llm/wires/test_private_names.py); with ``fast_path=False``, or an SDK lacking one of
them, the interface calls ``chat.complete()`` / ``chat.stream()`` instead.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

from zerda.llm._body_json import AsyncChunks, SyncChunks, body_pieces
from zerda.llm._fastpath import PrivateName
from zerda.llm._signatures import signature_options
from zerda.llm.errors import excerpt, malformed_response

_SDK = "mistralai.client"
_BUILD = (
    *("method", "path", "base_url", "url_variables", "request", "request_body_required"),
    *("request_has_path_params", "request_has_query_params", "user_agent_header"),
    *("accept_header_value", "http_headers", "security", "get_serialized_body"),
    *("allow_empty_value", "timeout_ms"),
)
_DO = ("hook_ctx", "request", "is_error_status_code", "stream", "retry_config")
_EVENTS = ("response", "decoder", "sentinel", "client_ref")


def _name(
    module: str, path: str, why: str, keywords: tuple[str, ...] = (), assigns: tuple[str, ...] = ()
) -> PrivateName:
    return PrivateName(f"{_SDK}{module}", path, why, keywords, assigns)


# Every private or undocumented name the steps below use (DESIGN §22).
PRIVATE_NAMES: tuple[PrivateName, ...] = (
    _name(".chat", "Chat.complete", "its keywords: what the body may hold", keywords=("model",)),
    _name(".chat", "Chat.stream", "its keywords, for a stream", keywords=("model",)),
    _name(
        ".basesdk",
        "BaseSDK._build_request",
        "the request, as complete() builds it",
        keywords=_BUILD,
    ),
    _name(".basesdk", "BaseSDK._build_request_async", "the same, async", keywords=_BUILD),
    _name(".basesdk", "BaseSDK.do_request", "sends it: hooks, httpx client, retries", keywords=_DO),
    _name(".basesdk", "BaseSDK.do_request_async", "the same, async", keywords=_DO),
    _name(".basesdk", "BaseSDK._get_url", "the server URL of the client"),
    _name(
        ".basesdk",
        "BaseSDK.__init__",
        "the resource's SDKConfiguration",
        assigns=("sdk_configuration",),
    ),
    _name(
        ".sdkconfiguration",
        "SDKConfiguration",
        "the client's security, timeout and retry settings",
        keywords=("security", "timeout_ms", "retry_config"),
    ),
    _name(
        ".utils.requestbodies",
        "SerializedRequestBody",
        "carries Zerda's encoded body",
        keywords=("media_type", "content"),
    ),
    _name(
        "._hooks",
        "HookContext",
        "the SDK hooks' context of the call",
        keywords=("config", "base_url", "operation_id", "oauth2_scopes", "security_source"),
    ),
    _name(".utils", "get_security_from_env", "the hook context's security source"),
    _name(".models", "Security", "the security model read from the environment"),
    _name(".types", "UNSET", "the SDK's no-value marker (retries not given)"),
    _name(".utils", "RetryConfig", "the client's retry configuration"),
    _name(".utils", "match_status_codes", "which statuses are errors"),
    _name(".utils", "match_response", "the answer's status and content type"),
    _name(".utils", "stream_to_text", "an error answer's text"),
    _name(".utils", "stream_to_text_async", "the same, async"),
    _name(
        ".utils.unmarshal_json_response",
        "unmarshal_json_response",
        "a 422 answer's HTTPValidationErrorData",
    ),
    _name(".errors", "HTTPValidationErrorData", "a 422 answer's data"),
    _name(".errors", "HTTPValidationError", "raised for a 422, as complete() does"),
    _name(".errors", "SDKError", "raised for other error statuses, as complete() does"),
    _name(".utils.eventstreaming", "EventStream", "the SDK's SSE reader", keywords=_EVENTS),
    _name(".utils.eventstreaming", "EventStreamAsync", "the same, async", keywords=_EVENTS),
)

# complete()/stream()'s keyword arguments that are request options, not body fields.
_REQUEST_OPTIONS = ("retries", "server_url", "timeout_ms", "http_headers")
_PATHS = {False: "/v1/chat/completions", True: "/v1/chat/completions#stream"}
_OPERATIONS = {False: "chat_completion_v1_chat_completions_post", True: "stream_chat"}
_RETRIED = ["429", "500", "502", "503", "504"]  # as chat.complete() retries them

_PARAMETERS: dict[bool, frozenset[str] | None] = {}


def _accepted(stream: bool) -> frozenset[str] | None:
    """The keyword names ``chat.complete()`` (or ``chat.stream()``) takes, read once."""
    if stream not in _PARAMETERS:
        from mistralai.client.chat import Chat

        _PARAMETERS[stream] = signature_options(Chat.stream if stream else Chat.complete)
    return _PARAMETERS[stream]


def split(kwargs: dict[str, Any], stream: bool) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(JSON body, request options) of complete()-style keyword arguments; None when the
    body is not plain JSON (a pydantic model given natively: the SDK's own call takes
    it). A keyword complete() does not take is refused as complete() refuses it."""
    accepted = _accepted(stream)
    unknown = [k for k in kwargs if accepted is not None and k not in accepted]
    if unknown:
        name = "stream" if stream else "complete"
        raise TypeError(f"{name}() got an unexpected keyword argument '{unknown[0]}'")
    body = {k: v for k, v in kwargs.items() if k not in _REQUEST_OPTIONS}
    body["stream"] = stream
    options = {k: v for k, v in kwargs.items() if k in _REQUEST_OPTIONS}
    # The JSON the SDK sends (compact, UTF-8): zerda.llm._body_json.
    pieces = body_pieces(body)
    if pieces is None:
        return None
    options["content"] = pieces
    return body, options


def _content(options: dict[str, Any], is_async: bool) -> tuple[Any, Any]:
    """(httpx ``content=``, ``http_headers``): the body's bytes, or, for a body holding an
    image's or a document's base64 text, its pieces sent in turn (the text a slice at a
    time: no second copy of it) with their Content-Length."""
    pieces, headers = options["content"], options.get("http_headers")
    if not pieces.spliced:
        return pieces.joined(), headers
    headers = {**(headers or {}), "Content-Length": str(pieces.length)}
    return (AsyncChunks(pieces) if is_async else SyncChunks(pieces)), headers


def _request_args(
    chat: Any, options: dict[str, Any], stream: bool, is_async: bool = False
) -> dict[str, Any]:
    """``_build_request``'s arguments, as complete()/stream() give them."""
    from mistralai.client.utils.requestbodies import SerializedRequestBody

    config = chat.sdk_configuration
    timeout_ms = options.get("timeout_ms") or config.timeout_ms or 300000
    content, headers = _content(options, is_async)
    body = SerializedRequestBody(media_type="application/json", content=content)
    return {
        "method": "POST",
        "path": _PATHS[stream],
        "base_url": _base_url(chat, options),
        "url_variables": None,
        "request": None,
        "request_body_required": True,
        "request_has_path_params": False,
        "request_has_query_params": True,
        "user_agent_header": "user-agent",
        "accept_header_value": "text/event-stream" if stream else "application/json",
        "http_headers": headers,
        "security": config.security,
        "get_serialized_body": lambda: body,
        "allow_empty_value": None,
        "timeout_ms": timeout_ms,
    }


def _base_url(chat: Any, options: dict[str, Any]) -> Any:
    return options.get("server_url") or chat._get_url(None, None)


def _do_args(chat: Any, options: dict[str, Any], stream: bool) -> dict[str, Any]:
    """``do_request``'s arguments (less the request), as complete()/stream() give them."""
    from mistralai.client import models, utils
    from mistralai.client._hooks import HookContext
    from mistralai.client.types import UNSET
    from mistralai.client.utils import get_security_from_env

    config = chat.sdk_configuration
    retries = options.get("retries", UNSET)
    if retries == UNSET and config.retry_config is not UNSET:
        retries = config.retry_config
    return {
        "hook_ctx": HookContext(
            config=config,
            base_url=_base_url(chat, options) or "",
            operation_id=_OPERATIONS[stream],
            oauth2_scopes=None,
            security_source=get_security_from_env(config.security, models.Security),
            tags=["chat"],
            extensions=None,
        ),
        "is_error_status_code": lambda c: utils.match_status_codes(["4XX", "5XX"], c),
        "stream": stream,
        "retry_config": (retries, _RETRIED) if isinstance(retries, utils.RetryConfig) else None,
    }


def _prepared(
    chat: Any, options: dict[str, Any], stream: bool, is_async: bool = False
) -> tuple[dict[str, Any], Any]:
    return _request_args(chat, options, stream, is_async), _do_args(chat, options, stream)


def _raise_for(http_res: Any, text: str | None) -> None:
    """What complete()/stream() raise for an answer that is not theirs to read."""
    from mistralai.client import errors, utils
    from mistralai.client.utils.unmarshal_json_response import unmarshal_json_response

    if utils.match_response(http_res, "422", "application/json"):
        data = unmarshal_json_response(errors.HTTPValidationErrorData, http_res, text)
        raise errors.HTTPValidationError(data, http_res, text)
    if utils.match_response(http_res, ["4XX", "5XX"], "*"):
        raise errors.SDKError("API error occurred", http_res, text)
    raise errors.SDKError("Unexpected response received", http_res, text)


def _error_event(body: Any) -> dict[str, Any] | None:
    """The error of an error event Mistral sends with HTTP 200 (``{"error": {...}}`` or
    ``{"object": "error", ...}``); None for anything else."""
    if not isinstance(body, dict):
        return None
    if isinstance(body.get("error"), dict):
        error: dict[str, Any] = body["error"]
        return error
    return body if body.get("object") == "error" else None


def _read_json(text: str, provider: str, stream_error: Any) -> Any:
    """The answer's JSON (a JSONDecodeError is the provider's to map, with its cause)."""
    body = json.loads(text)
    error = _error_event(body)
    if error is not None:
        raise stream_error(error)
    return body


def complete(chat: Any, options: dict[str, Any], provider: str, stream_error: Any) -> Any:
    """One non-streamed call: the answer's JSON (dicts)."""
    from mistralai.client import utils

    request_args, do_args = _prepared(chat, options, False)
    http_res = chat.do_request(request=chat._build_request(**request_args), **do_args)
    if utils.match_response(http_res, "200", "application/json"):
        return _read_json(http_res.text, provider, stream_error)
    _raise_for(http_res, utils.stream_to_text(http_res) if http_res.status_code >= 400 else None)


async def complete_async(
    chat: Any, options: dict[str, Any], provider: str, stream_error: Any
) -> Any:
    from mistralai.client import utils

    request_args, do_args = _prepared(chat, options, False, is_async=True)
    request = chat._build_request_async(**request_args)
    http_res = await chat.do_request_async(request=request, **do_args)
    if utils.match_response(http_res, "200", "application/json"):
        return _read_json(http_res.text, provider, stream_error)
    text = await utils.stream_to_text_async(http_res) if http_res.status_code >= 400 else None
    _raise_for(http_res, text)


def _decode(raw: str) -> Any:
    return json.loads(raw)


def open_stream(chat: Any, options: dict[str, Any]) -> Any:
    """A streamed call: the SDK's EventStream of raw events (dicts with ``data``)."""
    from mistralai.client import utils
    from mistralai.client.utils import eventstreaming

    request_args, do_args = _prepared(chat, options, True)
    http_res = chat.do_request(request=chat._build_request(**request_args), **do_args)
    if utils.match_response(http_res, "200", "text/event-stream"):
        return eventstreaming.EventStream(http_res, _decode, sentinel="[DONE]", client_ref=chat)
    _raise_for(http_res, utils.stream_to_text(http_res))
    return None  # unreachable: _raise_for raises


async def open_stream_async(chat: Any, options: dict[str, Any]) -> Any:
    from mistralai.client import utils
    from mistralai.client.utils import eventstreaming

    request_args, do_args = _prepared(chat, options, True, is_async=True)
    request = chat._build_request_async(**request_args)
    http_res = await chat.do_request_async(request=request, **do_args)
    if utils.match_response(http_res, "200", "text/event-stream"):
        return eventstreaming.EventStreamAsync(
            http_res, _decode, sentinel="[DONE]", client_ref=chat
        )
    _raise_for(http_res, await utils.stream_to_text_async(http_res))
    return None


def _chunk(event: Any, provider: str, stream_error: Any) -> Any:
    """A stream event's chunk (its ``data``); an error event raises, as a chunk the SDK
    could not read did."""
    data = event.get("data") if isinstance(event, dict) else None
    error = _error_event(data)
    if error is not None:
        raise stream_error(error)
    if not isinstance(data, dict):
        raise malformed_response(provider, f"a stream event that is not a chunk: {excerpt(event)}")
    return data


def chunks(events: Any, provider: str, stream_error: Any) -> Iterator[Any]:
    for event in events:
        yield _chunk(event, provider, stream_error)


async def chunks_async(events: Any, provider: str, stream_error: Any) -> AsyncIterator[Any]:
    async for event in events:
        yield _chunk(event, provider, stream_error)
