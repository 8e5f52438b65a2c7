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
import contextvars
import functools
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
    Mapping,
    Sequence,
)
from dataclasses import replace
from types import ModuleType, TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from zerda.llm import _gc, _names, _ratelimit, _structured, _telemetry, registry
from zerda.llm._ids import ID_RULES
from zerda.llm._ratelimit import RateLimiter
from zerda.llm._request import (
    MAX_SCHEMA_DEPTH,
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
from zerda.llm.messages import json_text

if TYPE_CHECKING:
    import asyncio

    from zerda.llm.batch import AsyncBatchJob, BatchJob, BatchStatus, ItemOutcome
from zerda.llm.errors import (
    AuthenticationError,
    InvalidRequestError,
    OutputValidationError,
    UnknownError,
    ZerdaError,
    error_result,
    excerpt,
    malformed_response,
    retry_delay,
    stream_ended_early,
)
from zerda.llm.reasoning import Plan, check_reasoning, plan_reasoning
from zerda.llm.tools import ToolCall, tool_calls_to_dicts

# Kept importable from here for callers of the first round.
__all__ = [
    "MAX_SCHEMA_DEPTH",
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


# Waits between retries; tests replace it to record the waits instead of sleeping.
def _sleep(seconds: float) -> None:
    time.sleep(seconds)  # looked up per call, so a test may patch either name


# The caller's timeout for the call being made in this context (thread or task): the waits
# between its retries never add up past it. Set for each call by _native_request.
_RETRY_BUDGET: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "zerda_retry_budget", default=None
)


async def _sleep_async(seconds: float) -> None:
    import asyncio  # already loaded: this runs on an event loop

    await asyncio.sleep(seconds)


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
    with no such target any name may be valid, and None says none can be refused.

    Cached: per-call checks of ``**native`` read it on every request, and
    ``inspect.signature`` costs more than a small request's whole conversion."""
    return _signature_options(fn, frozenset(exclude), var_keyword_to)


@functools.lru_cache(maxsize=256)
def _signature_options(
    fn: Callable[..., Any], exclude: frozenset[str], var_keyword_to: Callable[..., Any] | None
) -> frozenset[str] | None:
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


def _fast_path_setting(owner: str, fast_path: Any) -> bool:
    if fast_path is None:
        return os.environ.get("ZERDA_FAST_PATH", "1").strip().lower() not in ("0", "false", "off")
    if not isinstance(fast_path, bool):
        raise TypeError(f"{owner}: fast_path must be True, False or None, not {fast_path!r}")
    return fast_path


def _secret_text(value: Any) -> Any:
    """A secret option's text: the option itself, or the access token of a credentials
    object (google.auth credentials keep theirs in ``.token``)."""
    return value if isinstance(value, str) else getattr(value, "token", None)


def tool_output_text(output: Any) -> str:
    """A tool's output as the text a provider's tool result carries: a string as it is,
    anything else (dict, list, number...) as JSON. The one rule for every provider whose
    tool results are text (OpenAI, Groq, Mistral, Ollama, Anthropic; Bedrock's non-object
    outputs); the history check has already refused what JSON cannot carry."""
    if isinstance(output, str):
        return output
    return json_text(output)  # the text the history check made, where it made one


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
    # The event that ends a complete stream (a fact of the class's wire protocol, the same
    # for every row it serves), named in the error when a stream ends without it.
    stream_final_event: str = "its final event"

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
        self._key_from_environment = api_key is None  # then a pickle never carries it
        self._client_given = client is not None  # a live object: such an interface stays here
        self.base_url = base_url
        self.timeout = None if timeout is None else float(timeout)
        self.max_retries = max_retries
        self.raise_errors = raise_errors
        # False: every request goes through the SDK's documented call (DESIGN §22), never
        # the wire's fast path; None: ZERDA_FAST_PATH decides ("0" turns them all off).
        self.fast_path = _fast_path_setting(type(self).__name__, fast_path)
        _ratelimit.check_setting(rate_limit)
        self.rate_limit = rate_limit
        self._rate_limiter: RateLimiter | None = None
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

    # --- pickling (docs/scale.md) ---------------------------------------------------------

    # Attributes holding live objects (SDK modules and clients, locks, event loops): left out
    # of a pickle and rebuilt, lazily where they are clients, where it is loaded. A subclass
    # that owns more (Bedrock: a boto3 session, a thread pool) extends the tuple and
    # ``_restore_live``.
    _live_attributes: ClassVar[tuple[str, ...]] = (
        "sdk",
        "_client",
        "_async_client",
        "_async_loop",
        "_async_closer",
        "_lock",
        "_rate_limiter",
    )

    def __getstate__(self) -> dict[str, Any]:
        from zerda.llm._pickling import interface_state

        return interface_state(self)

    def __setstate__(self, state: dict[str, Any]) -> None:
        from zerda.llm._pickling import restore_interface

        restore_interface(self, state)

    def _restore_live(self) -> None:
        """The live attributes of an unpickled interface: the SDK module imported again,
        a new lock, no client yet (built on first use, as in a new interface)."""
        for name in self._live_attributes:
            setattr(self, name, None)
        self._owns_client = self._owns_async = False
        spec = self.spec
        if spec.sdk_module:
            self.sdk = require_sdk(spec.sdk_module, spec.extra, spec.sdk_package)
        self._lock = threading.RLock()

    # --- rate limits (docs/scale.md, "Rate limits") --------------------------------------

    @property
    def _limiter(self) -> RateLimiter | None:
        """The process's limiter for this account and limits; None without ``rate_limit``."""
        if self.rate_limit is None:
            return None
        if self._rate_limiter is None:
            self._rate_limiter = _ratelimit.shared_limiter(
                self.rate_limit, self.provider, self.base_url, self.api_key
            )
        return self._rate_limiter

    def _admit(self, native: dict[str, Any]) -> int:
        """Waits until the limiter lets this request go; returns the tokens reserved."""
        limiter = self._limiter
        if limiter is None:
            return 0
        tokens = _ratelimit.estimate_tokens(native)
        limiter.wait(tokens)
        return tokens

    async def _admit_async(self, native: dict[str, Any]) -> int:
        limiter = self._limiter
        if limiter is None:
            return 0
        tokens = _ratelimit.estimate_tokens(native)
        await limiter.wait_async(tokens)
        return tokens

    def _settle(self, reserved: int, result: dict[str, Any]) -> None:
        """Corrects the token reservation with the usage the provider reported."""
        limiter = self._limiter
        usage = result.get("usage")
        if limiter is None or not isinstance(usage, dict):
            return
        used = (usage.get("input_tokens") or 0) + (usage.get("output_tokens") or 0)
        limiter.settle(reserved, used)

    def _with_rate_headers(self, kwargs: dict[str, Any], *, is_async: bool) -> dict[str, Any]:
        """Stainless client arguments (openai, groq, anthropic) with an HTTP client whose
        response hook hands the provider's rate-limit headers to the limiter; unchanged
        without a limiter, for an SDK without ``DefaultHttpxClient`` or when the caller
        gave an ``http_client``."""
        limiter = self._limiter
        factory = getattr(
            self.sdk, "DefaultAsyncHttpxClient" if is_async else "DefaultHttpxClient", None
        )
        if limiter is None or factory is None or kwargs.get("http_client") is not None:
            return kwargs
        hook = limiter.observe_response_async if is_async else limiter.observe_response
        return {**kwargs, "http_client": factory(event_hooks={"response": [hook]})}

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
        # max_retries=0: Zerda retries every provider itself, with one policy (_retrying).
        kwargs: dict[str, Any] = {"api_key": self.api_key, "max_retries": 0}
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

    @property
    def _tool_id(self) -> Callable[[str | None, int, int], str | None]:
        """The row's id rule: ``rule(orig, message_index, call_index)`` is the id sent for
        a history tool call and its result (the function itself, called once per call)."""
        return ID_RULES[self.traits.tool_id]

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

    def _retry_after(self, exc: BaseException) -> float | None:
        """Seconds the server asked to wait (``Retry-After``), from the SDK's exception: its
        HTTP response's headers, or headers it carries itself. Providers whose SDK keeps
        them elsewhere override this."""
        from zerda.llm._retry import retry_after_from_headers

        for holder in (getattr(exc, "response", None), exc):
            after = retry_after_from_headers(getattr(holder, "headers", None))
            if after is not None:
                return after
        return None

    def _retry_delay(self, exc: BaseException, attempt: int, waited: float) -> float | None:
        """Seconds to wait before retry ``attempt`` (from 0) after ``exc``, having waited
        ``waited`` already; None: do not retry. :func:`zerda.llm.errors.retry_delay`
        decides, on the error ``exc`` maps to, for every provider."""
        if attempt >= self.max_retries:
            return None
        error = self._to_error(exc)
        budget = _RETRY_BUDGET.get(self.timeout)
        return retry_delay(error, attempt, self._retry_after(exc), waited=waited, budget=budget)

    def _retrying(self, send: Callable[[], T]) -> T:
        """``send()``, retried per ``_retry_delay`` up to ``max_retries`` times. Every
        provider's calls go through here (the SDKs' own retries are off), so one policy
        holds everywhere."""
        attempt, waited = 0, 0.0
        while True:
            try:
                return send()
            except Exception as exc:
                delay = self._retry_delay(exc, attempt, waited)
                if delay is None:
                    raise
            _sleep(delay)
            waited += delay
            attempt += 1

    async def _retrying_async(self, send: Callable[[], Awaitable[T]]) -> T:
        """As :meth:`_retrying`; only the wait is awaited."""
        attempt, waited = 0, 0.0
        while True:
            try:
                return await send()
            except Exception as exc:
                delay = self._retry_delay(exc, attempt, waited)
                if delay is None:
                    raise
            await _sleep_async(delay)
            waited += delay
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
        ``reasoning`` is the reasoning text shown ("" counts as none). A response whose
        text or reasoning is not a string or whose tool call has no name is malformed:
        reported as such, the raw part in the message, rather than returned as a success
        that the next call's history check would refuse."""
        if content is not None and not isinstance(content, str):
            raise malformed_response(
                self.provider, f"the message content is not text: {excerpt(content)}"
            )
        if reasoning is not None and not isinstance(reasoning, str):
            raise malformed_response(
                self.provider, f"the reasoning is not text: {excerpt(reasoning)}"
            )
        for j, call in enumerate(calls):
            if call.id is not None and not isinstance(call.id, str):
                raise malformed_response(
                    self.provider, f"tool_calls[{j}] has an id that is not text: {call.id!r}"
                )
            if not isinstance(call.name, str) or not call.name:
                raise malformed_response(
                    self.provider,
                    f"tool_calls[{j}] has no name (id={call.id!r}, "
                    f"arguments={excerpt(call.arguments)})",
                )
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
            try:
                mapped = self._map_error(exc)
            except Exception:  # noqa: BLE001 - a body no mapping foresaw must not escape
                mapped = None
            err = (
                mapped
                or _refused_argument(exc)
                or UnknownError(f"{type(exc).__name__}: {exc}", provider=self.provider)
            )
        if err.provider is None:
            err.provider = self.provider
        err.message = self._redact(err.message)
        err.args = (err.message,)
        return err

    def _redact(self, text: str) -> str:
        """``text`` without the API key or any secret option of the row (an AWS secret key,
        an access token, the token a google.auth ``credentials`` object holds) in it."""
        options = (self.options.get(o) for o in self.spec.secret_options)
        secrets = [self.api_key, *(_secret_text(v) for v in options)]
        for secret in secrets:
            if isinstance(secret, str) and len(secret) >= 4:
                text = text.replace(secret, "***")
        return text

    def _fail(
        self,
        exc: BaseException,
        raise_errors: bool | None,
        content: str | None = None,
        reasoning: str | None = None,
    ) -> dict[str, Any]:
        err = self._to_error(exc)
        # WARNING: a failed call must not pass unnoticed (print(result["content"]) shows
        # only None); the message is already scrubbed of secrets.
        logger.warning("%s call failed: %s: %s", self.provider, err.type, err.message)
        if self.raise_errors if raise_errors is None else raise_errors:
            self._scrub_chain(exc)
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

    def _scrub_chain(self, exc: BaseException) -> None:
        """Removes secrets from the text of every exception ``exc`` chains to (its
        __cause__ and __context__, theirs...): a provider may echo the key in an error, and
        ``logger.exception`` prints the whole chain."""
        seen: set[int] = set()
        todo: list[BaseException | None] = [exc]
        while todo:
            current = todo.pop()
            if current is None or id(current) in seen:
                continue
            seen.add(id(current))
            _scrub_exception(current, self._redact)
            todo += [current.__cause__, current.__context__]

    def _native_request(self, messages: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
        return self._checked_request(messages, kwargs)[1]

    def _checked_request(
        self, messages: Any, kwargs: dict[str, Any]
    ) -> tuple[Request, dict[str, Any]]:
        """The checked request and the SDK call's keyword arguments built from it (the
        garbage collector paused meanwhile: :mod:`zerda.llm._gc`)."""
        paused = _gc.pause()
        try:
            req = self._prepare(messages, **kwargs)
            # The retry budget of this call: its own timeout, else the interface's.
            _RETRY_BUDGET.set(req.timeout if req.timeout is not None else self.timeout)
            return req, self._build_request(req)
        except ValueError as exc:  # a converter refused the input: the caller's mistake
            if isinstance(exc, ZerdaError):
                raise
            raise InvalidRequestError(str(exc), provider=self.provider) from exc
        finally:
            _gc.resume(paused)

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

    def _check_finished(self, acc: StreamAccumulator) -> None:
        """The truncation rule, for every provider: a stream that ended (cleanly) before
        its final event is an error, its text kept (docs/errors.md, Streams)."""
        if not acc.finished:
            raise stream_ended_early(self.provider, self.stream_final_event)

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
                reserved = self._admit(native)
                raw = self._call(native)
                result = _names.restore_result(self._map_response(raw), req.tool_names)
                self._settle(reserved, result)
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
                reserved = await self._admit_async(native)
                raw = await self._call_async(native)
                result = _names.restore_result(self._map_response(raw), req.tool_names)
                self._settle(reserved, result)
            except Exception as exc:
                result = self._fail(exc, raise_errors)
            _telemetry.record_result(span, result)
            return self._with_output(result, req.output if req else None, raise_errors)

    def stream(
        self, messages: Any, *, raise_errors: bool | None = None, **kwargs: Any
    ) -> Iterator[dict[str, Any]]:
        """Yields text, reasoning and tool_call events, then always a done event (DESIGN.md §7)."""
        self._check_open()
        acc = StreamAccumulator(self.provider)
        span = _telemetry.start_chat(self, messages, kwargs)
        req = None
        try:
            req, native = self._checked_request(messages, kwargs)
            acc.expect_output(req.output)
            reserved = self._admit(native)
            with self._open_stream(native) as chunks:
                for chunk in chunks:
                    for event in self._feed(acc, chunk):
                        yield _names.restore_event(event, req.tool_names)
            self._check_finished(acc)
            for event in acc.end_all_calls():
                yield _names.restore_event(event, req.tool_names)
            result = _names.restore_result(acc.result(self._make_result), req.tool_names)
            self._settle(reserved, result)
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
        acc = StreamAccumulator(self.provider)
        span = _telemetry.start_chat(self, messages, kwargs)
        req = None
        try:
            req, native = self._checked_request(messages, kwargs)
            acc.expect_output(req.output)
            reserved = await self._admit_async(native)
            async with self._open_stream_async(native) as chunks:
                async for chunk in chunks:
                    for event in self._feed(acc, chunk):
                        yield _names.restore_event(event, req.tool_names)
            self._check_finished(acc)
            for event in acc.end_all_calls():
                yield _names.restore_event(event, req.tool_names)
            result = _names.restore_result(acc.result(self._make_result), req.tool_names)
            self._settle(reserved, result)
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

    def batch(self, requests: Sequence[dict[str, Any]], **options: Any) -> BatchJob:
        """Sends ``requests`` (dicts of generate arguments, each with an ``"id"``) as one job
        of the provider's batch API; see :mod:`zerda.llm.batch`. ``options`` go to the
        provider's job creation (``metadata``...)."""
        from zerda.llm.batch import BatchJob, prepare_items

        self._check_batch()
        items = prepare_items(self, requests)
        try:
            batch_id = self._batch_submit(items, options)
        except Exception as exc:
            raise self._to_error(exc) from exc
        return BatchJob(self, batch_id, [i for i, _ in items])

    async def batch_async(
        self, requests: Sequence[dict[str, Any]], **options: Any
    ) -> AsyncBatchJob:
        from zerda.llm.batch import AsyncBatchJob, prepare_items

        self._check_batch()
        items = prepare_items(self, requests)
        try:
            batch_id = await self._batch_submit_async(items, options)
        except Exception as exc:
            raise self._to_error(exc) from exc
        return AsyncBatchJob(self, batch_id, [i for i, _ in items])

    def _check_batch(self) -> None:
        if self.traits.batch is None:
            able = [p.name for p in registry.REGISTRY.values() if p.traits.batch]
            raise InvalidRequestError(
                f"batch: Zerda maps no batch API for {self.provider} (providers with one: "
                f"{', '.join(able)}); nothing was sent",
                provider=self.provider,
            )

    # Batch hooks (providers whose row has traits.batch): the native calls only; mapping
    # lives in the provider module, the job handle in zerda.llm.batch.

    def _batch_submit(
        self, items: list[tuple[str, dict[str, Any]]], options: dict[str, Any]
    ) -> str:
        raise NotImplementedError

    async def _batch_submit_async(
        self, items: list[tuple[str, dict[str, Any]]], options: dict[str, Any]
    ) -> str:
        raise NotImplementedError

    def _batch_poll(self, batch_id: str) -> BatchStatus:
        raise NotImplementedError

    async def _batch_poll_async(self, batch_id: str) -> BatchStatus:
        raise NotImplementedError

    def _batch_fetch(self, batch_id: str) -> dict[str, ItemOutcome]:
        raise NotImplementedError

    async def _batch_fetch_async(self, batch_id: str) -> dict[str, ItemOutcome]:
        raise NotImplementedError

    def _batch_cancel(self, batch_id: str) -> BatchStatus:
        raise NotImplementedError

    async def _batch_cancel_async(self, batch_id: str) -> BatchStatus:
        raise NotImplementedError

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


def without_sdk_retries(client: Any) -> Any:
    """A ready Stainless SDK client (openai, groq, anthropic) with its own retries off:
    Zerda retries every provider with one policy (``_retrying``). ``with_options`` returns a
    copy that shares the client's HTTP connection pool."""
    if client is None or getattr(client, "max_retries", 0) == 0:
        return client
    with_options = getattr(client, "with_options", None)
    return with_options(max_retries=0) if callable(with_options) else client


def _scrub_exception(exc: BaseException, redact: Callable[[str], str]) -> None:
    """``exc``'s args and text attributes (``message``, ``body``, ``error``... which SDK
    exceptions' str and repr show) with secrets replaced by ``***``."""
    try:
        exc.args = tuple(redact(a) if isinstance(a, str) else a for a in exc.args)
        for name, value in list(getattr(exc, "__dict__", {}).items()):
            if isinstance(value, str) and redact(value) != value:
                # object.__setattr__: some SDK exceptions are frozen dataclasses (mistralai).
                object.__setattr__(exc, name, redact(value))
    except (AttributeError, TypeError):  # an exception type with read-only fields
        pass
