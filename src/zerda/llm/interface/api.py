"""BaseLLMInterface: the public API every interface shares, and the hooks a wire writes.

A wire's interface is a registry row (``zerda.llm.registry``) plus small hooks, each one
idea. The hooks every wire must write are abstract here, so a class missing one cannot be
instantiated: ``_make_client``/``_make_async_client``, ``_build_request`` (unified
:class:`~zerda.llm._request.Request` -> the SDK call's keyword arguments),
``_call``/``_call_async`` (the only sync/async difference), ``_map_response``,
``_map_stop_reason`` and, for streaming, ``_open_stream``/``_open_stream_async`` and
``_feed``. Optional hooks have defaults, in the module of their concern: ``_map_error``
(failures), ``_retry_delay`` (retrying), ``_option_names`` (arguments),
``_close_client``/``_aclose_client`` (clients), ``_batch_protocol`` (batch).

Each concern is a mixin in its own module of :mod:`zerda.llm.interface`; each sync method
and its async twin share one body (:mod:`zerda.llm.interface.calls`, :mod:`zerda.llm._drive`).
"""

from __future__ import annotations

import abc
import threading
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from zerda.llm import _lazy, _ratelimit, registry
from zerda.llm._calls import TypedCalls
from zerda.llm._drive import drive, drive_async
from zerda.llm._fastpath import PrivateName
from zerda.llm._ratelimit import RateLimiter
from zerda.llm._runs import ToolLoop
from zerda.llm.interface import arguments
from zerda.llm.interface.arguments import Options, Secret
from zerda.llm.interface.batch import Batches
from zerda.llm.interface.calls import Calls, Streaming
from zerda.llm.interface.clients import Clients, new_loop_clients, require_sdk
from zerda.llm.interface.counting import Counting
from zerda.llm.interface.failures import Failures
from zerda.llm.interface.limits import Limits
from zerda.llm.interface.pickling import Pickling
from zerda.llm.interface.request import Requests
from zerda.llm.interface.results import Results
from zerda.llm.interface.retrying import Retrying

if TYPE_CHECKING:
    from zerda.llm import _names
    from zerda.llm._request import Request
    from zerda.llm._stream import StreamAccumulator
    from zerda.llm.batch import AsyncBatchJob, BatchJob
else:
    _names = _lazy.module("zerda.llm._names", __name__, "_names")  # by the request checks

Self = TypeVar("Self", bound="BaseLLMInterface")


class BaseLLMInterface(
    Calls,
    Clients,
    Retrying,
    Failures,
    Options,
    Requests,
    Results,
    Limits,
    Pickling,
    Batches,
    Counting,
    TypedCalls,
    ToolLoop,
    abc.ABC,
):
    """The shared generate / stream / run machinery. See the module docstring.

    Every interface is closable: ``close()`` / ``aclose()``, or ``with`` / ``async with``,
    close the SDK clients it built (never a ``client=`` passed in). An async client is built
    per event loop and closed when that loop shuts down, so one interface can serve many
    ``asyncio.run`` calls.
    """

    # The registry row an instance uses unless ``provider=`` names another one (an
    # OpenAI-compatible service is a row whose class is an existing interface). A class
    # outside the registry (a third-party provider, a test double) sets ``spec`` itself.
    provider: str = ""
    spec: registry.ProviderSpec
    # The wire's table of the private SDK names its fast path uses (``wires/<wire>/fastpath.py``)
    # and the name the DEBUG log gives the wire: ``self._fast`` is decided from them once, on
    # first use, and again where a pickle is loaded (DESIGN §22). No table: nothing to check.
    fast_path_wire: ClassVar[str] = ""
    fast_path_names: ClassVar[tuple[PrivateName, ...]] = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        # Python's own message for this ("Can't instantiate abstract class X with abstract
        # methods ...") does not say what the methods are for.
        missing = sorted(getattr(cls, "__abstractmethods__", ()))
        if missing:
            raise TypeError(
                f"{cls.__name__} cannot be instantiated: it does not implement the provider "
                f"hook(s) {', '.join(missing)} (abstract in BaseLLMInterface; see "
                "docs/adding-a-provider.md)"
            )
        return super().__new__(cls)

    def __init__(
        self,
        model: str | None = None,
        *,
        provider: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float | None = None,
        max_retries: int = 2,
        client: Any = None,
        raise_errors: bool = False,
        rate_limit: Mapping[str, float] | RateLimiter | None = None,
        fast_path: bool | None = None,
        **options: Any,
    ) -> None:
        owner = type(self).__name__
        self.spec = arguments.row_of(type(self), provider)
        self.provider = self.spec.name
        base_url = arguments.with_defaults(self.spec, base_url, options)
        arguments._check_arguments(
            owner, model, api_key, base_url, timeout, max_retries, raise_errors
        )
        self.model = model
        if not self.model:
            raise ValueError(f"{owner} needs a model")
        spec = self.spec
        self.sdk = (
            require_sdk(spec.sdk_module, spec.extra, spec.sdk_package) if spec.sdk_module else None
        )
        key = api_key if api_key is not None else self._key_from_env()
        self._api_key = Secret(key) if key else None
        self._key_from_environment = api_key is None  # then a pickle never carries it
        self._client_given = client is not None  # a live object: such an interface stays here
        self.base_url = base_url
        self.timeout = None if timeout is None else float(timeout)
        self.max_retries = max_retries
        self.raise_errors = raise_errors
        # False: every request goes through the SDK's documented call (DESIGN §22), never
        # the wire's fast path; None: ZERDA_FAST_PATH decides ("0" turns them all off).
        self.fast_path = arguments._fast_path_setting(owner, fast_path)
        self._set_limits(rate_limit)
        self.options = options
        self._check_options()
        self._set_clients(client)

    def _set_limits(self, rate_limit: Mapping[str, float] | RateLimiter | None) -> None:
        _ratelimit.check_setting(rate_limit)
        self.rate_limit = rate_limit
        self._rate_limiter = None

    def _set_clients(self, client: Any) -> None:
        """No client built yet; a ``client=`` given is used as it is (and never closed)."""
        self._client = client
        self._owns_client = False  # True once Zerda built the sync client itself
        self._async_client = None
        self._owns_async = False
        self._loop_clients = new_loop_clients()  # the async client of each event loop
        self._closed = False
        self._lock = threading.RLock()  # an async client may be built from the sync one

    # --- the row's data -------------------------------------------------------------------

    @property
    def env_keys(self) -> tuple[str, ...]:
        """Where the API key comes from, in order."""
        return self.spec.env_keys

    @property
    def traits(self) -> registry.Traits:
        return self.spec.traits

    @property
    def api_key(self) -> str | None:
        return self._api_key.reveal() if self._api_key else None

    def __repr__(self) -> str:
        key = "'***'" if self._api_key else "None"
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r}, api_key={key})"

    __str__ = __repr__

    # --- public API ---------------------------------------------------------------------

    def _events(
        self, messages: Any, raise_errors: bool | None, kwargs: dict[str, Any]
    ) -> Iterator[dict[str, Any]]:
        call = Streaming(self, messages, raise_errors, kwargs)
        try:
            native = call.start(messages, kwargs)
            reserved = self._admit(native, call.req)
            with self._open_stream(native) as chunks:
                for chunk in chunks:
                    if call.chunks is not None:
                        call.chunks.append(self._raw_json(chunk))
                    for event in self._feed(call.acc, chunk):
                        yield _names.restore_event(event, call.names)
            yield from call.finish(reserved)
        except BaseException as exc:
            call.fail(exc)  # raises again what is no failure
        yield from call.done()

    async def _events_async(
        self, messages: Any, raise_errors: bool | None, kwargs: dict[str, Any]
    ) -> AsyncIterator[dict[str, Any]]:
        call = Streaming(self, messages, raise_errors, kwargs)
        try:
            native = call.start(messages, kwargs)
            reserved = await self._admit_async(native, call.req)
            async with self._open_stream_async(native) as chunks:
                async for chunk in chunks:
                    if call.chunks is not None:
                        call.chunks.append(self._raw_json(chunk))
                    for event in self._feed(call.acc, chunk):
                        yield _names.restore_event(event, call.names)
            for event in call.finish(reserved):
                yield event
        except BaseException as exc:
            call.fail(exc)
        for event in call.done():
            yield event

    def batch(self, requests: Sequence[dict[str, Any]], **options: Any) -> BatchJob:
        """Sends ``requests`` (dicts of generate arguments, each with an ``"id"``) as one job
        of the provider's batch API; see :mod:`zerda.llm.batch`. ``options`` go to the
        provider's job creation (``metadata``...)."""
        from zerda.llm.batch import BatchJob

        return BatchJob(self, *drive(self._batching(requests, options)))

    async def batch_async(
        self, requests: Sequence[dict[str, Any]], **options: Any
    ) -> AsyncBatchJob:
        from zerda.llm.batch import AsyncBatchJob

        return AsyncBatchJob(self, *await drive_async(self._batching(requests, options)))

    # run / run_async (the tool loop, DESIGN.md §8): ToolLoop, shared with FallbackInterface.

    def close(self) -> None:
        """Closes the SDK clients this interface built (a ``client=`` passed in is the
        caller's to close) and anything else it owns. Idempotent; calls after it raise.

        The async client of an event loop still running is closed when that loop shuts
        down (calls in flight there finish first); ``await aclose()`` closes the running
        loop's at once."""
        self._close_owned()

    async def aclose(self) -> None:
        """As :meth:`close`, and the async client of the running loop is closed now."""
        await self._aclose_owned()

    def __enter__(self: Self) -> Self:
        self._check_open()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self: Self) -> Self:
        self._check_open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # --- the hooks every wire writes ----------------------------------------------------

    @abc.abstractmethod
    def _make_client(self) -> Any:
        """The sync SDK client, from the interface's options."""

    @abc.abstractmethod
    def _make_async_client(self) -> Any:
        """An async SDK client (one per event loop; see ``async_client``)."""

    @abc.abstractmethod
    def _build_request(self, req: Request) -> dict[str, Any]:
        """The SDK call's keyword arguments. ``req.timeout`` travels among them under the
        name the SDK call takes (``timeout``, ``timeout_ms``, ``config.http_options``)."""

    @abc.abstractmethod
    def _call(self, kwargs: dict[str, Any]) -> Any:
        """The sync SDK call."""

    @abc.abstractmethod
    async def _call_async(self, kwargs: dict[str, Any]) -> Any:
        """The async SDK call."""

    @abc.abstractmethod
    def _map_response(self, raw: Any) -> dict[str, Any]:
        """The SDK's response as Zerda's result (through ``_make_result``)."""

    @abc.abstractmethod
    def _map_stop_reason(self, native: Any) -> str:
        """The provider's stop reason as Zerda's."""

    @abc.abstractmethod
    def _open_stream(self, kwargs: dict[str, Any]) -> Any:
        """A context manager yielding an iterator of native chunks; closes the response."""

    @abc.abstractmethod
    def _open_stream_async(self, kwargs: dict[str, Any]) -> Any:
        """An async context manager yielding an async iterator of native chunks."""

    @abc.abstractmethod
    def _feed(self, acc: StreamAccumulator, chunk: Any) -> list[dict[str, Any]]:
        """Native chunk -> Zerda events, recording into ``acc``."""
