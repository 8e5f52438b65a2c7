"""Ollama's native chat API (``POST /api/chat``) through the official ``ollama`` SDK.

The SDK's ``Client`` / ``AsyncClient`` carry every request: host parsing (``base_url`` is
its ``host``; ``OLLAMA_HOST`` when None), headers (``OLLAMA_API_KEY`` as a Bearer token),
timeouts, HTTP errors as ``ollama.ResponseError``. The body is built by this wire
(``map.py``) and sent on the client's own httpx client (the fast path, ``fastpath.py``)
rather than through ``chat()``, because ``chat()`` validates it through pydantic models
that silently drop what Zerda must keep: tool schemas lose nested ``properties``,
``anyOf``, ``minimum``, ``additionalProperties``; tool-call ``id``s are removed from
responses and ``tool_call_id`` from requests. ``**native`` is limited to chat()'s own parameters. Responses are read as
plain dicts. With ``fast_path=False`` (or an SDK lacking a name the fast path uses),
``chat()`` carries the call, with those losses (``fastpath.py`` lists them).

Ollama cannot enforce ``tool_choice`` (the server has no such field): ``"none"`` sends no
tools, a named tool sends only that tool, ``"auto"``/``"required"`` send all of them. The
SDK has no retry, so :meth:`OllamaInterface._retrying` implements DESIGN.md §5's.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import AsyncGenerator, AsyncIterator, Generator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from zerda.llm import _lazy
from zerda.llm._fastpath import PrivateName
from zerda.llm._retry import retry_after_from_headers
from zerda.llm._signatures import signature_options
from zerda.llm._timeout import split_timeout
from zerda.llm.base import BaseLLMInterface
from zerda.llm.errors import (
    ConnectionError,
    InvalidRequestError,
    ServerError,
    TimeoutError,
    ZerdaError,
    error_from_status,
    malformed_response,
)
from zerda.llm.wires.ollama import fastpath as _fastpath

if TYPE_CHECKING:
    from zerda.llm import tools
    from zerda.llm._request import Request
    from zerda.llm._stream import StreamAccumulator
    from zerda.llm._structured import OutputSpec
    from zerda.llm.wires.ollama import map as _map

# The request and response mapping (map.py) loads with the first call: building an
# interface and its client needs none of it (docs/decisions.md, "Building an interface
# loads only what building needs"). Its names, which tests read here (the module they
# were written against), load on first access.
_MAP = "zerda.llm.wires.ollama.map"
_MAPPED = (
    "_map_messages",
    "_map_options",
    "_map_stop_reason",
    "_map_tool_choice",
    "_map_tools",
    "_map_usage",
    "_merge_native",
)
__getattr__ = _lazy.attributes(__name__, dict.fromkeys(_MAPPED, _MAP))
if not TYPE_CHECKING:  # the modules this one calls into, bound on first use (_lazy.module)
    _map = _lazy.module(_MAP, __name__, "_map")
    tools = _lazy.module("zerda.llm.tools", __name__, "tools")

Event = dict[str, Any]
T = TypeVar("T")

CHAT_PATH = _fastpath.CHAT_PATH


# --- retries ---------------------------------------------------------------------------


def _response_headers(exc: BaseException) -> Any:
    """The HTTP headers behind an error: ``ollama.ResponseError`` keeps none itself, but
    the SDK raises it while handling httpx's HTTPStatusError, which stays its __context__."""
    for candidate in (exc, exc.__cause__, exc.__context__):
        response = getattr(candidate, "response", None)
        headers = getattr(response, "headers", None)
        if headers is not None:
            return headers
    return None


def _retry_after(exc: BaseException) -> float | None:
    return retry_after_from_headers(_response_headers(exc))


# --- the interface ---------------------------------------------------------------------


class OllamaInterface(BaseLLMInterface):
    """generate / stream on Ollama's native ``/api/chat`` (local or hosted).

    ``base_url`` is the SDK's ``host`` (``OLLAMA_HOST`` when None); ``api_key`` (hosted
    Ollama) is sent as ``Authorization: Bearer``; with none, the SDK sends
    ``OLLAMA_API_KEY`` if set. Other keyword options go to ``ollama.Client`` (httpx
    options such as ``headers`` or ``verify``). ``async_client=`` passes a ready
    ``ollama.AsyncClient``.
    """

    provider = "ollama"
    # https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion
    stream_final_event = 'the "done": true chunk'
    # The fast path's private SDK names (DESIGN §22), checked once by the shared base.
    fast_path_wire: ClassVar[str] = "ollama"
    fast_path_names: ClassVar[tuple[PrivateName, ...]] = _fastpath.PRIVATE_NAMES

    def __init__(
        self, model: str | None = None, *, async_client: Any = None, **kwargs: Any
    ) -> None:
        super().__init__(model, **kwargs)
        if async_client is not None:
            self._async_client = async_client
            self._client_given = True

    # --- clients ---

    def _option_names(self) -> tuple[str, frozenset[str] | None]:
        """Other options go to ``ollama.Client()``, which passes what it does not take
        itself on to ``httpx.Client()``; host and timeout are Zerda's base_url and timeout."""
        import httpx

        sdk: Any = self.sdk
        # Client(host, **kwargs) forwards its kwargs (follow_redirects, headers...) to httpx.
        accepted = signature_options(
            sdk.Client.__init__,
            {"client", "host", "timeout", "base_url"},
            var_keyword_to=httpx.Client.__init__,
        )
        return "ollama.Client() (httpx.Client options)", accepted

    def _native_names(self) -> frozenset[str]:
        """The body fields ``**native`` may set: the parameters of the SDK's ``chat()``
        (Ollama's /api/chat fields, https://docs.ollama.com/api/chat), not the ones Zerda
        fills. The server ignores unknown fields: refused here, never silently dropped."""
        sdk: Any = self.sdk
        names = signature_options(sdk.Client.chat, {"model", "messages", "stream"})
        return names or frozenset()

    def _client_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {**self.options, "host": self.base_url, "timeout": self.timeout}
        if self.api_key:
            kwargs["headers"] = {
                **kwargs.get("headers", {}),
                "Authorization": f"Bearer {self.api_key}",
            }
        return kwargs

    def _make_client(self) -> Any:
        sdk: Any = self.sdk
        return sdk.Client(**self._client_kwargs())

    def _make_async_client(self) -> Any:
        sdk: Any = self.sdk
        return sdk.AsyncClient(**self._client_kwargs())

    # --- request ---

    def _build_request(self, req: Request) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": _map._map_messages(req.system, req.messages),
        }
        mapped = _map._map_tool_choice(req.tool_choice, _map._map_tools(req.tools))
        # A provider-shaped tool (hosted.native) goes in unchanged; Ollama runs no hosted
        # tool of its own, so the core refused every other hosted type (DESIGN §18).
        mapped = [*(mapped or ()), *(dict(t["tool"]) for t in req.hosted)]
        if mapped:
            body["tools"] = mapped
        options = _map._map_options(req)
        if options:
            body["options"] = options
        body.update(self._native_output(req))
        body.update(_map._map_reasoning(req.reasoning))
        if req.native:
            self._check_native(req.native)
            body = _map._merge_native(body, req.native)
        if req.timeout is not None:  # taken out by _call: httpx's per-request timeout
            body["timeout"] = req.timeout
        return body

    def _check_native(self, native: dict[str, Any]) -> None:
        accepted = self._native_names()
        unknown = sorted(set(native) - accepted)
        if unknown:
            raise InvalidRequestError(
                f"ollama's chat takes no argument {', '.join(map(repr, unknown))} "
                f"(extra keyword arguments become /api/chat body fields: {', '.join(sorted(accepted))})",
                capability=True,  # another row may take it: a fallback moves on
            )

    def _map_response_format(self, output: OutputSpec) -> dict[str, Any]:
        """``format``: the caller's JSON Schema, or "json"
        (https://github.com/ollama/ollama/blob/main/docs/api.md#request-structured-outputs)."""
        return {"format": output.schema if output.schema is not None else "json"}

    # --- retries (the SDK has none; base.py runs the loop) ---

    def _retry_after(self, exc: BaseException) -> float | None:
        return _retry_after(exc)

    # --- calls ---

    # The body goes out on the SDK client's httpx client (wires/ollama/fastpath.py): the
    # answer as the server sent it (chat()'s models drop call ids); with the fast path off
    # (fast_path=False, or an SDK lacking one of its names), through Client.chat().

    def _call(self, kwargs: dict[str, Any]) -> Any:
        body, extra = _split_body(kwargs, stream=False)
        client = self.client
        if not self._fast:
            return self._retrying(lambda: _fastpath.documented_chat(client, body))
        return self._retrying(lambda: _fastpath.post(client, body, extra))

    async def _call_async(self, kwargs: dict[str, Any]) -> Any:
        body, extra = _split_body(kwargs, stream=False)
        client = self.async_client
        if not self._fast:
            return await self._retrying_async(lambda: _fastpath.documented_chat_async(client, body))
        return await self._retrying_async(lambda: _fastpath.post_async(client, body, extra))

    def _chunks(self, body: dict[str, Any], extra: dict[str, Any]) -> Any:
        if not self._fast:
            return _fastpath.documented_stream(self.client, body)
        return _fastpath.stream_chunks(self.client, self.sdk, body, extra)

    def _chunks_async(self, body: dict[str, Any], extra: dict[str, Any]) -> Any:
        if not self._fast:
            return _fastpath.documented_stream_async(self.async_client, body)
        return _fastpath.stream_chunks_async(self.async_client, self.sdk, body, extra)

    @contextmanager
    def _open_stream(self, kwargs: dict[str, Any]) -> Iterator[Iterator[dict[str, Any]]]:
        body, extra = _split_body(kwargs, stream=True)

        def start() -> tuple[Generator[dict[str, Any], None, None], Any]:
            # The request is sent on the first next(): retried until a chunk arrives.
            chunks = self._chunks(body, extra)
            return chunks, next(chunks, None)

        chunks, first = self._retrying(start)
        try:
            yield _until_done(first, chunks)
        finally:
            chunks.close()  # leaves the generator's `with client.stream(...)`: closes it

    @asynccontextmanager
    async def _open_stream_async(
        self, kwargs: dict[str, Any]
    ) -> AsyncIterator[AsyncIterator[dict[str, Any]]]:
        body, extra = _split_body(kwargs, stream=True)

        async def start() -> tuple[AsyncGenerator[dict[str, Any], None], Any]:
            chunks = self._chunks_async(body, extra)
            return chunks, await anext(chunks, None)

        chunks, first = await self._retrying_async(start)
        try:
            yield _until_done_async(first, chunks)
        finally:
            await chunks.aclose()

    # --- response ---

    def _map_response(self, raw: Any) -> dict[str, Any]:
        _get = tools._get
        error = _map._body_error(raw)
        if error is not None:
            raise error
        message = _get(raw, "message") or {}
        content = _get(message, "content") or None  # message.thinking is reasoning, not content
        calls = tools.parse_ollama_tool_calls(message)
        thinking = _get(message, "thinking")
        return self._make_result(
            content,
            calls,
            _get(raw, "done_reason"),
            _map._map_usage(raw),
            None,
            thinking if isinstance(thinking, str) else None,
        )

    def _map_stop_reason(self, native: Any) -> str:
        return _map._map_stop_reason(native)

    def _feed(self, acc: StreamAccumulator, chunk: Any) -> list[Event]:
        feed = self.__dict__.get("_feed_chunk")
        if feed is None:  # the first chunk of the first stream: map.py's, kept
            from zerda.llm.wires.ollama import map

            feed = self.__dict__["_feed_chunk"] = map.feed
        result: list[Event] = feed(acc, chunk)
        return result

    # --- errors ---

    def _map_error(self, exc: BaseException) -> ZerdaError | None:
        import httpx

        sdk: Any = self.sdk
        if isinstance(exc, sdk.ResponseError):
            return _response_error(exc, self.provider)
        if isinstance(exc, httpx.TimeoutException):
            return TimeoutError(f"request timed out: {exc}", provider=self.provider)
        if isinstance(exc, (builtins.ConnectionError, httpx.TransportError)):
            return ConnectionError(
                f"connection failed: {type(exc).__name__}: {exc}", provider=self.provider
            )
        if isinstance(exc, json.JSONDecodeError):
            return malformed_response(self.provider, f"not valid JSON: {exc}")
        return None


def _response_error(exc: Any, provider: str) -> ZerdaError:
    """``ollama.ResponseError``: an HTTP status, or -1 for an ``{"error"}`` line inside a
    stream (the server failed after accepting the call)."""
    message = str(exc.error) or f"HTTP {exc.status_code}"
    if exc.status_code is None or exc.status_code < 0:
        return ServerError(message, provider=provider, retryable=False)
    return error_from_status(exc.status_code, message, provider)


def _split_body(kwargs: dict[str, Any], stream: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the JSON body, the httpx request options): a per-call timeout is httpx's."""
    body, timeout = split_timeout(kwargs)
    return {**body, "stream": stream}, ({} if timeout is None else {"timeout": timeout})


def _until_done(first: Any, chunks: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The first chunk (None: the stream was empty), then the rest; the base class reports
    a stream that ended before its done chunk."""
    if first is not None:
        yield first
    yield from chunks


async def _until_done_async(
    first: Any, chunks: AsyncIterator[dict[str, Any]]
) -> AsyncIterator[dict[str, Any]]:
    if first is not None:
        yield first
    async for chunk in chunks:
        yield chunk
