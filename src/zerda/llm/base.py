"""BaseLLMInterface: everything the seven providers share.

A provider subclass supplies data (``provider``, ``env_keys``, ``sdk_module``...) and small
hooks, each one idea: ``_make_client``/``_make_async_client``, ``_build_request`` (unified
:class:`Request` -> the SDK call's keyword arguments), ``_call``/``_call_async`` (the only
sync/async difference), ``_map_response``, ``_map_error`` and, for streaming,
``_open_stream``/``_open_stream_async`` and ``_feed``. Checking arguments,
normalising tools, validating tool_choice, catching failures into the error shape and
keeping the API key out of sight happen here, once.
"""

from __future__ import annotations

import importlib
import logging
import os
import re
import sys
import threading
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from zerda.llm import _telemetry, registry
from zerda.llm._ids import ID_RULES
from zerda.llm._stream import StreamAccumulator

if TYPE_CHECKING:
    import asyncio
from zerda.llm.errors import (
    AuthenticationError,
    InvalidRequestError,
    UnknownError,
    ZerdaError,
    error_result,
)
from zerda.llm.executable import ExecutableTool
from zerda.llm.messages import (
    check_system,
    json_problem,
    resolve_tool_ids,
    split_system,
    system_parts,
    validate_messages,
)
from zerda.llm.parts import check_media, drop_cache_points, move_tool_media
from zerda.llm.tools import ToolCall, _normalize_tool, tool_calls_to_dicts

logger = logging.getLogger("zerda")
T = TypeVar("T")


def _running_loop() -> asyncio.AbstractEventLoop | None:
    # asyncio costs ~15% of a cold start: without it imported, no event loop can be running.
    aio = sys.modules.get("asyncio")
    if aio is None:
        return None
    try:
        return aio.get_running_loop()  # type: ignore[no-any-return]
    except RuntimeError:
        return None


TOOL_CHOICES = ("auto", "none", "required")


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


@dataclass(frozen=True)
class Request:
    """A checked, provider-neutral request: what every ``_build_request`` starts from."""

    system: str | None
    messages: list[dict[str, Any]]  # validated, tool ids resolved, no system messages
    tools: list[dict[str, Any]] | None  # unified: {"name", "description", "parameters"}
    tool_choice: str | dict[str, str] | None  # None | "auto" | "none" | "required" | {"name"}
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    stop: list[str] | None = None
    parallel_tool_calls: bool | None = None
    native: dict[str, Any] = field(default_factory=dict)
    # The system prompt as text parts and cache points, where the provider honours cache
    # points and the system holds one (else None: ``system`` says it all).
    system_parts: list[dict[str, Any]] | None = None
    cache_tools: bool = False  # generate(cache=True): a cache point after the tools


def require_sdk(module: str, extra: str, package: str) -> ModuleType:
    """Imports a provider SDK, or fails with the command that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f'this provider needs the {package!r} package: pip install "zerda-llm[{extra}]"'
        ) from exc


def _unwrap_tool(index: int, tool: Any) -> dict[str, Any]:
    """A unified tool dict from a unified or an OpenAI-style ({"type": "function"}) dict."""
    if not isinstance(tool, dict):
        raise InvalidRequestError(f"tools[{index}] must be a dict, a function or a pydantic model")
    if tool.get("type") == "function" and isinstance(tool.get("function"), dict):
        tool = tool["function"]
    try:
        t = _normalize_tool(tool)
    except ValueError as exc:
        raise InvalidRequestError(f"tools[{index}]: {exc}") from None
    if not isinstance(t["name"], str):
        raise InvalidRequestError(f"tools[{index}]: 'name' must be a string")
    if not isinstance(t["schema"], dict):
        raise InvalidRequestError(f"tools[{index}] ({t['name']!r}): the schema must be a dict")
    problem = json_problem(t["schema"])
    if problem:
        raise InvalidRequestError(
            f"tools[{index}] ({t['name']!r}): the schema cannot be sent as JSON: {problem}"
        )
    description = t["description"] if isinstance(t["description"], str) else ""
    return {"name": t["name"], "description": description or "", "parameters": t["schema"]}


def normalize_tools(tools: Sequence[Any] | None) -> list[dict[str, Any]] | None:
    """Unified tool dicts from dicts, OpenAI-style dicts, callables and pydantic models."""
    if not tools:
        return None
    if isinstance(tools, (str, bytes, dict)) or not isinstance(tools, Sequence):
        raise InvalidRequestError("tools must be a list")
    tools = [t.to_dict() if isinstance(t, ExecutableTool) else t for t in tools]
    if any(not isinstance(t, dict) for t in tools):
        from zerda.llm.functions import to_tool  # imports pydantic: only when needed

        try:
            tools = [t if isinstance(t, dict) else to_tool(t, i) for i, t in enumerate(tools)]
        except ValueError as exc:  # a function or model the schema builder refused
            raise InvalidRequestError(str(exc)) from exc
    out = [_unwrap_tool(i, t) for i, t in enumerate(tools)]
    seen: set[str] = set()
    for i, t in enumerate(out):
        if t["name"] in seen:
            raise InvalidRequestError(f"tools[{i}]: duplicate tool name {t['name']!r}")
        seen.add(t["name"])
    return out


def _mark_last_turn(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``cache=True``: a cache point after the last user or tool message (``cache_after``,
    which the providers with explicit caching map after that message's last block)."""
    for i in range(len(messages) - 1, -1, -1):
        content = messages[i]["content"]
        if messages[i]["role"] not in ("user", "tool"):
            continue
        if isinstance(content, list) and content and content[-1].get("type") == "cache_point":
            return messages  # the caller put one there already
        return [*messages[:i], {**messages[i], "cache_after": True}, *messages[i + 1 :]]
    return messages


def normalize_tool_choice(
    choice: Any, tools: list[dict[str, Any]] | None
) -> str | dict[str, str] | None:
    """None, "auto", "none", "required" or {"name": tool}; refuses a name that no tool has."""
    if choice is None:
        return None
    name = None
    if isinstance(choice, dict):
        fn = choice.get("function")
        name = fn.get("name") if isinstance(fn, dict) else choice.get("name")
        if not isinstance(name, str) or not name:
            raise InvalidRequestError(f"tool_choice {choice!r}: a dict must name a tool")
    elif isinstance(choice, str):
        if choice in TOOL_CHOICES:
            if choice == "required" and not tools:
                raise InvalidRequestError("tool_choice 'required' needs tools")
            return choice
        name = choice
    else:
        raise InvalidRequestError(
            f"tool_choice must be 'auto', 'none', 'required' or a tool name, not {choice!r}"
        )
    known = [t["name"] for t in tools or []]
    if name not in known:
        raise InvalidRequestError(
            f"tool_choice names {name!r}, which is not in tools (given: {', '.join(known) or 'none'})"
        )
    return {"name": name}


class BaseLLMInterface:
    """The shared generate / stream / run machinery. See the module docstring."""

    # The registry row an instance uses unless ``provider=`` names another one (an
    # OpenAI-compatible service is a row whose class is an existing interface). A class
    # outside the registry (a third-party provider, a test double) sets ``spec`` itself.
    provider: str = ""
    spec: registry.ProviderSpec

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
        self.timeout = timeout
        self.max_retries = max_retries
        self.raise_errors = raise_errors
        self.options = options
        self._client = client
        self._async_client: Any = None
        self._async_loop: weakref.ReferenceType[asyncio.AbstractEventLoop] | None = None
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

    # --- clients, built once ------------------------------------------------------------

    @property
    def client(self) -> Any:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    self._check_key()
                    self._client = self._make_client()
        return self._client

    @property
    def async_client(self) -> Any:
        """The async SDK client, built once per event loop: an httpx-based async client is
        bound to the loop it first ran on, so one interface reused across ``asyncio.run``
        calls gets a fresh client on each new loop (a client passed in is always kept)."""
        loop = _running_loop()
        built_for = self._async_loop() if self._async_loop is not None else None
        if self._async_client is None or (self._async_loop is not None and built_for is not loop):
            with self._lock:
                self._check_key()
                self._async_client = self._make_async_client()
                self._async_loop = weakref.ref(loop) if loop is not None else None
        return self._async_client

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

    def _make_client(self) -> Any:
        raise NotImplementedError

    def _make_async_client(self) -> Any:
        raise NotImplementedError

    # --- provider hooks -----------------------------------------------------------------

    def _tool_id(self, orig: str | None, index: int, j: int) -> str | None:
        """The id sent for a history tool call (and its result): the row's id rule."""
        return ID_RULES[self.traits.tool_id](orig, index, j)

    def _build_request(self, req: Request) -> dict[str, Any]:
        raise NotImplementedError

    def _call(self, kwargs: dict[str, Any]) -> Any:
        raise NotImplementedError

    async def _call_async(self, kwargs: dict[str, Any]) -> Any:
        raise NotImplementedError

    def _map_response(self, raw: Any) -> dict[str, Any]:
        raise NotImplementedError

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

    def _map_stop_reason(self, native: Any) -> str:
        raise NotImplementedError

    def _open_stream(self, kwargs: dict[str, Any]) -> Any:
        """A context manager yielding an iterator of native chunks; closes the response."""
        raise NotImplementedError

    def _open_stream_async(self, kwargs: dict[str, Any]) -> Any:
        """An async context manager yielding an async iterator of native chunks."""
        raise NotImplementedError

    def _feed(self, acc: StreamAccumulator, chunk: Any) -> list[dict[str, Any]]:
        """Native chunk -> Zerda events, recording into ``acc``."""
        raise NotImplementedError

    # --- shared machinery ---------------------------------------------------------------

    def _prepare(
        self,
        messages: Any,
        *,
        system: str | list[dict[str, Any]] | None = None,
        tools: Sequence[Any] | None = None,
        tool_choice: Any = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        top_p: float | None = None,
        stop: str | Sequence[str] | None = None,
        parallel_tool_calls: bool | None = None,
        cache: bool = False,
        **native: Any,
    ) -> Request:
        """Checks everything that can be checked before a request is sent."""
        system = check_system(system)
        unified_tools = normalize_tools(tools)
        self._check_tool_names(unified_tools)
        checked = validate_messages(messages)
        resolved = resolve_tool_ids(checked, self._tool_id)
        # Indices as the caller gave them: checked before system messages are taken out.
        check_media(resolved, self.provider, self.traits.user, self._tool_results_media())
        system_text, rest = split_system(resolved, system)
        rest = self._map_parts(rest, cache)
        cached = cache and self.traits.cache_points
        if isinstance(stop, str):
            stop = [stop]
        choice = normalize_tool_choice(tool_choice, unified_tools)
        self._check_tool_choice(choice, parallel_tool_calls)
        return Request(
            system=system_text,
            messages=rest,
            tools=unified_tools,
            tool_choice=choice,
            max_tokens=max_tokens,
            temperature=temperature,
            top_p=top_p,
            stop=list(stop) if stop else None,
            parallel_tool_calls=parallel_tool_calls,
            native=native,
            system_parts=self._system_parts(resolved, system, system_text, cached),
            cache_tools=bool(cached and unified_tools),
        )

    def _map_parts(self, messages: list[dict[str, Any]], cache: bool) -> list[dict[str, Any]]:
        """Content parts (already checked against the row by ``check_media``) made ready
        for the provider: cache points dropped where caching is automatic, the last user
        turn marked with ``cache=True`` where it is explicit, media that tool messages cannot
        carry moved to a user message after them (docs/multimodal.md)."""
        if not self.traits.cache_points:
            messages = drop_cache_points(messages)
        elif cache:
            messages = _mark_last_turn(messages)
        return move_tool_media(messages, self._tool_results_media())

    def _tool_results_media(self) -> registry.Media:
        """What this model's tool results carry natively: the row's ``tool_results``
        (a provider whose older models take less narrows it by model)."""
        return self.traits.tool_results

    def _system_parts(
        self,
        messages: list[dict[str, Any]],
        system: str | list[dict[str, Any]] | None,
        text: str | None,
        cache: bool,
    ) -> list[dict[str, Any]] | None:
        """The system prompt as parts where the provider honours cache points and there is
        one to honour (``cache=True`` adds one after the system prompt)."""
        if not self.traits.cache_points:
            return None
        parts = system_parts(messages, system)
        if cache and text and not (parts and parts[-1]["type"] == "cache_point"):
            parts = [*(parts or [{"type": "text", "text": text}]), {"type": "cache_point"}]
        return parts

    def _check_tool_names(self, tools: list[dict[str, Any]] | None) -> None:
        """Every tool name matches the row's rule in full (``fullmatch``: a trailing newline
        is not a valid name, as ``$`` would allow)."""
        pattern = re.compile(self.traits.tool_name)
        for i, t in enumerate(tools or []):
            if not pattern.fullmatch(t["name"]):
                raise InvalidRequestError(
                    f"tools[{i}]: {self.provider} refuses the tool name {t['name']!r}: "
                    f"tool names there are {self.traits.tool_name_rule}"
                )

    def _check_tool_choice(
        self, choice: str | dict[str, str] | None, parallel_tool_calls: bool | None
    ) -> None:
        """tool_choice and parallel_tool_calls=False only where the row says the provider
        honours them: never silently ignored."""
        supported = self.traits.tool_choice
        kind = "name" if isinstance(choice, dict) else choice
        if kind is not None and kind not in supported:
            shown = ", ".join(repr(c) if c != "name" else "a tool name" for c in sorted(supported))
            raise InvalidRequestError(
                f"tool_choice {kind!r}: {self.provider} cannot enforce it (supported: {shown})"
            )
        if parallel_tool_calls is False and not self.traits.parallel_tool_calls:
            able = [p.name for p in registry.REGISTRY.values() if p.traits.parallel_tool_calls]
            raise InvalidRequestError(
                f"parallel_tool_calls=False: {self.provider} has no such switch, so it cannot "
                f"be honoured (providers that have it: {', '.join(able)})"
            )

    def _make_result(
        self,
        content: str | None,
        calls: list[ToolCall],
        native_stop: Any,
        usage: dict[str, Any] | None,
        provider_data: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The result shape of DESIGN.md §3, the same from generate and from stream."""
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
            err = self._map_error(exc) or UnknownError(
                f"{type(exc).__name__}: {exc}", provider=self.provider
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
        self, exc: BaseException, raise_errors: bool | None, content: str | None = None
    ) -> dict[str, Any]:
        err = self._to_error(exc)
        logger.debug("%s call failed: %s", self.provider, err.message)
        if self.raise_errors if raise_errors is None else raise_errors:
            if err is exc:
                raise err
            raise err from exc
        return error_result(err, content)

    def _stream_failed(
        self, span: Any, exc: BaseException, raise_errors: bool | None, content: str | None
    ) -> dict[str, Any]:
        """:meth:`_fail` for a stream; a raised error ends the stream's span first."""
        try:
            return self._fail(exc, raise_errors, content)
        except ZerdaError as err:
            _telemetry.end_chat(span, None, err)
            raise

    def _native_request(self, messages: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
        try:
            req = self._prepare(messages, **kwargs)
            return self._build_request(req)
        except ValueError as exc:  # a converter refused the input: the caller's mistake
            if isinstance(exc, ZerdaError):
                raise
            raise InvalidRequestError(str(exc), provider=self.provider) from exc

    # --- public API ---------------------------------------------------------------------

    def generate(
        self, messages: Any, *, raise_errors: bool | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """One call. Arguments: DESIGN.md §3 (system, tools, tool_choice, max_tokens,
        temperature, top_p, stop, parallel_tool_calls, **native)."""
        with _telemetry.chat(self, messages, kwargs) as span:
            try:
                native = self._native_request(messages, kwargs)
                result = self._map_response(self._call(native))
            except Exception as exc:
                result = self._fail(exc, raise_errors)
            _telemetry.record_result(span, result)
            return result

    async def generate_async(
        self, messages: Any, *, raise_errors: bool | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        with _telemetry.chat(self, messages, kwargs) as span:
            try:
                native = self._native_request(messages, kwargs)
                result = self._map_response(await self._call_async(native))
            except Exception as exc:
                result = self._fail(exc, raise_errors)
            _telemetry.record_result(span, result)
            return result

    def stream(
        self, messages: Any, *, raise_errors: bool | None = None, **kwargs: Any
    ) -> Iterator[dict[str, Any]]:
        """Yields text and tool_call events, then always a done event (DESIGN.md §7)."""
        acc = StreamAccumulator()
        span = _telemetry.start_chat(self, messages, kwargs)
        try:
            native = self._native_request(messages, kwargs)
            with self._open_stream(native) as chunks:
                for chunk in chunks:
                    yield from self._feed(acc, chunk)
            yield from acc.end_all_calls()
            result = acc.result(self._make_result)
        except GeneratorExit:  # the consumer stopped reading: not a failure
            _telemetry.end_chat(span, None, None)
            raise
        except Exception as exc:
            result = self._stream_failed(span, exc, raise_errors, acc.content)
        except BaseException as exc:  # cancelled, interrupted
            _telemetry.end_chat(span, None, exc)
            raise
        _telemetry.end_chat(span, result, None)
        yield {"type": "done", "result": result}

    async def stream_async(
        self, messages: Any, *, raise_errors: bool | None = None, **kwargs: Any
    ) -> AsyncIterator[dict[str, Any]]:
        acc = StreamAccumulator()
        span = _telemetry.start_chat(self, messages, kwargs)
        try:
            native = self._native_request(messages, kwargs)
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
            result = self._stream_failed(span, exc, raise_errors, acc.content)
        except BaseException as exc:  # cancelled, interrupted
            _telemetry.end_chat(span, None, exc)
            raise
        _telemetry.end_chat(span, result, None)
        yield {"type": "done", "result": result}

    def run(
        self, messages: Any, *, tools: Sequence[Any], max_turns: int = 10, **kwargs: Any
    ) -> dict[str, Any]:
        """The automatic tool loop (DESIGN.md §8); see :mod:`zerda.llm.loop`."""
        from zerda.llm.loop import run

        return run(self, messages, tools=tools, max_turns=max_turns, **kwargs)

    async def run_async(
        self, messages: Any, *, tools: Sequence[Any], max_turns: int = 10, **kwargs: Any
    ) -> dict[str, Any]:
        from zerda.llm.loop import run_async

        return await run_async(self, messages, tools=tools, max_turns=max_turns, **kwargs)
