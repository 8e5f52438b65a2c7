"""BaseLLMInterface: everything the providers share.

A provider subclass is a registry row (``zerda.llm.registry``) plus small hooks, each one
idea. The hooks every provider must write are abstract, so a class missing one cannot be
instantiated: ``_make_client``/``_make_async_client``, ``_build_request`` (unified
:class:`Request` -> the SDK call's keyword arguments), ``_call``/``_call_async`` (the only
sync/async difference), ``_map_response``, ``_map_stop_reason`` and, for streaming,
``_open_stream``/``_open_stream_async`` and ``_feed``. Optional hooks have defaults:
``_map_error``, ``_retry_delay``, ``_option_names`` (what ``**options`` may hold),
``_close_client``/``_aclose_client``.

Checking constructor arguments and options, normalising the request (``_request.py``),
catching failures into the error shape, closing the clients Zerda built and keeping the API
key out of sight happen here, once.
"""

from __future__ import annotations

import abc
import importlib
import inspect
import logging
import os
import re
import sys
import threading
import time
import weakref
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Sequence,
)
from dataclasses import replace
from types import ModuleType, TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from zerda.llm import _structured, _telemetry, registry
from zerda.llm._ids import ID_RULES
from zerda.llm._request import (
    TOOL_CHOICES,
    Request,
    check_tool_choice,
    check_tool_names,
    normalize_tool_choice,
    normalize_tools,
    prepare,
    timeout_problem,
)
from zerda.llm._stream import StreamAccumulator
from zerda.llm._structured import OutputSpec

if TYPE_CHECKING:
    import asyncio
from zerda.llm.errors import (
    AuthenticationError,
    InvalidRequestError,
    OutputValidationError,
    UnknownError,
    ZerdaError,
    error_result,
)
from zerda.llm.reasoning import Plan, check_reasoning, plan_reasoning
from zerda.llm.tools import ToolCall, tool_calls_to_dicts

# Kept importable from here for callers of the first round.
__all__ = [
    "TOOL_CHOICES",
    "BaseLLMInterface",
    "Request",
    "Secret",
    "normalize_tool_choice",
    "normalize_tools",
    "require_sdk",
    "signature_options",
]

logger = logging.getLogger("zerda")
T = TypeVar("T")
Self = TypeVar("Self", bound="BaseLLMInterface")


def _running_loop() -> asyncio.AbstractEventLoop | None:
    # asyncio costs ~15% of a cold start: without it imported, no event loop can be running.
    aio = sys.modules.get("asyncio")
    if aio is None:
        return None
    try:
        return aio.get_running_loop()  # type: ignore[no-any-return]
    except RuntimeError:
        return None


class Secret:
    """Holds an API key so that no repr, str or log of the interface can show it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "'***'"

    __str__ = __repr__


def require_sdk(module: str, extra: str, package: str) -> ModuleType:
    """Imports a provider SDK, or fails with the command that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f'this provider needs the {package!r} package: pip install "zerda-llm[{extra}]"'
        ) from exc


# --- constructor arguments ---------------------------------------------------------------


def signature_options(
    fn: Callable[..., Any],
    exclude: Iterable[str] = (),
    var_keyword_to: Callable[..., Any] | None = None,
) -> frozenset[str] | None:
    """The keyword names ``fn`` takes, minus ``exclude``: the ONE way every provider lists
    the options its SDK client accepts. When ``fn`` also takes ``**kwargs`` it passes them
    on to ``var_keyword_to`` (ollama's Client to httpx.Client), whose names are added;
    with no such target any name may be valid, and None says none can be refused."""
    params = inspect.signature(fn).parameters.values()
    named = {
        p.name
        for p in params
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    }
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        onward = signature_options(var_keyword_to) if var_keyword_to is not None else None
        if onward is None:
            return None
        named |= onward
    return frozenset(named - {"self", *exclude})


def _own_parameters(cls: type) -> list[str]:
    """The named keyword parameters of ``cls``'s constructors, base first (for messages)."""
    names: list[str] = []
    for klass in reversed(cls.__mro__):
        init = klass.__dict__.get("__init__")
        if init is None or klass is object:
            continue
        for p in inspect.signature(init).parameters.values():
            named = p.kind is inspect.Parameter.KEYWORD_ONLY or (
                p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD and p.name != "self"
            )
            if named and p.name not in names:
                names.append(p.name)
    return names


def _type_name(value: Any) -> str:
    return type(value).__name__


def _check_arguments(
    owner: str,
    model: Any,
    api_key: Any,
    base_url: Any,
    timeout: Any,
    max_retries: Any,
    raise_errors: Any,
) -> None:
    """Programming errors in the common arguments fail at construction, not at the first
    call. An api_key's value is never shown, only its type."""
    if model is not None and not isinstance(model, str):
        raise TypeError(f"{owner}: model must be a string, not {_type_name(model)}")
    if api_key is not None and not isinstance(api_key, str):
        raise TypeError(f"{owner}: api_key must be a string, not {_type_name(api_key)}")
    if base_url is not None and not isinstance(base_url, str):
        raise TypeError(f"{owner}: base_url must be a string, not {_type_name(base_url)}")
    problem = timeout_problem(timeout)
    if problem:
        wrong_type = isinstance(timeout, bool) or not isinstance(timeout, (int, float))
        raise (TypeError if wrong_type else ValueError)(f"{owner}: timeout {problem}")
    if isinstance(max_retries, bool) or not isinstance(max_retries, int):
        raise TypeError(
            f"{owner}: max_retries must be an int, not {_type_name(max_retries)} ({max_retries!r})"
        )
    if max_retries < 0:
        raise ValueError(f"{owner}: max_retries must be 0 or more, not {max_retries}")
    if not isinstance(raise_errors, bool):
        raise TypeError(f"{owner}: raise_errors must be True or False, not {raise_errors!r}")


# --- async clients and their event loop --------------------------------------------------


class _LoopCloser:
    """Closes an async SDK client when the event loop it is bound to shuts down.

    An httpx-based async client keeps connections that belong to one event loop; once that
    loop is closed they can no longer be closed (the SDKs' finalizers then print "Event loop
    is closed" tracebacks). ``asyncio.run`` (and every runner) calls
    ``loop.shutdown_asyncgens()`` before closing its loop, which finishes every async
    generator started on it: the one started here closes the client at that moment, on its
    own loop. https://docs.python.org/3/library/asyncio-eventloop.html#asyncio.loop.shutdown_asyncgens
    """

    def __init__(self, close: Callable[[], Awaitable[None]]) -> None:
        self.done = False
        self._close: Callable[[], Awaitable[None]] | None = close
        self._gen = self._wait()
        # Must run on the loop: the first step registers the generator with it (the loop's
        # firstiter hook) and stops at its yield, without awaiting anything.
        _step(self._gen.__anext__())

    async def _wait(self) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            close, self._close = self._close, None
            if close is not None and not self.done:
                self.done = True
                await close()

    def forget(self) -> None:
        """The client was closed another way (or cannot be): finish without closing it."""
        self.done = True
        self._close = None
        _step(self._gen.aclose())


def _step(awaitable: Any) -> None:
    """Runs a generator step that awaits nothing, to its end."""
    try:
        awaitable.send(None)
    except (StopIteration, StopAsyncIteration, RuntimeError):
        pass


def _loop_closed(loop: asyncio.AbstractEventLoop | None) -> bool:
    return loop is None or loop.is_closed()


class BaseLLMInterface(abc.ABC):
    """The shared generate / stream / run machinery. See the module docstring.

    Every interface is closable: ``close()`` / ``aclose()``, or ``with`` / ``async with``,
    close the SDK clients it built (never a ``client=`` passed in). An async client is built
    per event loop and closed when that loop shuts down (see :class:`_LoopCloser`), so one
    interface can serve many ``asyncio.run`` calls.
    """

    # The registry row an instance uses unless ``provider=`` names another one (an
    # OpenAI-compatible service is a row whose class is an existing interface). A class
    # outside the registry (a third-party provider, a test double) sets ``spec`` itself.
    provider: str = ""
    spec: registry.ProviderSpec

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
        **options: Any,
    ) -> None:
        own = getattr(type(self), "spec", None)
        self.spec = (
            own
            if own is not None and provider is None
            else registry.get(provider or type(self).provider)
        )
        self.provider = self.spec.name
        for option, value in self.spec.defaults.items():
            if option == "base_url":
                base_url = base_url if base_url is not None else value
            else:
                options.setdefault(option, value)
        _check_arguments(
            type(self).__name__, model, api_key, base_url, timeout, max_retries, raise_errors
        )
        self.model = model
        if not self.model:
            raise ValueError(f"{type(self).__name__} needs a model")
        spec = self.spec
        self.sdk = (
            require_sdk(spec.sdk_module, spec.extra, spec.sdk_package) if spec.sdk_module else None
        )
        key = api_key if api_key is not None else self._key_from_env()
        self._api_key = Secret(key) if key else None
        self.base_url = base_url
        self.timeout = None if timeout is None else float(timeout)
        self.max_retries = max_retries
        self.raise_errors = raise_errors
        self.options = options
        self._check_options()
        self._client = client
        self._owns_client = False  # True once Zerda built the sync client itself
        self._async_client: Any = None
        self._owns_async = False
        self._async_loop: weakref.ReferenceType[asyncio.AbstractEventLoop] | None = None
        self._async_closer: _LoopCloser | None = None
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

    def _key_from_env(self) -> str | None:
        return next((os.environ[k] for k in self.env_keys if os.environ.get(k)), None)

    @property
    def api_key(self) -> str | None:
        return self._api_key.reveal() if self._api_key else None

    def __repr__(self) -> str:
        key = "'***'" if self._api_key else "None"
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r}, api_key={key})"

    __str__ = __repr__

    # --- options --------------------------------------------------------------------------

    def _option_names(self) -> tuple[str, frozenset[str] | None]:
        """Where ``**options`` go and the names that place takes (from the SDK's signature,
        see :func:`signature_options`); None: any name (the SDK takes ``**kwargs``). The
        default: nowhere, so any option is refused."""
        return "", frozenset()

    def _check_options(self) -> None:
        """An option nothing takes fails here, naming the valid ones, not at the first call."""
        where, accepted = self._option_names()
        if accepted is None:
            return
        unknown = sorted(set(self.options) - accepted)
        if not unknown:
            return
        own = _own_parameters(type(self))
        onward = sorted(accepted - set(own))
        sdk = f"; options for {where}: {', '.join(onward)}" if where and onward else ""
        s = "s" if len(unknown) > 1 else ""
        raise TypeError(
            f"{type(self).__name__} got unknown option{s} {', '.join(map(repr, unknown))} "
            f"(valid: {', '.join(own)}{sdk})"
        )

    # --- clients, built once ------------------------------------------------------------

    @property
    def client(self) -> Any:
        if self._client is None:
            with self._lock:
                self._check_open()
                if self._client is None:
                    self._check_key()
                    self._client = self._make_client()
                    self._owns_client = True
        return self._client

    @property
    def async_client(self) -> Any:
        """The async SDK client, built once per event loop: an httpx-based async client is
        bound to the loop it first ran on, so one interface reused across ``asyncio.run``
        calls gets a fresh client on each new loop, and the one it replaces is closed with
        its loop (a client passed in is always kept, and never closed)."""
        loop = _running_loop()
        current = self._async_client
        if current is not None and (not self._owns_async or self._built_for(loop)):
            return current
        with self._lock:
            self._check_open()
            if self._async_client is not None and (not self._owns_async or self._built_for(loop)):
                return self._async_client
            self._check_key()
            self._retire_async_client()
            client = self._make_async_client()
            self._async_client, self._owns_async = client, True
            self._bind(client, loop)
        return client

    def _built_for(self, loop: asyncio.AbstractEventLoop | None) -> bool:
        """Whether the owned async client may serve ``loop``; one built outside any loop is
        adopted by the first loop that uses it."""
        if self._async_loop is None:
            if loop is not None:
                self._bind(self._async_client, loop)
            return True
        return self._async_loop() is loop

    def _bind(self, client: Any, loop: asyncio.AbstractEventLoop | None) -> None:
        self._async_loop = weakref.ref(loop) if loop is not None else None
        self._async_closer = (
            _LoopCloser(lambda: self._aclose_quietly(client)) if loop is not None else None
        )

    def _retire_async_client(self) -> None:
        """Lets go of the owned async client of another loop. A loop that is still open
        closes it when it shuts down (calls in flight there keep working); a closed one
        already did, when it shut down (``asyncio.run`` always does)."""
        loop = self._async_loop() if self._async_loop is not None else None
        closer = self._async_closer
        self._async_client, self._async_loop, self._async_closer = None, None, None
        if closer is not None and _loop_closed(loop):
            closer.forget()

    def _check_key(self) -> None:
        if self.env_keys and self._api_key is None:
            raise AuthenticationError(
                f"no API key for {self.provider}: set {' or '.join(self.env_keys)} or pass api_key=",
                provider=self.provider,
            )

    def _client_kwargs(self) -> dict[str, Any]:
        """Constructor arguments in the shape the Stainless SDKs (openai, groq, anthropic)
        take: Zerda's options, then any other option given to the interface
        (``default_headers``, ``http_client``...). Other SDKs override this."""
        kwargs: dict[str, Any] = {"api_key": self.api_key, "max_retries": self.max_retries}
        if self.base_url is not None:
            kwargs["base_url"] = self.base_url
        if self.timeout is not None:
            kwargs["timeout"] = self.timeout
        return {**kwargs, **self.options}

    @abc.abstractmethod
    def _make_client(self) -> Any:
        """The sync SDK client, from the interface's options."""

    @abc.abstractmethod
    def _make_async_client(self) -> Any:
        """An async SDK client (one per event loop; see ``async_client``)."""

    # --- lifecycle ----------------------------------------------------------------------

    def _close_client(self, client: Any) -> None:
        """Closes a sync SDK client: its ``close()``, else its context manager's exit."""
        close = getattr(client, "close", None)
        if callable(close):
            close()
        elif hasattr(client, "__exit__"):
            client.__exit__(None, None, None)

    async def _aclose_client(self, client: Any) -> None:
        """Closes an async SDK client: ``aclose()``, ``close()`` (awaited when it is a
        coroutine, as the Stainless and ollama clients' are) or ``__aexit__``."""
        close = getattr(client, "aclose", None) or getattr(client, "close", None)
        if callable(close):
            result = close()
            if inspect.isawaitable(result):
                await result
        elif hasattr(client, "__aexit__"):
            await client.__aexit__(None, None, None)

    async def _aclose_quietly(self, client: Any) -> None:
        # Runs while a loop shuts down, where a failure would only be printed: logged.
        try:
            await self._aclose_client(client)
        except Exception as exc:
            logger.debug("%s: closing an async client failed: %r", self.provider, exc)

    def _close_resources(self) -> None:  # noqa: B027 - an optional hook, empty by default
        """Anything else the interface owns (Bedrock: its thread pool). Sync, idempotent."""

    def _take_owned(self) -> tuple[Any, Any, asyncio.AbstractEventLoop | None, Any]:
        """Marks the interface closed and hands over what it owns, once."""
        with self._lock:
            if self._closed:
                return None, None, None, None
            self._closed = True
            sync = self._client if self._owns_client else None
            aclient = self._async_client if self._owns_async else None
            loop = self._async_loop() if self._async_loop is not None else None
            closer, self._async_closer = self._async_closer, None
            self._client = self._async_client = None
            self._owns_client = self._owns_async = False
        return sync, aclient, loop, closer

    def close(self) -> None:
        """Closes the SDK clients this interface built (a ``client=`` passed in is the
        caller's to close) and anything else it owns. Idempotent; calls after it raise.

        An async client still bound to a running event loop is closed when that loop shuts
        down; ``await aclose()`` closes it at once."""
        sync, aclient, loop, closer = self._take_owned()
        if sync is not None and sync is not aclient:
            self._close_client(sync)
        if aclient is not None and closer is None and _running_loop() is None:
            import asyncio

            asyncio.run(self._aclose_quietly(aclient))  # built outside any loop: no sockets yet
        elif closer is not None and _loop_closed(loop):
            closer.forget()  # its loop closed it when it shut down, or never can now
        self._close_resources()

    async def aclose(self) -> None:
        """As :meth:`close`, and the async client of the running loop is closed now."""
        sync, aclient, loop, closer = self._take_owned()
        if sync is not None and sync is not aclient:
            self._close_client(sync)
        if aclient is not None and (closer is None or loop is _running_loop()):
            if closer is not None:
                closer.forget()
            await self._aclose_quietly(aclient)
        elif closer is not None and _loop_closed(loop):
            closer.forget()  # its loop closed it when it shut down, or never can now
        self._close_resources()

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

    @property
    def is_closed(self) -> bool:
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(
                f"this {type(self).__name__} is closed: create a new interface to make calls"
            )

    # --- provider hooks -----------------------------------------------------------------

    def _tool_id(self, orig: str | None, index: int, j: int) -> str | None:
        """The id sent for a history tool call (and its result): the row's id rule."""
        return ID_RULES[self.traits.tool_id](orig, index, j)

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

    def _retry_delay(self, exc: BaseException, attempt: int) -> float | None:
        """Seconds to wait before Zerda's own retry number ``attempt`` (from 0) after
        ``exc``; None: do not retry. Only providers that retry in Zerda (see _retry.py)
        override it; the others configure their SDK's retry."""
        return None

    def _retrying(self, send: Callable[[], T]) -> T:
        """``send()``, retried per ``_retry_delay`` up to ``max_retries`` times."""
        attempt = 0
        while True:
            try:
                return send()
            except Exception as exc:
                delay = self._retry_delay(exc, attempt) if attempt < self.max_retries else None
                if delay is None:
                    raise
            time.sleep(delay)
            attempt += 1

    async def _retrying_async(self, send: Callable[[], Awaitable[T]]) -> T:
        """As :meth:`_retrying`; only the wait is awaited."""
        attempt = 0
        while True:
            try:
                return await send()
            except Exception as exc:
                delay = self._retry_delay(exc, attempt) if attempt < self.max_retries else None
                if delay is None:
                    raise
            import asyncio  # already loaded: this runs on an event loop

            await asyncio.sleep(delay)
            attempt += 1

    def _map_error(self, exc: BaseException) -> ZerdaError | None:
        """The SDK's exception as a ZerdaError; None when it is not the SDK's."""
        return None

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

    # --- shared machinery ---------------------------------------------------------------

    def _prepare(
        self,
        messages: Any,
        *,
        response_format: Any = None,
        structured_output: Any = None,
        reasoning: Any = None,
        **kwargs: Any,
    ) -> Request:
        """Checks everything that can be checked before a request is sent
        (:func:`zerda.llm._request.prepare`, against this interface's row), with the
        response_format and the mode it travels in (DESIGN.md §13), and ``reasoning=``
        against this model's family (DESIGN.md §11)."""
        output = self._output_spec(response_format, structured_output, bool(kwargs.get("tools")))
        req = prepare(
            self.spec,
            self._tool_id,
            messages,
            tool_results=self._tool_results_media(),
            output=output,
            **kwargs,
        )
        plan = self._plan_reasoning(reasoning, req.max_tokens, req.tool_choice)
        return replace(req, reasoning=plan) if plan is not None else req

    def _tool_results_media(self) -> registry.Media:
        """What this model's tool results carry natively: the row's ``tool_results``
        (a provider whose older models take less narrows it by model)."""
        return self.traits.tool_results

    def _output_spec(self, response_format: Any, mode: Any, has_tools: bool) -> OutputSpec | None:
        """response_format checked, with the mode it travels in (DESIGN.md §13)."""
        spec = _structured.output_spec(response_format)
        if spec is None:
            if mode is not None:
                raise InvalidRequestError("structured_output needs a response_format")
            return None
        model = self.model or ""
        chosen = _structured.choose_mode(spec, mode, self.traits, self.provider, model, has_tools)
        strict = chosen == "native" and _structured.uses_strict(self.traits, model)
        return replace(spec, mode=chosen, strict=strict)

    def _map_response_format(self, output: OutputSpec) -> dict[str, Any]:
        """The request fields that ask for ``output`` natively (a provider with native
        structured output overrides this)."""
        return {}

    def _native_output(self, req: Request) -> dict[str, Any]:
        """The native structured-output fields of ``req``: empty unless it has a
        response_format sent in native mode."""
        if req.output is None or req.output.mode != "native":
            return {}
        try:
            return self._map_response_format(req.output)
        except ValueError as exc:  # a schema that cannot be made strict
            raise InvalidRequestError(str(exc), provider=self.provider) from None

    def _plan_reasoning(self, reasoning: Any, max_tokens: int | None, choice: Any) -> Plan | None:
        """``reasoning=`` checked against this model's family (the row's reasoning mode
        names its table in zerda.llm.reasoning), once for every provider."""
        mode = self.traits.reasoning
        if mode is None and reasoning is not None:
            raise InvalidRequestError(
                f"reasoning: Zerda has no reasoning control for {self.provider}"
            )
        forced = choice == "required" or isinstance(choice, dict)
        return plan_reasoning(
            mode,
            str(self.model),
            check_reasoning(reasoning),
            max_tokens=max_tokens,
            forced_tool_choice=forced,
        )

    def _check_tool_names(self, tools: list[dict[str, Any]] | None) -> None:
        check_tool_names(tools, self.spec)

    def _check_tool_choice(
        self, choice: str | dict[str, str] | None, parallel_tool_calls: bool | None
    ) -> None:
        check_tool_choice(choice, parallel_tool_calls, self.spec)

    def _make_result(
        self,
        content: str | None,
        calls: list[ToolCall],
        native_stop: Any,
        usage: dict[str, Any] | None,
        provider_data: dict[str, Any] | None = None,
        reasoning: str | None = None,
    ) -> dict[str, Any]:
        """The result shape of DESIGN.md §3, the same from generate and from stream;
        ``reasoning`` is the reasoning text shown ("" counts as none)."""
        tool_calls = tool_calls_to_dicts(calls)
        # Providers say "stop" with calls present (forced tool_choice, Gemini, Ollama).
        stop_reason = "tool_use" if tool_calls else self._map_stop_reason(native_stop)
        message: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "tool_calls": tool_calls,
        }
        result: dict[str, Any] = {
            "content": content,
            "tool_calls": tool_calls,
            "stop_reason": stop_reason,
            "usage": usage,
            "reasoning": reasoning or None,
            "message": message,
        }
        if provider_data:
            message["provider_data"] = provider_data
            result["provider_data"] = provider_data
        return result

    def _to_error(self, exc: BaseException) -> ZerdaError:
        if isinstance(exc, ZerdaError):
            err = exc
        else:
            err = (
                self._map_error(exc)
                or _refused_argument(exc)
                or UnknownError(f"{type(exc).__name__}: {exc}", provider=self.provider)
            )
        if err.provider is None:
            err.provider = self.provider
        err.message = self._redact(err.message)
        err.args = (err.message,)
        return err

    def _redact(self, text: str) -> str:
        key = self.api_key
        return text.replace(key, "***") if key and len(key) >= 4 else text

    def _fail(
        self,
        exc: BaseException,
        raise_errors: bool | None,
        content: str | None = None,
        reasoning: str | None = None,
    ) -> dict[str, Any]:
        err = self._to_error(exc)
        logger.debug("%s call failed: %s", self.provider, err.message)
        if self.raise_errors if raise_errors is None else raise_errors:
            if err is exc:
                raise err
            raise err from exc
        return error_result(err, content, reasoning)

    def _stream_failed(
        self, span: Any, exc: BaseException, raise_errors: bool | None, acc: StreamAccumulator
    ) -> dict[str, Any]:
        """:meth:`_fail` for a stream, keeping the text and reasoning received; a raised
        error ends the stream's span first."""
        try:
            return self._fail(exc, raise_errors, acc.content, acc.reasoning_text)
        except ZerdaError as err:
            _telemetry.end_chat(span, None, err)
            raise

    def _native_request(self, messages: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
        return self._checked_request(messages, kwargs)[1]

    def _checked_request(
        self, messages: Any, kwargs: dict[str, Any]
    ) -> tuple[Request, dict[str, Any]]:
        """The checked request and the SDK call's keyword arguments built from it."""
        try:
            req = self._prepare(messages, **kwargs)
            return req, self._build_request(req)
        except ValueError as exc:  # a converter refused the input: the caller's mistake
            if isinstance(exc, ZerdaError):
                raise
            raise InvalidRequestError(str(exc), provider=self.provider) from exc

    def _with_output(
        self, result: dict[str, Any], output: OutputSpec | None, raise_errors: bool | None
    ) -> dict[str, Any]:
        """The result with the structured answer parsed (no-op without response_format);
        an invalid answer raises OutputValidationError when errors are raised."""
        if output is None:
            return result
        result = _structured.apply_output(result, output)
        if "parse_error" in result and (
            self.raise_errors if raise_errors is None else raise_errors
        ):
            raise OutputValidationError(
                result["parse_error"], provider=self.provider, result=result
            )
        return result

    # --- public API ---------------------------------------------------------------------

    def generate(
        self, messages: Any, *, raise_errors: bool | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """One call. Arguments: DESIGN.md §3 (system, tools, tool_choice, max_tokens,
        temperature, top_p, stop, parallel_tool_calls, timeout, reasoning, **native)."""
        self._check_open()
        with _telemetry.chat(self, messages, kwargs) as span:
            req = None
            try:
                req, native = self._checked_request(messages, kwargs)
                result = self._map_response(self._call(native))
            except Exception as exc:
                result = self._fail(exc, raise_errors)
            _telemetry.record_result(span, result)
            return self._with_output(result, req.output if req else None, raise_errors)

    async def generate_async(
        self, messages: Any, *, raise_errors: bool | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        self._check_open()
        with _telemetry.chat(self, messages, kwargs) as span:
            req = None
            try:
                req, native = self._checked_request(messages, kwargs)
                result = self._map_response(await self._call_async(native))
            except Exception as exc:
                result = self._fail(exc, raise_errors)
            _telemetry.record_result(span, result)
            return self._with_output(result, req.output if req else None, raise_errors)

    def stream(
        self, messages: Any, *, raise_errors: bool | None = None, **kwargs: Any
    ) -> Iterator[dict[str, Any]]:
        """Yields text, reasoning and tool_call events, then always a done event (DESIGN.md §7)."""
        self._check_open()
        acc = StreamAccumulator()
        span = _telemetry.start_chat(self, messages, kwargs)
        req = None
        try:
            req, native = self._checked_request(messages, kwargs)
            acc.expect_output(req.output)
            with self._open_stream(native) as chunks:
                for chunk in chunks:
                    yield from self._feed(acc, chunk)
            yield from acc.end_all_calls()
            result = acc.result(self._make_result)
        except GeneratorExit:  # the consumer stopped reading: not a failure
            _telemetry.end_chat(span, None, None)
            raise
        except Exception as exc:
            result = self._stream_failed(span, exc, raise_errors, acc)
        except BaseException as exc:  # cancelled, interrupted
            _telemetry.end_chat(span, None, exc)
            raise
        _telemetry.end_chat(span, result, None)
        result = self._with_output(result, req.output if req else None, raise_errors)
        yield from acc.final_partial(result)
        yield {"type": "done", "result": result}

    async def stream_async(
        self, messages: Any, *, raise_errors: bool | None = None, **kwargs: Any
    ) -> AsyncIterator[dict[str, Any]]:
        self._check_open()
        acc = StreamAccumulator()
        span = _telemetry.start_chat(self, messages, kwargs)
        req = None
        try:
            req, native = self._checked_request(messages, kwargs)
            acc.expect_output(req.output)
            async with self._open_stream_async(native) as chunks:
                async for chunk in chunks:
                    for event in self._feed(acc, chunk):
                        yield event
            for event in acc.end_all_calls():
                yield event
            result = acc.result(self._make_result)
        except GeneratorExit:  # the consumer stopped reading: not a failure
            _telemetry.end_chat(span, None, None)
            raise
        except Exception as exc:
            result = self._stream_failed(span, exc, raise_errors, acc)
        except BaseException as exc:  # cancelled, interrupted
            _telemetry.end_chat(span, None, exc)
            raise
        _telemetry.end_chat(span, result, None)
        result = self._with_output(result, req.output if req else None, raise_errors)
        for event in acc.final_partial(result):
            yield event
        yield {"type": "done", "result": result}

    def run(
        self, messages: Any, *, tools: Sequence[Any] = (), max_turns: int = 10, **kwargs: Any
    ) -> dict[str, Any]:
        """The automatic tool loop (DESIGN.md §8); see :mod:`zerda.llm.loop`."""
        from zerda.llm.loop import run

        return run(self, messages, tools=tools, max_turns=max_turns, **kwargs)

    async def run_async(
        self, messages: Any, *, tools: Sequence[Any] = (), max_turns: int = 10, **kwargs: Any
    ) -> dict[str, Any]:
        from zerda.llm.loop import run_async

        return await run_async(self, messages, tools=tools, max_turns=max_turns, **kwargs)


# An SDK method's own refusal of a keyword it does not take (Python's TypeError for a
# call with an unexpected keyword): the ``**native`` escape hatch reached a wall.
_UNEXPECTED_KEYWORD = re.compile(r"got an unexpected keyword argument '([^']+)'")


def _refused_argument(exc: BaseException) -> ZerdaError | None:
    """``**native`` arguments go to the SDK call as they are; when its method refuses one,
    that is the caller's invalid request, naming the argument (never an unknown error)."""
    if not isinstance(exc, TypeError):
        return None
    match = _UNEXPECTED_KEYWORD.search(str(exc))
    if match is None:
        return None
    return InvalidRequestError(
        f"the SDK call refuses the argument {match.group(1)!r} ({exc}); extra keyword "
        "arguments go to it unchanged, so only names it takes can be passed"
    )
