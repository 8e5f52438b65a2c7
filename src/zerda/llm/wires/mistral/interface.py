"""Mistral chat completions through the ``mistralai`` SDK (docs/providers/mistral.md).

Everything OpenAI-shaped lives in ``_openai_compat``; this module holds what is Mistral's
own: the Speakeasy client (``chat.complete`` / ``chat.stream``), ``tool_choice="any"``,
9-character tool call ids, tool result names, its error classes, and retries done here
because the SDK's retry is bounded by elapsed time rather than a count.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from zerda.llm._fastpath import PrivateName
from zerda.llm.errors import ServerError, ZerdaError, error_from_status, malformed_response
from zerda.llm.interface.batch import BatchProtocol
from zerda.llm.parts import with_urls
from zerda.llm.tools import _get
from zerda.llm.wires.mistral import fastpath as _mistral_post
from zerda.llm.wires.openai.compat import (
    OpenAICompatInterface,
    _body_message,
    _map_message,
    _map_usage,
    _stream_error,
    _transport_error,
    data_url,
)

if TYPE_CHECKING:
    from zerda.llm.reasoning import Plan

T = TypeVar("T")


# --- request --------------------------------------------------------------------------


def _map_part(part: dict[str, Any]) -> dict[str, Any]:
    """One content part as a Mistral chunk: image_url, document_url, input_audio (base64)
    (https://docs.mistral.ai/capabilities/vision/, /document_ai/, /audio/)."""
    kind = part["type"]
    if kind == "text":
        return {"type": "text", "text": part["text"]}
    if kind == "image":
        return {"type": "image_url", "image_url": {"url": data_url(part)}}
    if kind == "audio":
        return {"type": "input_audio", "input_audio": part["data"]}
    chunk = {"type": "document_url", "document_url": data_url(part)}
    return {**chunk, "document_name": part["name"]} if part.get("name") else chunk


# --- the interface ---------------------------------------------------------------------


# The assistant turn Zerda puts between a tool result and a following user message, which
# Mistral's message-order rule requires (docs/decisions.md): the API answers a user turn right
# after a tool turn with 400 "Unexpected role 'user' after role 'tool'"
# (invalid_request_message_order, quoted in zed-industries/zed#37021) and accepts
# tool -> assistant -> user, the fix merged in avante-corp/avante.nvim#2695.
_BRIDGE = {"role": "assistant", "content": "OK.", "prefix": False}


def _with_sdk_defaults(message: dict[str, Any]) -> None:
    """The defaults the SDK's request models write into every assistant message
    (``prefix: false``) and tool call (``index: 0``), so that the body Zerda posts is the
    one ``chat.complete()`` would send (on Zerda's own fresh dicts)."""
    message["prefix"] = False
    for call in message.get("tool_calls") or ():
        call["index"] = 0


class MistralInterface(OpenAICompatInterface):
    """Mistral via the ``mistralai`` SDK. Its ``Mistral`` object has sync and async
    methods, so a ready one passed as ``client=`` serves both (``async_client=`` may pass
    another for async calls); otherwise an async client is built per event loop."""

    provider = "mistral"
    # One class with sync and async methods; an async one is built per event loop.
    client_class: ClassVar[str] = "Mistral"
    async_client_class: ClassVar[str] = "Mistral"
    max_tokens_field: ClassVar[str] = "max_tokens"
    # https://docs.mistral.ai/capabilities/function_calling/#tool_choice
    tool_choice_required: ClassVar[str] = "any"
    fast_path_wire: ClassVar[str] = "mistral"
    fast_path_names: ClassVar[tuple[PrivateName, ...]] = _mistral_post.PRIVATE_NAMES

    def __init__(self, model: str | None = None, **kwargs: Any) -> None:
        super().__init__(model, **kwargs)
        if self._async_client is None:
            self._async_client = self._client  # a ready client= serves async calls too

    def _client_kwargs(self) -> dict[str, Any]:
        # No retry_config: the SDK's retry is bounded by elapsed time, not a count, and
        # skips 408/409; Zerda retries (BaseLLMInterface._retrying), reading Retry-After
        # from the error's headers.
        kwargs: dict[str, Any] = {"api_key": self.api_key}
        if self.base_url is not None:
            kwargs["server_url"] = self.base_url
        if self.timeout is not None:
            kwargs["timeout_ms"] = int(self.timeout * 1000)
        return {**kwargs, **self.options}

    # --- request ---

    def _map_timeout(self, timeout: float | None) -> dict[str, Any]:
        # The Speakeasy SDK's per-call option is timeout_ms (chat.complete / chat.stream).
        return {} if timeout is None else {"timeout_ms": int(timeout * 1000)}

    def _map_messages(self, req: Any) -> list[dict[str, Any]]:
        """Mistral refuses a user message right after a tool message ("Unexpected role
        'user' after role 'tool'", code 3230): a short assistant turn bridges the two."""
        out = self._map_system(req.system)
        previous = None
        for message in req.messages:
            role = message["role"]
            if role == "user" and previous == "tool":
                out.append(dict(_BRIDGE))
            out.append(self._map_message(message))
            previous = role
        return self._nonempty(out)

    def _map_message(self, message: dict[str, Any]) -> dict[str, Any]:
        mapped = _map_message(message, _map_part)
        if message["role"] == "tool":
            # Mistral's tool messages carry the function name as well as the call id.
            mapped["name"] = message["name"]
        elif message["role"] == "assistant":
            _with_sdk_defaults(mapped)
        return mapped

    def _map_reasoning(self, plan: Plan | None) -> dict[str, Any]:
        """``reasoning_effort`` on the adjustable models; Magistral always reasons and
        takes ``prompt_mode: "reasoning"`` (its reasoning system prompt) instead:
        https://docs.mistral.ai/capabilities/reasoning/"""
        if plan is None:
            return {}
        if not plan.on:
            return {"reasoning_effort": plan.off}
        field = "prompt_mode" if plan.family.style == "prompt_mode" else "reasoning_effort"
        return {field: plan.effort} if plan.effort is not None else {}

    def _map_usage(self, usage: Any) -> dict[str, Any] | None:
        """As OpenAI's, except that Mistral's ``prompt_tokens`` leaves out the
        ``prompt_tokens_details.audio_tokens``, which are added."""
        mapped = _map_usage(usage)
        audio = _get(_get(usage, "prompt_tokens_details"), "audio_tokens")
        if mapped and isinstance(audio, int) and mapped["input_tokens"] is not None:
            mapped["input_tokens"] += audio
        return mapped

    # --- calls ---

    # The body goes out through the SDK's own request steps (_mistral_post: the fast path,
    # issue 12), without chat.complete()'s pydantic models; a body that is not plain JSON
    # (a model given natively) takes the documented call, as every body does when the fast
    # path is off (fast_path=False, or an SDK lacking one of its names: DESIGN §22).

    def _split(self, kwargs: dict[str, Any], stream: bool) -> Any:
        """The fast path's (body, options), or None for the documented call (whose
        pydantic models take the data URLs as strings)."""
        split = _mistral_post.split(kwargs, stream=stream) if self._fast else None
        if split is None:
            with_urls(kwargs)
        return split

    def _error_event(self, error: dict[str, Any]) -> ZerdaError:
        return _stream_error(error, _body_message(error) or "stream error", self.provider)

    def _call(self, kwargs: dict[str, Any]) -> Any:
        split = self._split(kwargs, stream=False)
        chat = self.client.chat
        if split is None:
            return self._retrying(lambda: chat.complete(**kwargs))
        options, provider = split[1], self.provider
        return self._retrying(
            lambda: _mistral_post.complete(chat, options, provider, self._error_event)
        )

    async def _call_async(self, kwargs: dict[str, Any]) -> Any:
        split = self._split(kwargs, stream=False)
        chat = self.async_client.chat
        if split is None:
            return await self._retrying_async(lambda: chat.complete_async(**kwargs))
        options, provider = split[1], self.provider
        return await self._retrying_async(
            lambda: _mistral_post.complete_async(chat, options, provider, self._error_event)
        )

    @contextmanager
    def _open_stream(self, kwargs: dict[str, Any]) -> Iterator[Any]:
        split = self._split(kwargs, stream=True)
        chat = self.client.chat
        if split is None:
            with self._retrying(lambda: chat.stream(**kwargs)) as events:
                yield (event.data for event in events)
            return
        options = split[1]
        with self._retrying(lambda: _mistral_post.open_stream(chat, options)) as events:
            yield _mistral_post.chunks(events, self.provider, self._error_event)

    @asynccontextmanager
    async def _open_stream_async(self, kwargs: dict[str, Any]) -> AsyncIterator[Any]:
        split = self._split(kwargs, stream=True)
        chat = self.async_client.chat
        if split is None:
            async with await self._retrying_async(lambda: chat.stream_async(**kwargs)) as events:
                yield (event.data async for event in events)
            return
        options = split[1]
        opened = await self._retrying_async(lambda: _mistral_post.open_stream_async(chat, options))
        async with opened as events:
            yield _mistral_post.chunks_async(events, self.provider, self._error_event)

    # --- batch (traits.batch == "mistral"; see _batch_mistral) ---

    def _batch_protocol(self) -> BatchProtocol:
        # Imported here: building an interface (import + client, benchmarks/bench_imports.py)
        # does not load the batch machinery (zerda.llm.batch, the JSONL writer).
        from zerda.llm.wires.mistral.batch import MistralBatch

        return MistralBatch(self)

    # --- errors ---

    def _map_error(self, exc: BaseException) -> ZerdaError | None:
        from mistralai.client import errors

        if isinstance(exc, errors.ResponseValidationError):
            return self._map_invalid_response(exc)
        if isinstance(exc, errors.MistralError) and exc.status_code < 400:
            # A 200 the SDK could not read (an HTML page, an unexpected content type).
            return malformed_response(self.provider, f"{exc.message}: {exc.body[:200]!r}")
        if isinstance(exc, errors.MistralError):
            message = _body_message(exc.body) or exc.message
            return error_from_status(exc.status_code, message, self.provider)
        if type(exc).__name__ == "ResponseNotRead":
            # httpx's, when the SDK reads the text of a 200 stream that is not SSE (an empty
            # or JSON body) to report it.
            return malformed_response(self.provider, "a stream response that is not SSE")
        if isinstance(exc, json.JSONDecodeError):  # a 200 the fast path could not read
            return malformed_response(self.provider, f"not valid JSON: {exc}")
        if isinstance(exc, errors.NoResponseError):
            return ServerError(f"no response: {exc.message}", provider=self.provider)
        return _transport_error(exc, self.provider)

    def _map_invalid_response(self, exc: Any) -> ZerdaError:
        """A 200 whose body is not a completion: an in-stream error event, or garbage."""
        try:
            body = json.loads(exc.body)
        except (TypeError, ValueError):
            body = None
        error = _error_event(body)
        if error is not None:
            return _stream_error(error, _body_message(error) or "stream error", self.provider)
        return malformed_response(self.provider, exc.message[:500])


def _error_event(body: Any) -> dict[str, Any] | None:
    """The error of an in-stream error event: ``{"error": {...}}`` or Mistral's own
    ``{"object": "error", "message", "code"}``; None for anything else."""
    if isinstance(body, dict) and isinstance(body.get("data"), dict):
        body = body["data"]  # a stream event as the SDK's decoder saw it
    if not isinstance(body, dict):
        return None
    if isinstance(body.get("error"), dict):
        error: dict[str, Any] = body["error"]
        return error
    return body if body.get("object") == "error" else None
