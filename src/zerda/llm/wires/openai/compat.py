"""The OpenAI Chat Completions shape, shared by OpenAI, Groq and Mistral.

:class:`OpenAICompatInterface` maps the unified request to the ``/chat/completions`` body
(messages, tools, tool_choice, options), the response and stream chunks back to Zerda's
result, and the Stainless SDKs' exceptions (``openai``, ``groq``) to Zerda's errors. The
provider modules subclass it and hold only what their APIs do differently.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Hashable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any, ClassVar

from zerda.llm._fastpath import PrivateName
from zerda.llm._signatures import signature_options
from zerda.llm._strict_schema import to_strict_schema
from zerda.llm.base import BaseLLMInterface, without_sdk_retries
from zerda.llm.errors import (
    ConnectionError,
    InvalidRequestError,
    ServerError,
    TimeoutError,
    ZerdaError,
    error_from_status,
    excerpt,
    malformed_response,
)
from zerda.llm.interface.batch import BatchProtocol
from zerda.llm.messages import tool_output_text
from zerda.llm.parts import DataURL, is_parts, text_of, with_urls
from zerda.llm.tools import (
    ToolCall,
    _get,
    _parse_json_arguments,
    parse_openai_tool_calls,
    to_openai_tools,
)
from zerda.llm.usage import make_usage
from zerda.llm.wires.openai import fastpath as _fastpath
from zerda.llm.wires.openai import hosted as _hosted

if TYPE_CHECKING:
    from zerda.llm._request import Request
    from zerda.llm._stream import StreamAccumulator
    from zerda.llm._structured import OutputSpec
    from zerda.llm.reasoning import Plan

Event = dict[str, Any]

# Sent as the key to servers that need none, so the SDK never reads OPENAI_API_KEY for them.
_NO_KEY = "no-key"

_STOP_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "model_length": "max_tokens",
    "content_filter": "content_filter",
    # Not a finish_reason: the native stop Zerda records for a refusal (the API says "stop"),
    # which DESIGN §3 makes content_filter.
    "refusal": "content_filter",
}


# --- request ---------------------------------------------------------------------------


def _map_tool_call(call: dict[str, Any]) -> dict[str, Any]:
    function = {"name": call["name"], "arguments": tool_output_text(call["arguments"])}
    return {"id": call["id"], "type": "function", "function": function}


def data_url(part: dict[str, Any]) -> str | DataURL:
    """An inline part as the ``data:`` URL these APIs take (kept as its head and the part's
    own base64 text: the body writer writes it without building it), or its URL."""
    if "url" in part:
        return str(part["url"])
    return DataURL(part["media_type"], part["data"])


# input_audio.format: https://platform.openai.com/docs/api-reference/chat/create
_AUDIO_FORMATS = {"audio/wav": "wav", "audio/mpeg": "mp3"}


def _map_part(part: dict[str, Any]) -> dict[str, Any]:
    """One content part (checked against the row's traits) as an OpenAI content part:
    https://platform.openai.com/docs/guides/images-vision, /pdf-files, /audio."""
    kind = part["type"]
    if kind == "text":
        return {"type": "text", "text": part["text"]}
    if kind == "image":
        return {"type": "image_url", "image_url": {"url": data_url(part)}}
    if kind == "audio":
        audio = {"data": part["data"], "format": _AUDIO_FORMATS[part["media_type"]]}
        return {"type": "input_audio", "input_audio": audio}
    if kind == "file":  # an uploaded file's id
        return {"type": "file", "file": {"file_id": part["uri"]}}
    name = part.get("name") or "document.pdf"  # the API asks a filename with file_data
    return {"type": "file", "file": {"filename": name, "file_data": data_url(part)}}


MapPart = Callable[[dict[str, Any]], dict[str, Any]]


def _map_content(content: Any, map_part: MapPart) -> Any:
    """A user message's content: a string as it is, parts mapped one by one."""
    if isinstance(content, list):
        return [map_part(p) for p in content]
    return content or ""


def _map_message(message: dict[str, Any], map_part: MapPart = _map_part) -> dict[str, Any]:
    """One unified message (system already removed, tool ids resolved, tool media moved to
    a user message by the base) in OpenAI's shape."""
    role = message["role"]
    if role == "tool":
        # No is_error field exists in this shape: the output text itself must say so.
        output = message["content"]
        if type(output) is not str:
            output = text_of(output) if is_parts(output) else tool_output_text(output)
        return {"role": "tool", "tool_call_id": message["tool_call_id"], "content": output}
    if role == "assistant" and message["tool_calls"]:
        calls = [_map_tool_call(c) for c in message["tool_calls"]]
        return {"role": "assistant", "content": message["content"], "tool_calls": calls}
    return {"role": role, "content": _map_content(message["content"], map_part)}


def _reasoning_back(
    message: dict[str, Any], mapped: dict[str, Any], provider: str, field: str
) -> dict[str, Any]:
    """An assistant turn with the reasoning text this row wrote for it sent back under
    ``field`` (kept in ``provider_data[provider]``; another row's is never sent). DeepSeek's
    thinking mode needs it on the turns that called tools, in every later request, and
    ignores it on the others (https://api-docs.deepseek.com/guides/thinking_mode#tool-calls,
    https://api-docs.deepseek.com/guides/reasoning_model)."""
    if message["role"] != "assistant":
        return mapped
    data = (message.get("provider_data") or {}).get(provider)
    text = data.get(field) if isinstance(data, dict) else None
    return {**mapped, field: text} if isinstance(text, str) and text else mapped


def _map_tools(tools: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    """OpenAI's tool shape; a tool that says ``"strict": True`` gets ``function.strict``
    and its schema made strict (https://platform.openai.com/docs/guides/function-calling#strict-mode)."""
    mapped = to_openai_tools(tools)
    if not mapped or not tools:
        return mapped
    return [_strict_tool(m) if t.get("strict") else m for t, m in zip(tools, mapped, strict=True)]


def _strict_tool(tool: dict[str, Any]) -> dict[str, Any]:
    function = tool["function"]
    parameters = to_strict_schema(function["parameters"], f"tool {function['name']!r}")
    return {**tool, "function": {**function, "parameters": parameters, "strict": True}}


def _map_response_format(output: OutputSpec) -> dict[str, Any]:
    """``response_format``: ``json_object`` for "json", else ``json_schema``, strict (the
    schema made strict) where the row says the model constrains decoding
    (https://platform.openai.com/docs/guides/structured-outputs)."""
    if output.schema is None:
        return {"response_format": {"type": "json_object"}}
    owner = f"response_format {output.name!r}"
    schema = to_strict_schema(output.schema, owner) if output.strict else output.schema
    json_schema: dict[str, Any] = {"name": output.name, "schema": schema}
    if output.description:
        json_schema["description"] = output.description
    if output.strict:
        json_schema["strict"] = True
    return {"response_format": {"type": "json_schema", "json_schema": json_schema}}


def _map_tool_choice(choice: str | dict[str, str] | None, required: str = "required") -> Any:
    """None (provider default), "auto", "none", ``required`` or a named function."""
    if isinstance(choice, dict):
        return {"type": "function", "function": {"name": choice["name"]}}
    if choice == "required":
        return required
    return choice


def _map_options(req: Request, max_tokens_field: str) -> dict[str, Any]:
    """max_tokens (under the provider's field name), temperature, top_p and stop."""
    options = {
        max_tokens_field: req.max_tokens,
        "temperature": req.temperature,
        "top_p": req.top_p,
        "stop": req.stop,
    }
    return {k: v for k, v in options.items() if v is not None}


def _map_reasoning(plan: Plan | None) -> dict[str, Any]:
    """``reasoning_effort`` (https://platform.openai.com/docs/api-reference/chat/create);
    the value comes from the model family's row in zerda.llm.reasoning.TABLE."""
    if plan is None:
        return {}
    value = plan.effort if plan.on else plan.off
    return {"reasoning_effort": value} if value is not None else {}


# --- response --------------------------------------------------------------------------


def _text_of(content: Any) -> str | None:
    """Message or delta content as text: a string, or the text of a list of content parts
    (Mistral's reasoning models send ``[{"type": "thinking"...}, {"type": "text"...}]``;
    thinking is not content)."""
    if isinstance(content, str):
        return content
    if not content and not isinstance(content, (int, float)):  # None, Mistral's UNSET
        return None
    if not isinstance(content, list):
        raise malformed_response(None, f"the content is not text: {excerpt(content)}")
    texts = [_get(p, "text") for p in content if _get(p, "type") == "text"]
    return "".join(t for t in texts if isinstance(t, str))


def _reasoning_of(message: Any) -> str | None:
    """The reasoning text of a message or a delta: ``reasoning_content`` (DeepSeek, vLLM),
    else ``reasoning`` (Groq, Ollama's /v1, OpenRouter), else the text of OpenRouter-style
    ``reasoning_details``, else Mistral's ``thinking`` content chunks."""
    for key in ("reasoning_content", "reasoning"):
        value = _get(message, key)
        if isinstance(value, str) and value:
            return value
    details = _get(message, "reasoning_details")
    if isinstance(details, list):
        texts = [_get(d, "text") for d in details]
        return "".join(t for t in texts if isinstance(t, str)) or None
    return _thinking_of(_get(message, "content"))


def _thinking_of(content: Any) -> str | None:
    """The text of Mistral's ``{"type": "thinking", "thinking": [{"type": "text"...}]}``
    content chunks (https://docs.mistral.ai/capabilities/reasoning/)."""
    if not isinstance(content, list):
        return None
    texts = []
    for part in content:
        if _get(part, "type") != "thinking":
            continue
        inner = _get(part, "thinking")
        if isinstance(inner, str):
            texts.append(inner)
        elif isinstance(inner, list):
            texts += [t for t in (_get(c, "text") for c in inner) if isinstance(t, str)]
    return "".join(texts) or None


def _refusal_of(message: Any) -> str | None:
    """The refusal text of a message or a delta (``message.refusal``, streamed as
    ``delta.refusal``): what the model says instead of answering, with ``content`` null
    (https://platform.openai.com/docs/guides/structured-outputs#refusals). DESIGN §3: a
    refusal is the result's content, with the stop reason ``content_filter``."""
    refusal = _get(message, "refusal")
    return refusal if isinstance(refusal, str) and refusal else None


def _map_tool_calls(message: Any) -> list[ToolCall]:
    """The message's tool calls; a legacy ``function_call`` (no id) when it has none, as
    older models answering ``functions=`` send."""
    calls = parse_openai_tool_calls(message)
    legacy = _get(message, "function_call")
    if calls or not legacy:
        return calls
    arguments = _parse_json_arguments(_get(legacy, "arguments"))
    return [ToolCall(None, _get(legacy, "name"), arguments)]


def _map_usage(usage: Any) -> dict[str, Any] | None:
    """DESIGN.md §12. ``prompt_tokens`` already counts the cached (and cache-written)
    tokens and ``completion_tokens`` the reasoning tokens, so both are taken as they are:
    https://platform.openai.com/docs/api-reference/chat/object#chat/object-usage"""
    if not usage:
        return None
    prompt = _get(usage, "prompt_tokens_details")
    cache_read = _get(prompt, "cached_tokens")
    if cache_read is None:
        cache_read = _get(usage, "num_cached_tokens")  # Mistral's older field
    return make_usage(
        _get(usage, "prompt_tokens"),
        _get(usage, "completion_tokens"),
        cache_read=cache_read,
        cache_write=_get(prompt, "cache_write_tokens"),
        reasoning=_get(_get(usage, "completion_tokens_details"), "reasoning_tokens"),
    )


def _map_stop_reason(native: Any) -> str:
    # OpenAI-shaped APIs say "stop" whether or not a stop string ended the output, so
    # "stop_sequence" cannot be told apart from "end_turn" here.
    return _STOP_REASONS.get(native, "other") if isinstance(native, str) else "other"


def _first_choice(raw: Any) -> Any:
    """Choice 0 (with ``n > 1`` a stream's chunks carry the other choices too)."""
    return next((c for c in _get(raw, "choices") or [] if not _get(c, "index")), None)


# --- errors ----------------------------------------------------------------------------


def _body_message(body: Any) -> str | None:
    """The human message of an error body: ``{"error": {"message"}}``, ``{"message"}``."""
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except ValueError:
            return body.strip() or None
    if not isinstance(body, dict):
        return None
    inner = body.get("error")
    if isinstance(inner, dict):
        body = inner
    message = body.get("message") or body.get("detail")
    return message if isinstance(message, str) else (json.dumps(message) if message else None)


def _transport_error(exc: BaseException, provider: str) -> ZerdaError | None:
    """httpx / httpx2 transport failures (both libraries' names), which stream iteration
    can raise outside the SDK's own wrapping."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    if "TimeoutException" in names:
        return TimeoutError(f"request timed out: {exc}", provider=provider)
    if "TransportError" in names or "NetworkError" in names:
        return ConnectionError(f"connection failed: {type(exc).__name__}: {exc}", provider=provider)
    return None


# OpenAI's error ``type``/``code`` values, for error events that carry no HTTP status.
_ERROR_CODE_STATUS = {
    "invalid_request_error": 400,
    "invalid_api_key": 401,
    "authentication_error": 401,
    "permission_error": 403,
    "model_not_found": 404,
    "not_found_error": 404,
    "rate_limit_error": 429,
    "rate_limit_exceeded": 429,
    "insufficient_quota": 429,
    "server_error": 500,
}


def _stream_error(body: Any, message: str, provider: str) -> ZerdaError:
    """An error event inside a stream (``data: {"error": {...}}``): its status when the
    body gives one (a status field, a numeric code, or a known code or type name), else a
    server error (the provider failed after accepting the call)."""
    status = body.get("status_code") if isinstance(body, dict) else None
    code = body.get("code") if isinstance(body, dict) else None
    if status is None and isinstance(code, str) and code.isdigit():
        status = int(code)
    if status is None and isinstance(body, dict):
        status = _ERROR_CODE_STATUS.get(str(code)) or _ERROR_CODE_STATUS.get(str(body.get("type")))
    if isinstance(status, int):
        return error_from_status(status, message, provider)
    return ServerError(message, provider=provider)


# --- the interface ---------------------------------------------------------------------


class OpenAICompatInterface(BaseLLMInterface):
    """generate / stream over an OpenAI-shaped chat completions API.

    Subclasses set the SDK data (``provider``, ``env_keys``, ``sdk_module``...), the
    ``max_tokens_field`` and ``tool_choice_required`` their API takes, and build clients.
    """

    client_class: ClassVar[str] = ""  # the SDK's client classes, by name
    async_client_class: ClassVar[str] = ""
    max_tokens_field: ClassVar[str] = "max_tokens"
    tool_choice_required: ClassVar[str] = "required"  # what tool_choice="required" sends
    # A chunk with a finish_reason ends the answer; [DONE] itself never reaches Zerda (the
    # SDKs consume it): https://platform.openai.com/docs/api-reference/chat-streaming
    stream_final_event = "a chunk with a finish_reason"
    # The fast path's private SDK names (DESIGN §22) and the wire they are logged under.
    fast_path_wire: ClassVar[str] = "openai"
    fast_path_names: ClassVar[tuple[PrivateName, ...]] = _fastpath.PRIVATE_NAMES

    def __init__(
        self, model: str | None = None, *, async_client: Any = None, **kwargs: Any
    ) -> None:
        super().__init__(model, **kwargs)
        self._client = without_sdk_retries(self._client)
        if async_client is not None:
            self._async_client = without_sdk_retries(async_client)
            self._client_given = True

    # --- clients ---

    def _option_names(self) -> tuple[str, frozenset[str] | None]:
        """Other options go to the SDK's client constructor: the names it takes."""
        client_class = getattr(self.sdk, self.client_class)
        where = f"{client_class.__module__.split('.')[0]}.{self.client_class}()"
        return where, signature_options(client_class.__init__)

    def _client_kwargs(self) -> dict[str, Any]:
        kwargs = super()._client_kwargs()
        if kwargs.get("api_key") is None and not self.env_keys:
            # A local server (vLLM, LM Studio) needs no key, but the SDK demands one and,
            # given none, would read OPENAI_API_KEY and send it to that server.
            kwargs["api_key"] = _NO_KEY
        return kwargs

    def _make_client(self) -> Any:
        kwargs = self._with_rate_headers(self._client_kwargs(), is_async=False)
        return getattr(self.sdk, self.client_class)(**kwargs)

    def _make_async_client(self) -> Any:
        kwargs = self._with_rate_headers(self._client_kwargs(), is_async=True)
        return getattr(self.sdk, self.async_client_class)(**kwargs)

    # --- request ---

    def _build_request(self, req: Request) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": self._map_messages(req),
            **self._map_tool_options(req),
            **_map_options(req, self.traits.max_tokens_field or self.max_tokens_field),
            **self._map_timeout(req.timeout),
            **self._native_output(req),
            **self._map_reasoning(req.reasoning),
        }
        kwargs.update(req.native)
        return kwargs

    def _map_timeout(self, timeout: float | None) -> dict[str, Any]:
        """A per-call timeout: the Stainless SDKs' ``timeout=`` request option (seconds)."""
        return {} if timeout is None else {"timeout": timeout}

    def _map_response_format(self, output: OutputSpec) -> dict[str, Any]:
        return _map_response_format(output)

    def _map_messages(self, req: Request) -> list[dict[str, Any]]:
        messages = self._map_system(req.system)
        mapped = [self._map_message(m) for m in req.messages]
        field = self.traits.reasoning_echo
        if field:
            mapped = [
                _reasoning_back(m, out, self.provider, field)
                for m, out in zip(req.messages, mapped, strict=True)
            ]
        return self._nonempty(messages + mapped)

    def _map_system(self, system: str | None) -> list[dict[str, Any]]:
        """The head of the messages list: the system message, if any."""
        return [{"role": "system", "content": system}] if system else []

    def _nonempty(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if not messages:
            # The API refuses it: "Invalid 'messages': empty array. Expected an array with
            # minimum length 1" (https://platform.openai.com/docs/api-reference/chat/create).
            raise InvalidRequestError(f"messages: {self.provider} needs at least one message")
        return messages

    # The module's function itself (no method frame per message); a provider whose
    # messages differ overrides it with a method.
    _map_message: Callable[..., dict[str, Any]] = staticmethod(_map_message)

    def _map_reasoning(self, plan: Plan | None) -> dict[str, Any]:
        return _map_reasoning(plan)

    def _kept_reasoning(self, reasoning: str | None) -> dict[str, Any] | None:
        """The provider_data keeping a turn's reasoning text, on a row whose API needs it
        back (``traits.reasoning_echo``, the message field it goes back in); else None."""
        field = self.traits.reasoning_echo
        if not field or not reasoning:
            return None
        return {self.provider: {field: reasoning}}

    def _map_tool_options(self, req: Request) -> dict[str, Any]:
        """tools (functions, then the hosted tools that go there), tool_choice and
        parallel_tool_calls: the last two only with tools, which these APIs refuse
        otherwise; and the body fields the hosted tools ask (DESIGN §18)."""
        tools = _map_tools(req.tools) or []
        fields: dict[str, Any] = {}
        if req.hosted:
            hosted_tools, fields = self._map_hosted(req.hosted)
            tools = tools + hosted_tools
        if not tools:
            return fields
        options: dict[str, Any] = {"tools": tools, **fields}
        if req.tool_choice is not None:
            required = self.traits.tool_choice_required or self.tool_choice_required
            options["tool_choice"] = _map_tool_choice(req.tool_choice, required)
        if req.parallel_tool_calls is not None:
            options["parallel_tool_calls"] = req.parallel_tool_calls
        return options

    def _map_hosted(
        self, hosted: tuple[dict[str, Any], ...]
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The checked hosted tools (``req.hosted``) as entries of ``tools`` and body fields:
        a native tool goes in ``tools`` unchanged, the others as :meth:`_map_hosted_tool`
        says."""
        tools: list[dict[str, Any]] = []
        fields: dict[str, Any] = {}
        for tool in hosted:
            if tool["type"] == "native":
                tools.append(tool["tool"])
                continue
            entries, more = self._map_hosted_tool(tool)
            tools += entries
            fields.update(more)
        return tools, fields

    def _map_hosted_tool(self, tool: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """One unified hosted tool the row runs (the core refused the others): OpenAI's web
        search on its search models, as ``web_search_options`` (wires/openai/hosted.py)."""
        hosted = self.traits.hosted.get(tool["type"])
        if hosted is not None and hosted.native == "web_search_options":
            return [], _hosted.map_web_search_options(tool)
        raise InvalidRequestError(f"{self.provider} does not run the hosted tool {tool['type']!r}")

    # --- calls ---

    # Zerda's body is already the API's JSON: the fast path posts it through the SDK's
    # low-level ``client.post`` (wires/openai/fastpath.py); with fast_path=False, or an SDK
    # lacking one of its names, ``create()`` sends it, its answer read back as plain JSON.
    chat_path: ClassVar[str] = "/chat/completions"
    # The SDK resource whose create() the body stands for: its module and class, and the
    # documented call on a client.
    create_resource: ClassVar[tuple[str, str]] = ("chat", "Completions")
    documented_call: ClassVar[tuple[str, ...]] = ("chat", "completions", "create")

    def _check_names(self, kwargs: dict[str, Any]) -> None:
        """A keyword ``create()`` does not take is refused as ``create()`` would refuse it
        (the same TypeError, turned into an invalid request naming it), before sending."""
        accepted = _fastpath.create_parameters(self.sdk, self.create_resource)
        unknown = [k for k in kwargs if k not in accepted] if accepted is not None else []
        if unknown:
            raise TypeError(f"create() got an unexpected keyword argument '{unknown[0]}'")

    def _call(self, kwargs: dict[str, Any]) -> Any:
        if not self._fast:
            create = _fastpath.documented_call(self.client, self.documented_call)
            with_urls(kwargs)  # create() takes JSON data: its data URLs as strings
            return self._retrying(lambda: _fastpath.plain(create(**kwargs)))
        self._check_names(kwargs)
        body, options = _fastpath.split_request(kwargs)
        client, stream = self.client, bool(body.get("stream"))
        sent, options = _fastpath.sent_body(self.sdk, client, body, options, is_async=False)
        stream_cls = _fastpath.stream_class(self.sdk, is_async=False)
        return self._retrying(
            lambda: _fastpath.post(client, self.chat_path, sent, options, stream, stream_cls)
        )

    async def _call_async(self, kwargs: dict[str, Any]) -> Any:
        if not self._fast:
            create = _fastpath.documented_call(self.async_client, self.documented_call)
            with_urls(kwargs)

            async def send() -> Any:
                return _fastpath.plain(await create(**kwargs))

            return await self._retrying_async(send)
        self._check_names(kwargs)
        body, options = _fastpath.split_request(kwargs)
        client, stream = self.async_client, bool(body.get("stream"))
        sent, options = _fastpath.sent_body(self.sdk, client, body, options, is_async=True)
        stream_cls = _fastpath.stream_class(self.sdk, is_async=True)
        return await self._retrying_async(
            lambda: _fastpath.post(client, self.chat_path, sent, options, stream, stream_cls)
        )

    def _stream_kwargs(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        return {**kwargs, "stream": True}

    @contextmanager
    def _open_stream(self, kwargs: dict[str, Any]) -> Iterator[Any]:
        with self._call(self._stream_kwargs(kwargs)) as stream:
            yield stream if self._fast else _fastpath.plain_chunks(stream)

    @asynccontextmanager
    async def _open_stream_async(self, kwargs: dict[str, Any]) -> AsyncIterator[Any]:
        async with await self._call_async(self._stream_kwargs(kwargs)) as stream:
            yield stream if self._fast else _fastpath.plain_chunks_async(stream)

    # --- batch (traits.batch == "openai"; see _batch_openai) ---

    def _batch_protocol(self) -> BatchProtocol:
        # Imported here: building an interface (import + client, benchmarks/bench_imports.py)
        # does not load the batch machinery (zerda.llm.batch, the JSONL writer).
        from zerda.llm.wires.openai.batch import OpenAIBatch

        return OpenAIBatch(self)

    # --- response ---

    def _map_response(self, raw: Any) -> dict[str, Any]:
        if not isinstance(_get(raw, "choices"), list):
            # The Stainless SDKs build a completion from any JSON ({} included) without
            # checking it, and hand an HTML page over as text.
            raise malformed_response(self.provider, f"no 'choices' list in {excerpt(raw)}")
        choice = _first_choice(raw)
        message = _get(choice, "message")
        calls = _map_tool_calls(message) if message is not None else []
        refusal = _refusal_of(message)
        content = (_text_of(_get(message, "content")) or "") + (refusal or "")
        native_stop = "refusal" if refusal else _get(choice, "finish_reason")
        usage = self._map_usage(_get(raw, "usage"))
        reasoning = _reasoning_of(message) if message else None
        server_calls, citations, native = self._server_side(message)
        return self._make_result(
            content or None,
            calls,
            native_stop,
            usage,
            self._provider_data(reasoning, native),
            reasoning,
            server_tool_calls=server_calls or None,
            citations=citations or None,
        )

    # An answer citing URLs lists the one web search behind them (wires/openai/hosted.py);
    # a row whose API reports its calls itself (Groq) says False.
    cited_search_call: ClassVar[bool] = True

    def _server_side(
        self, message: Any
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
        """What the provider ran and cited (DESIGN §18): the server calls, the citations
        (``message.annotations``) and the native data kept in provider_data."""
        annotations = _hosted.annotations_of(message)
        if not annotations:
            return [], [], {}
        citations = _hosted.map_citations(annotations)
        call = _hosted.search_call(citations) if self.cited_search_call else None
        return ([call] if call else []), citations, {"annotations": annotations}

    def _provider_data(
        self, reasoning: str | None, native: dict[str, Any]
    ) -> dict[str, Any] | None:
        """``provider_data[<row>]``: the reasoning text a row needs back
        (:meth:`_kept_reasoning`) and the native hosted data (annotations, executed tools)."""
        kept = self._kept_reasoning(reasoning)
        if not native:
            return kept
        return {self.provider: {**(kept or {}).get(self.provider, {}), **native}}

    def _map_usage(self, usage: Any) -> dict[str, Any] | None:
        return _map_usage(usage)

    def _map_stop_reason(self, native: Any) -> str:
        return _map_stop_reason(native)

    # --- streaming ---

    def _chunk_usage(self, chunk: Any) -> Any:
        return _get(chunk, "usage")

    def _feed(self, acc: StreamAccumulator, chunk: Any) -> list[Event]:
        usage = self._map_usage(self._chunk_usage(chunk))
        if usage:
            acc.usage = usage
        choice = _first_choice(chunk)
        if choice is None:  # the usage-only last chunk
            return []
        delta = _get(choice, "delta")
        events = acc.reasoning(_reasoning_of(delta))
        events += acc.text(_text_of(_get(delta, "content")))
        refusal = _refusal_of(delta)
        if refusal:
            acc.scratch["refused"] = True
            events += acc.text(refusal)
        for call in _get(delta, "tool_calls") or []:
            events += _feed_tool_call(acc, call)
        legacy = _get(delta, "function_call")
        if legacy:
            events += _feed_function_call(acc, legacy)
        events += self._feed_hosted(acc, delta)
        finish = _get(choice, "finish_reason")
        if finish:
            events += self._finish(acc, finish)
        return events

    def _finish(self, acc: StreamAccumulator, finish: Any) -> list[Event]:
        """The chunk with a finish_reason: the stop, the server calls the answer stands for,
        the provider_data, the tool calls closed."""
        acc.native_stop = "refusal" if acc.scratch.get("refused") else finish
        acc.finished = True
        events, native = self._end_hosted(acc)
        acc.provider_data.update(self._provider_data(acc.reasoning_text, native) or {})
        return events + acc.end_all_calls()

    def _feed_hosted(self, acc: StreamAccumulator, delta: Any) -> list[Event]:
        """A delta's annotations (each once: a stream may repeat them), as citations."""
        annotations = _hosted.annotations_of(delta)
        if not annotations:
            return []
        kept = acc.scratch.setdefault("annotations", [])
        events: list[Event] = []
        for annotation in annotations:
            if annotation in kept:
                continue
            kept.append(annotation)
            cited = _hosted.map_citation(annotation)
            events += acc.citation(cited) if cited else []
        return events

    def _end_hosted(self, acc: StreamAccumulator) -> tuple[list[Event], dict[str, Any]]:
        """At the finish: the server call the citations stand for (as generate lists it)
        and the native data for provider_data."""
        annotations = acc.scratch.get("annotations")
        if not annotations:
            return [], {}
        call = _hosted.search_call(acc.citations) if self.cited_search_call else None
        return (acc.server_call(call) if call else []), {"annotations": annotations}

    # --- errors ---

    def _map_error(self, exc: BaseException) -> ZerdaError | None:
        """The Stainless SDKs' (openai, groq) exceptions; Mistral overrides this."""
        sdk: Any = self.sdk
        if isinstance(exc, sdk.APIStatusError):
            message = _body_message(exc.body) or exc.message
            return error_from_status(exc.status_code, message, self.provider)
        if isinstance(exc, sdk.APITimeoutError):
            return TimeoutError(f"request timed out: {exc.message}", provider=self.provider)
        if isinstance(exc, sdk.APIConnectionError):
            return ConnectionError(f"connection failed: {_cause(exc)}", provider=self.provider)
        if isinstance(exc, sdk.APIResponseValidationError):
            return malformed_response(self.provider, exc.message)
        if isinstance(exc, sdk.APIError):
            return _stream_error(exc.body, exc.message, self.provider)
        if isinstance(exc, json.JSONDecodeError):
            return malformed_response(self.provider, f"not valid JSON: {exc}")
        return _transport_error(exc, self.provider)


def _cause(exc: BaseException) -> str:
    """The underlying transport error's text, which the SDK's own message hides."""
    inner = exc.__cause__ or exc.__context__
    return f"{type(inner).__name__}: {inner}" if inner else str(exc)


# --- stream assembly -------------------------------------------------------------------


def _starts_call(acc: StreamAccumulator, key: Hashable, call_id: str | None, name: Any) -> bool:
    """Whether a tool-call delta begins a new call rather than continuing the one open under
    its index. Some providers reuse index 0 for every parallel call, or send each call whole
    in one delta: a new id (or, without ids, a name after arguments have arrived, or a
    different name) on an open index is a new call, so two calls never merge."""
    open_call = acc.open_call(key)
    if open_call is None:
        return True
    if call_id:
        return call_id != open_call.id
    if not name:
        return False
    return bool(open_call.fragments) or (bool(open_call.name) and name != open_call.name)


def _feed_tool_call(acc: StreamAccumulator, delta: Any) -> list[Event]:
    key = _get(delta, "index") or 0
    call_id = _get(delta, "id") or None
    function = _get(delta, "function")
    name = _get(function, "name")
    events: list[Event] = []
    if _starts_call(acc, key, call_id, name):
        events = acc.start_call(key, call_id, name or "")
    elif name:  # a name sent after the id
        events = acc.name_call(key, name)
    arguments = _get(function, "arguments")
    if isinstance(arguments, dict):  # Mistral's SDK may hand arguments over as a dict
        arguments = json.dumps(arguments, ensure_ascii=False)
    return events + acc.add_arguments(key, arguments if isinstance(arguments, str) else None)


def _feed_function_call(acc: StreamAccumulator, delta: Any) -> list[Event]:
    """A legacy ``function_call`` delta: one id-less call, its arguments in fragments."""
    name = _get(delta, "name")
    events = acc.start_call("function_call", None, name) if name else []
    return events + acc.add_arguments("function_call", _get(delta, "arguments"))
