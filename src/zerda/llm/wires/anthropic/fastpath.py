"""Anthropic's fast path (issue 12): Zerda's Messages body sent through the SDK's
documented low-level ``client.post("/v1/messages", ...)`` instead of ``messages.create()``.

``messages.create()`` hands its arguments to ``post`` as they are, but every ``post`` of a
JSON ``body`` then copies the whole body (``_utils/_prepare.py``'s ``copy_tree``, so that a
retry can resend it), which is most of the SDK's CPU for a long history. Zerda's body is
already plain JSON, built fresh for this call, and Zerda retries itself: it is encoded once
here and posted as ``content=`` bytes, which the SDK sends as they are. The client stays
the SDK's own: base URL, auth, default and per-call headers (``anthropic-version``, betas),
timeouts, error classes, connection pool and SSE decoder. Responses and stream events
come back as the JSON the API sent (``cast_to=object``), which Zerda reads without
building the SDK's models.

What ``create()`` does besides posting is done here too: its default non-streaming timeout
(computed from ``max_tokens``, refusing what needs streaming), its warnings for deprecated
models, and its two header parameters. Clients that rewrite a request from its JSON body
(AnthropicBedrock, AnthropicVertex, Foundry...: their ``_prepare_options`` routes
``/v1/messages`` per model) and clients with middleware get the body as ``body=``, as
``create()`` gives it. Every private or undocumented name used is a row of
:data:`PRIVATE_NAMES` (DESIGN §22), which tests/llm/wires/test_private_names.py walks; an
interface built with ``fast_path=False``, or on an SDK lacking one of them, calls
``client.messages.create()`` instead.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

from zerda.llm._body_json import AsyncChunks, Body, SyncChunks, body_pieces
from zerda.llm._fastpath import PrivateName
from zerda.llm._signatures import signature_options

_POST = ("cast_to", "body", "content", "options", "stream", "stream_cls")
PRIVATE_NAMES: tuple[PrivateName, ...] = (
    PrivateName(
        "anthropic",
        "Anthropic.post",
        "posts the body: content= (bytes sent as they are), cast_to=object (the JSON as it "
        "came), stream_cls=Stream[object]",
        keywords=_POST,
    ),
    PrivateName("anthropic", "AsyncAnthropic.post", "as Anthropic.post", keywords=_POST),
    PrivateName(
        "anthropic._types",
        "RequestOptions",
        "post()'s options, from create()'s extra_headers, extra_query, extra_body, timeout",
        keywords=("headers", "params", "extra_json", "timeout"),
    ),
    PrivateName("anthropic", "_constants.DEFAULT_TIMEOUT", "create()'s default timeout"),
    PrivateName(
        "anthropic",
        "_constants.MODEL_NONSTREAMING_TOKENS",
        "create()'s non-streaming token limits per model",
    ),
    PrivateName(
        "anthropic",
        "Anthropic._calculate_nonstreaming_timeout",
        "create()'s timeout from max_tokens (a ValueError when the call needs streaming)",
        keywords=("max_tokens", "max_nonstreaming_tokens"),
    ),
    _DEPRECATED := PrivateName(
        "anthropic",
        "_data.DEPRECATED_MODELS",
        "create()'s deprecation warning",
        # anthropic 0.x releases (e.g. 0.125, which any-llm pins) keep it in the module
        # of messages.create itself.
        formerly=(("anthropic.resources.messages.messages", "DEPRECATED_MODELS"),),
    ),
    _THINKING_WARNED := PrivateName(
        "anthropic",
        "_data.MODELS_TO_WARN_WITH_THINKING_ENABLED",
        "create()'s warning for thinking 'enabled'",
        formerly=(
            ("anthropic.resources.messages.messages", "MODELS_TO_WARN_WITH_THINKING_ENABLED"),
        ),
    ),
    PrivateName(
        "anthropic",
        "Anthropic._prepare_options",
        "a client that rewrites requests from their JSON body (the cloud clients) overrides it",
    ),
    PrivateName("anthropic", "AsyncAnthropic._prepare_options", "as Anthropic._prepare_options"),
    PrivateName(
        "anthropic._base_client",
        "BaseClient.__init__",
        "a client with middleware (which may read the JSON body) gets body=",
        assigns=("_middleware",),
    ),
)

# The path every Anthropic client posts Messages to (the cloud clients rewrite it).
MESSAGES_PATH = "/v1/messages"

# create()'s keyword arguments that are request options, not body fields, and their names
# in post()'s ``options`` (RequestOptions); create() turns two parameters into headers.
_REQUEST_OPTIONS = {
    "extra_headers": "headers",
    "extra_query": "params",
    "extra_body": "extra_json",
    "timeout": "timeout",
}
_HEADER_PARAMETERS = {
    "user_profile_id": "anthropic-user-profile-id",
    "workspace_id": "anthropic-workspace-id",
}

_CREATE_PARAMETERS: dict[int, frozenset[str] | None] = {}


def create_parameters(sdk: Any) -> frozenset[str] | None:
    """The keyword names ``messages.create()`` takes (read once per SDK module)."""
    key = id(sdk)
    if key not in _CREATE_PARAMETERS:
        _CREATE_PARAMETERS[key] = signature_options(sdk.resources.messages.Messages.create)
    return _CREATE_PARAMETERS[key]


def check_names(sdk: Any, kwargs: dict[str, Any]) -> None:
    """A keyword ``create()`` does not take is refused as ``create()`` refuses it (the same
    TypeError, which Zerda reports as an invalid request naming it), before sending."""
    accepted = create_parameters(sdk)
    unknown = [k for k in kwargs if k not in accepted] if accepted is not None else []
    if unknown:
        raise TypeError(f"create() got an unexpected keyword argument '{unknown[0]}'")


def split_request(kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``create()``-style keyword arguments as ``post``'s JSON body and options
    (``timeout=None`` kept: it means no timeout; ``user_profile_id`` and ``workspace_id``
    become their headers, before the caller's ``extra_headers``, as in ``create()``)."""
    body: dict[str, Any] = {}
    options: dict[str, Any] = {}
    headers: dict[str, Any] = {}
    for key, value in kwargs.items():
        name = _REQUEST_OPTIONS.get(key)
        if key in _HEADER_PARAMETERS:
            headers[_HEADER_PARAMETERS[key]] = value
        elif name is None:
            body[key] = value
        elif value is not None or key == "timeout":
            options[name] = value
    if headers:
        options["headers"] = {**headers, **(options.get("headers") or {})}
    return body, options


def _default_timeout(sdk: Any, client: Any, body: dict[str, Any], options: dict[str, Any]) -> None:
    """create()'s timeout for a non-streaming call when neither the call nor the client
    sets one: computed from ``max_tokens`` (a ValueError when the call needs streaming)."""
    constants = sdk._constants
    if body.get("stream") or "timeout" in options or client.timeout != constants.DEFAULT_TIMEOUT:
        return
    limit = constants.MODEL_NONSTREAMING_TOKENS.get(body.get("model"), None)
    options["timeout"] = client._calculate_nonstreaming_timeout(body["max_tokens"], limit)


@functools.lru_cache(maxsize=1)
def _tables() -> tuple[Any, Any]:
    """create()'s two warning tables, wherever the installed release keeps them (the fast
    path is on only when both are found)."""
    return _DEPRECATED.resolve(), _THINKING_WARNED.resolve()


def _warn_like_create(body: dict[str, Any]) -> None:
    """The warnings ``create()`` gives for a deprecated model (and for thinking "enabled"
    on a model that should use "adaptive")."""
    deprecated, thinking_warned = _tables()
    model = body.get("model")
    if model in deprecated:
        warnings.warn(
            f"The model '{model}' is deprecated and will reach end-of-life on "
            f"{deprecated[model]}.\nPlease migrate to a newer model. Visit "
            "https://docs.anthropic.com/en/docs/resources/model-deprecations for more "
            "information.",
            DeprecationWarning,
            stacklevel=5,
        )
    thinking = body.get("thinking")
    if (
        model in thinking_warned
        and isinstance(thinking, dict)
        and thinking.get("type") == "enabled"
    ):
        warnings.warn(
            f"Using Claude with {model} and 'thinking.type=enabled' is deprecated. Use "
            "'thinking.type=adaptive' instead which results in better model performance in "
            "our testing: https://platform.claude.com/docs/en/build-with-claude/adaptive-thinking",
            UserWarning,
            stacklevel=5,
        )


def _sends_bytes(sdk: Any, client: Any, is_async: bool) -> bool:
    """Whether ``client`` sends a body as it is given: a first-party client with the base
    ``_prepare_options`` and no middleware (which may read the JSON body)."""
    base = sdk.AsyncAnthropic if is_async else sdk.Anthropic
    same = type(client)._prepare_options is base._prepare_options
    return same and not getattr(client, "_middleware", ())


def _encoded(body: dict[str, Any], options: dict[str, Any]) -> Body | None:
    """The body (``extra_body`` merged in, as the SDK merges it) as the JSON bytes the
    SDK's encoder writes (anthropic/_utils/_json.py's settings: :mod:`zerda.llm._body_json`);
    None when a value is not plain JSON (the SDK's own encoder then takes it as ``body=``)."""
    extra = options.get("extra_json")
    merged = {**body, **extra} if isinstance(extra, dict) else body
    return body_pieces(merged)


def _content(pieces: Body, options: dict[str, Any], is_async: bool) -> tuple[Any, dict[str, Any]]:
    """``content=`` and the options without ``extra_json`` (merged into the bytes): the
    bytes, or, for a body holding an image's or a document's base64 text, its pieces sent
    in turn, the text a slice at a time (no second copy of it), with their Content-Length."""
    options = {k: v for k, v in options.items() if k != "extra_json"}
    if not pieces.spliced:
        return pieces.joined(), options
    headers = {**(options.get("headers") or {}), "Content-Length": str(pieces.length)}
    chunks = AsyncChunks(pieces) if is_async else SyncChunks(pieces)
    return chunks, {**options, "headers": headers}


def post_arguments(
    sdk: Any, client: Any, kwargs: dict[str, Any], *, is_async: bool
) -> dict[str, Any]:
    """``client.post(MESSAGES_PATH, **post_arguments(...))`` sends what
    ``client.messages.create(**kwargs)`` sends and answers as it answers."""
    check_names(sdk, kwargs)
    body, options = split_request(kwargs)
    _default_timeout(sdk, client, body, options)
    _warn_like_create(body)
    stream = bool(body.get("stream"))
    # Answers and stream events as the JSON the API sent (``cast_to=object``, which the
    # SDK returns as it is): the readers take dicts and SDK models alike, and building the
    # models cost a tenth of a stream's CPU.
    stream_cls = (sdk.AsyncStream if is_async else sdk.Stream)[object]
    args: dict[str, Any] = {
        "cast_to": object,
        "stream": stream,
        "stream_cls": stream_cls,
    }
    pieces = _encoded(body, options) if _sends_bytes(sdk, client, is_async) else None
    if pieces is None:
        args["body"] = body
    else:
        args["content"], options = _content(pieces, options, is_async)
    args["options"] = options
    return args
