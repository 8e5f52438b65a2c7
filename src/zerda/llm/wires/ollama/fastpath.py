"""Ollama's fast path (DESIGN §22): Zerda's body, already ``/api/chat``'s JSON, sent on the
SDK client's own httpx client rather than through ``Client.chat()``, whose pydantic models
drop what Zerda must keep (tool schemas lose nested ``properties``, ``anyOf``, ``minimum``,
``additionalProperties``; tool-call ``id``s and ``tool_call_id`` are removed) and whose
stream reader splits lines at U+2028 too. The SDK has no documented low-level call, so this
uses its private ``_request_raw`` and ``_client``: every such name is in
:data:`PRIVATE_NAMES`, which one canary test walks (tests/llm/wires/test_private_names.py).

With ``fast_path=False``, or an SDK lacking one of them, the interface calls the documented
``Client.chat()`` (:func:`documented_chat`, :func:`documented_stream`): never broken, but
it carries only what chat()'s models hold. On the wire that means no tool-call ``id`` or
``tool_call_id``, tool schemas cut to chat()'s ``Tool`` model, falsy message fields left
out, ``tools: []`` when there are none, and no per-call timeout (chat() takes none: the
client's applies); in results, tool calls without the server's ids.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import AsyncGenerator, Generator
from typing import TYPE_CHECKING, Any

from zerda.llm import _lazy
from zerda.llm._fastpath import PrivateName
from zerda.llm.errors import excerpt, malformed_response

if TYPE_CHECKING:
    from zerda.llm import _body_json
else:  # with the first body (building the client needs none of it)
    _body_json = _lazy.module("zerda.llm._body_json", __name__, "_body_json")

CHAT_PATH = "/api/chat"

PRIVATE_NAMES: tuple[PrivateName, ...] = (
    PrivateName(
        "ollama._client",
        "BaseClient.__init__",
        "self._client: the client's httpx client (host, headers, timeout) that sends the body",
        assigns=("_client",),
    ),
    PrivateName(
        "ollama",
        "Client._request_raw",
        "sends a request on _client, an error status raised as ResponseError as chat() does",
    ),
    PrivateName("ollama", "AsyncClient._request_raw", "the same, async"),
    PrivateName(
        "ollama",
        "ResponseError",
        "raised for a stream's error status or error line, as chat() raises it",
        keywords=("error", "status_code"),
    ),
)


# --- the fast path -----------------------------------------------------------------------


def post(client: Any, body: dict[str, Any], extra: dict[str, Any]) -> Any:
    """One non-streamed call on ``client`` (an ``ollama.Client``): the answer's JSON as the
    server sent it. ``_request_raw``, as ``_request(dict, ...)`` would fail with a
    TypeError on a body that is not an object."""
    return client._request_raw("POST", **send_args(client._client, body, extra)).json()


async def post_async(client: Any, body: dict[str, Any], extra: dict[str, Any]) -> Any:
    args = send_args(client._client, body, extra, is_async=True)
    return (await client._request_raw("POST", **args)).json()


# --- stream reading ----------------------------------------------------------------------
#
# The SDK's own streaming (``_request(..., stream=True)``) splits the NDJSON body with
# httpx's iter_lines, which also breaks lines at U+0085, U+2028 and U+2029: a text or an
# argument holding one unescaped (valid JSON) is cut in two and the stream fails. Here the
# SDK's HTTP client (host, headers, timeout) sends the request and its ResponseError
# reports failures, but the body is split on b"\n" alone.


class LineSplitter:
    """NDJSON lines from byte chunks, split on b"\n" only; blank lines are skipped."""

    def __init__(self) -> None:
        self._pending: list[bytes] = []  # the start of a line not yet ended

    def feed(self, data: bytes) -> list[bytes]:
        *ended, rest = data.split(b"\n")
        if ended:
            ended[0] = b"".join([*self._pending, ended[0]])
            self._pending = []
        if rest:
            self._pending.append(rest)
        return [line for line in ended if line.strip()]

    def flush(self) -> list[bytes]:
        """The last line, when the body did not end with a newline."""
        line, self._pending = b"".join(self._pending), []
        return [line] if line.strip() else []


def _raise_for_status(response: Any, sdk: Any) -> None:
    """The SDK's ResponseError for an HTTP error status, raised (as the SDK does) while
    httpx's HTTPStatusError is handled: it stays the __context__ that _retry_after reads."""
    import httpx

    try:
        response.raise_for_status()
    except httpx.HTTPStatusError as exc:
        raise sdk.ResponseError(exc.response.text, exc.response.status_code) from None


def _parse_line(line: bytes, sdk: Any) -> dict[str, Any]:
    part = json.loads(line)
    if not isinstance(part, dict):
        raise malformed_response("ollama", f"a stream line is not an object: {line[:80]!r}")
    if part.get("error"):
        raise sdk.ResponseError(part["error"])  # a failure after the stream began
    return part


def send_args(
    http: Any, body: dict[str, Any], extra: dict[str, Any], is_async: bool = False
) -> dict[str, Any]:
    """httpx ``request``/``stream`` arguments sending ``body`` to ``/api/chat`` on the SDK
    client's httpx client ``http``, as ``json=body`` sends it, for less CPU.

    ``json=`` makes httpx encode the body with its standard encoder and merge the path into
    the base URL again (parsing both) on every call: about 70 µs of a 1.2 ms short call.
    The bytes are the same ones (:mod:`zerda.llm._body_json`), and so is the URL, merged
    once per base URL as httpx merges it. The ``Content-Type`` ``json=`` would set is set
    when the client's headers have none (httpx lets the client's own win). A body holding
    a value that is not plain JSON goes as ``json=``: httpx says what is wrong."""
    pieces = _body_json.body_pieces(body)
    if pieces is None:
        return {"url": CHAT_PATH, "json": body, **extra}
    headers = {} if "content-type" in http.headers else dict(_JSON_TYPE)
    if pieces.spliced:  # an image's text sent a slice at a time: no second copy of it
        chunks = _body_json.AsyncChunks if is_async else _body_json.SyncChunks
        content: Any = chunks(pieces)
        headers["Content-Length"] = str(pieces.length)
    else:
        content = pieces.joined()
    args = {"url": chat_url(http), "content": content, **extra}
    if headers:
        args["headers"] = headers
    return args


_JSON_TYPE = {"Content-Type": "application/json"}
_CHAT_URLS: weakref.WeakKeyDictionary[Any, tuple[Any, Any]] = weakref.WeakKeyDictionary()


def chat_url(http: Any) -> Any:
    """``/api/chat`` merged into ``http``'s base URL, as httpx's ``_merge_url`` merges a path
    (the base URL ends with "/"), once per base URL: ``base_url`` can be set on a client."""
    base = http.base_url
    cached = _CHAT_URLS.get(http)
    if cached is None or cached[0] is not base:
        cached = (base, base.copy_with(raw_path=base.raw_path + CHAT_PATH.lstrip("/").encode()))
        _CHAT_URLS[http] = cached
    return cached[1]


def stream_chunks(
    client: Any, sdk: Any, body: dict[str, Any], extra: dict[str, Any] | None = None
) -> Generator[dict[str, Any], None, None]:
    http = client._client
    with http.stream("POST", **send_args(http, body, extra or {})) as response:
        if not response.is_success:
            response.read()
            _raise_for_status(response, sdk)
        lines = LineSplitter()
        for data in response.iter_bytes():
            for line in lines.feed(data):
                yield _parse_line(line, sdk)
        for line in lines.flush():
            yield _parse_line(line, sdk)


async def stream_chunks_async(
    client: Any, sdk: Any, body: dict[str, Any], extra: dict[str, Any] | None = None
) -> AsyncGenerator[dict[str, Any], None]:
    http = client._client
    async with http.stream("POST", **send_args(http, body, extra or {}, True)) as response:
        if not response.is_success:
            await response.aread()
            _raise_for_status(response, sdk)
        lines = LineSplitter()
        async for data in response.aiter_bytes():
            for line in lines.feed(data):
                yield _parse_line(line, sdk)
        for line in lines.flush():
            yield _parse_line(line, sdk)


# --- the documented call -------------------------------------------------------------------


def _plain(response: Any) -> dict[str, Any]:
    """A ``ChatResponse`` as the plain JSON the readers take (the fields it holds)."""
    dumped: dict[str, Any] = response.model_dump(exclude_none=True)
    return dumped


def _unreadable(exc: Exception) -> Exception:
    """What an answer chat()'s models cannot hold is: malformed (not retried), as the fast
    path reports a body that is not a chat response."""
    return malformed_response("ollama", f"not a chat response: {excerpt(str(exc))}")


# chat() builds its answer as ChatResponse(**json): a body that is not an object fails
# with a TypeError, one without a valid message with pydantic's ValidationError (a
# ValueError).
_UNREADABLE = (TypeError, ValueError)


def documented_chat(client: Any, body: dict[str, Any]) -> Any:
    """``client.chat(**body)`` (``body``'s fields are chat()'s parameters), answered as
    plain JSON."""
    try:
        return _plain(client.chat(**body))
    except json.JSONDecodeError:
        raise  # the interface maps it, as the fast path's
    except _UNREADABLE as exc:
        raise _unreadable(exc) from exc


async def documented_chat_async(client: Any, body: dict[str, Any]) -> Any:
    try:
        return _plain(await client.chat(**body))
    except json.JSONDecodeError:
        raise
    except _UNREADABLE as exc:
        raise _unreadable(exc) from exc


def documented_stream(client: Any, body: dict[str, Any]) -> Generator[dict[str, Any], None, None]:
    """``client.chat(**body, stream=True)``'s chunks as plain JSON; the request goes out on
    the first ``next()``, as :func:`stream_chunks`' does."""
    try:
        for chunk in client.chat(**body):
            yield _plain(chunk)
    except json.JSONDecodeError:
        raise
    except _UNREADABLE as exc:
        raise _unreadable(exc) from exc


async def documented_stream_async(
    client: Any, body: dict[str, Any]
) -> AsyncGenerator[dict[str, Any], None]:
    try:
        async for chunk in await client.chat(**body):
            yield _plain(chunk)
    except json.JSONDecodeError:
        raise
    except _UNREADABLE as exc:
        raise _unreadable(exc) from exc
