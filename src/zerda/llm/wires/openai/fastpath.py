"""The OpenAI-shaped fast path (issue 12, DESIGN §22), for the Stainless SDKs (``openai``,
``groq``): Zerda's body, already the API's JSON, goes out through the client's low-level
``client.post`` rather than ``chat.completions.create()`` (or ``responses.create()``), which
keeps the client's base URL, auth, headers, timeouts, error classes, pool and SSE decoder but
skips ``create()``'s TypedDict transformer (99% of a long history's CPU). ``cast_to=object``
hands back the parsed JSON as plain dicts, which the readers take.

``client.post`` itself is documented (the SDKs' README, "Undocumented endpoints"); its
``options=``, ``cast_to=object``, ``stream=`` and ``stream_cls=`` are not. Every such name is
in :func:`stainless_names`' tables, which one canary test walks
(tests/llm/wires/test_private_names.py); an SDK that lacks one gets the documented
``create()`` instead (:func:`documented_call`), its typed answer turned back into the same
plain JSON (:func:`plain`), so results do not depend on which path served them.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

from zerda.llm._body_json import AsyncChunks, SyncChunks, body_pieces
from zerda.llm._fastpath import PrivateName
from zerda.llm._signatures import signature_options
from zerda.llm.parts import with_urls

# The Stainless SDKs' per-call keyword arguments that are request options, not body fields,
# and their names in ``client.post``'s ``options=`` dict (RequestOptions).
_REQUEST_OPTIONS = {
    "extra_headers": "headers",
    "extra_query": "params",
    "extra_body": "extra_json",
    "timeout": "timeout",
}
_POST_KEYWORDS = ("path", "body", "options", "cast_to", "stream", "stream_cls")


def stainless_names(
    sdk: str, clients: tuple[str, str], resource: tuple[str, str]
) -> tuple[PrivateName, ...]:
    """The private or undocumented names the fast path uses on the Stainless SDK ``sdk``,
    with ``clients`` its sync and async client classes and ``resource`` the module (under
    ``<sdk>.resources``) and class whose ``create()`` the body stands for."""
    post = [
        PrivateName(
            sdk,
            f"{client}.post",
            "posts Zerda's body: options=, cast_to=object (the JSON as it came), stream= and "
            "stream_cls= are not documented",
            keywords=_POST_KEYWORDS,
        )
        for client in clients
    ]
    return (
        *post,
        PrivateName(
            f"{sdk}._types",
            "RequestOptions",
            "the options= dict: per-call headers, query, extra body fields and timeout",
            keywords=tuple(_REQUEST_OPTIONS.values()),
        ),
        *(
            PrivateName(
                sdk,
                f"{client}._prepare_options",
                "a client class that overrides it (AzureOpenAI) may route by the JSON body: "
                "it gets body=, the others content= bytes",
            )
            for client in clients
        ),
        PrivateName(sdk, "Stream", "stream_cls=Stream[object]: SSE chunks as parsed JSON"),
        PrivateName(sdk, "AsyncStream", "stream_cls=AsyncStream[object], for the async client"),
        PrivateName(
            f"{sdk}.resources.{resource[0]}",
            f"{resource[1]}.create",
            "its parameters: a keyword create() does not take is refused before sending",
        ),
    )


# openai's Chat Completions (the openai row and the OpenAI-compatible rows).
PRIVATE_NAMES: tuple[PrivateName, ...] = stainless_names(
    "openai", ("OpenAI", "AsyncOpenAI"), ("chat", "Completions")
)

# --- the fast path -----------------------------------------------------------------------


def post(
    client: Any,
    path: str,
    sent: dict[str, Any],
    options: dict[str, Any],
    stream: bool,
    stream_cls: Any,
) -> Any:
    """The body through ``client.post`` (sync or async client: the async one's returns the
    awaitable), ``sent`` its ``body=`` or ``content=`` (:func:`sent_body`), answered as
    parsed JSON (``cast_to=object``) or a stream of JSON chunks."""
    return client.post(
        path, **sent, options=options, cast_to=object, stream=stream, stream_cls=stream_cls
    )


# The SDKs' own client classes (sync, async): a client of another class (AzureOpenAI, which
# routes a request by its JSON body's model) gets the body as JSON.
_OWN_CLIENTS = {"openai": ("OpenAI", "AsyncOpenAI"), "groq": ("Groq", "AsyncGroq")}
_TAKES_CONTENT: dict[type, bool] = {}


def sends_bytes(sdk: Any, client: Any, is_async: bool) -> bool:
    """Whether ``client`` sends a body given as ``content=`` bytes as they are: a client of
    the SDK's own class (its ``_prepare_options``), without a provider runtime (openai's
    ``_provider_runtime``, read with a default: a release without runtimes has none; a
    runtime may rewrite the JSON body), whose ``post`` takes ``content=``."""
    names = _OWN_CLIENTS.get(getattr(sdk, "__name__", ""))
    own = getattr(sdk, names[is_async], None) if names else None
    cls = type(client)
    if own is None or getattr(cls, "_prepare_options", None) is not own._prepare_options:
        return False
    if getattr(client, "_provider_runtime", None) is not None:
        return False
    if cls not in _TAKES_CONTENT:
        _TAKES_CONTENT[cls] = "content" in (signature_options(cls.post) or ())
    return _TAKES_CONTENT[cls]


def sent_body(
    sdk: Any, client: Any, body: dict[str, Any], options: dict[str, Any], is_async: bool
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(``post``'s ``content=`` or ``body=``, its options). A client that sends bytes as
    they are gets the body encoded once here (``extra_body`` merged in, as the SDK merges
    it: :mod:`zerda.llm._body_json`), an image's base64 text streamed a slice at a time
    beside the Content-Length: no JSON string of the whole body, no data URL built. Any
    other client gets ``body=`` (its data URLs made strings), which the SDK encodes."""
    if sends_bytes(sdk, client, is_async):
        extra = options.get("extra_json")
        merged = {**body, **extra} if isinstance(extra, dict) else body
        pieces = body_pieces(merged)
        if pieces is not None:
            options = {k: v for k, v in options.items() if k != "extra_json"}
            if not pieces.spliced:
                return {"content": pieces.joined()}, options
            headers = {**(options.get("headers") or {}), "Content-Length": str(pieces.length)}
            content = AsyncChunks(pieces) if is_async else SyncChunks(pieces)
            return {"content": content}, {**options, "headers": headers}
    return {"body": with_urls(body)}, options


def stream_class(sdk: Any, is_async: bool) -> Any:
    """``stream_cls=``: the SDK's SSE reader, its chunks left as parsed JSON."""
    return sdk.AsyncStream[object] if is_async else sdk.Stream[object]


_CREATE_PARAMETERS: dict[tuple[str, str, str], frozenset[str] | None] = {}


def create_parameters(sdk: Any, resource: tuple[str, str]) -> frozenset[str] | None:
    """The keyword names the SDK's ``create`` of ``resource`` (its module under
    ``<sdk>.resources`` and its class, e.g. ``("chat", "Completions")``) takes, read once
    per SDK."""
    key = (sdk.__name__, *resource)
    if key not in _CREATE_PARAMETERS:
        module = importlib.import_module(f"{sdk.__name__}.resources.{resource[0]}")
        _CREATE_PARAMETERS[key] = signature_options(getattr(module, resource[1]).create)
    return _CREATE_PARAMETERS[key]


def split_request(kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``create()``-style keyword arguments as ``client.post``'s JSON body and options
    (``timeout=None`` kept: it means no timeout; the ``extra_*`` ones only when given)."""
    body: dict[str, Any] = {}
    options: dict[str, Any] = {}
    for key, value in kwargs.items():
        name = _REQUEST_OPTIONS.get(key)
        if name is None:
            body[key] = value
        elif value is not None or key == "timeout":
            options[name] = value
    return body, options


# --- the documented call -------------------------------------------------------------------


def documented_call(client: Any, attributes: tuple[str, ...]) -> Any:
    """The SDK's documented call on ``client``: ``attributes`` read in turn, e.g.
    ``("chat", "completions", "create")``."""
    target = client
    for name in attributes:
        target = getattr(target, name)
    return target


def plain(value: Any) -> Any:
    """A typed SDK answer as the plain JSON it was built from (the documented ``to_dict()``
    keeps the fields the server sent, by their API names), as ``cast_to=object`` gives it;
    anything else (text of a body that was not JSON, a dict) as it is."""
    to_dict = getattr(type(value), "to_dict", None)
    return to_dict(value) if callable(to_dict) else value


def plain_chunks(stream: Any) -> Iterator[Any]:
    for chunk in stream:
        yield plain(chunk)


async def plain_chunks_async(stream: Any) -> AsyncIterator[Any]:
    async for chunk in stream:
        yield plain(chunk)
