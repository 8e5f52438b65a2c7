"""Google Gemini through the official ``google-genai`` SDK (3.x).

History rules (https://ai.google.dev/gemini-api/docs/function-calling): the system prompt is
``systemInstruction``; roles are ``user`` and ``model``; the assistant's calls are
``functionCall`` parts and ALL results of a turn travel in ONE ``user`` content of
``functionResponse`` parts (a non-dict output wrapped as ``{"result": output}``, an error
as ``{"error": output}``), matched to their call by id when the call had one, else by
position. Gemini 3 refuses a history whose function calls lost their ``thought_signature``
(https://ai.google.dev/gemini-api/docs/thought-signatures): Zerda keeps each one, as base64
text, in ``provider_data["gemini"]["thought_signatures"]`` (aligned with ``tool_calls``) and
sends it back on the part; a model turn that carries none (another provider's, or an older
Gemini's) gets Google's documented placeholder signature on its first call.

Zerda writes the REST body (the JSON ``models.generate_content`` would send, key for key) and
posts it through google-genai's own API client: see _gemini_sdk (issue 12's fast path).
``**native`` keyword arguments are ``GenerateContentConfig`` fields (safety_settings,
thinking_config, response_mime_type...), validated and converted by the SDK over Zerda's.
google-genai's own retry neither honours Retry-After nor retries a dropped connection, so
it is left off and :meth:`GeminiInterface._retrying` implements DESIGN.md §5's.
"""

from __future__ import annotations

import base64
import binascii
import builtins
import functools
import json
import re
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from itertools import chain, islice
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from zerda.llm._fastpath import PrivateName
from zerda.llm._retry import retry_after_from_headers
from zerda.llm._signatures import signature_options
from zerda.llm.base import BaseLLMInterface, _running_loop
from zerda.llm.errors import (
    ConnectionError,
    InvalidRequestError,
    TimeoutError,
    UnknownError,
    ZerdaError,
    error_from_status,
    malformed_response,
)
from zerda.llm.parts import is_parts, text_of
from zerda.llm.registry import Media
from zerda.llm.registry.profiles import GEMINI
from zerda.llm.tools import parse_gemini_tool_calls, to_gemini_tools
from zerda.llm.usage import make_usage, plus
from zerda.llm.wires.gemini import count as _count
from zerda.llm.wires.gemini import documented as _gemini_documented
from zerda.llm.wires.gemini import fastpath as _gemini_fastpath
from zerda.llm.wires.gemini import hosted as _hosted
from zerda.llm.wires.gemini import sdk as _gemini_sdk
from zerda.llm.wires.gemini import stream as _stream

if TYPE_CHECKING:
    from zerda.llm._request import Request
    from zerda.llm._stream import StreamAccumulator
    from zerda.llm._structured import OutputSpec
    from zerda.llm.reasoning import Plan
    from zerda.llm.wires.gemini.batch import GeminiBatch

T = TypeVar("T")
Event = dict[str, Any]

_STOP_REASONS = {
    "STOP": "end_turn",
    "MAX_TOKENS": "max_tokens",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
    "IMAGE_PROHIBITED_CONTENT": "content_filter",
    "IMAGE_RECITATION": "content_filter",
}
# A response with no candidates and a prompt_feedback.block_reason: the prompt was blocked.
PROMPT_BLOCKED = "PROMPT_BLOCKED"

_TOOL_MODES = {"auto": "AUTO", "none": "NONE", "required": "ANY"}

# Google's documented stand-in for a signature the history does not have (a call another
# provider made): https://ai.google.dev/gemini-api/docs/thought-signatures
# The user turn put before a history that starts with the model (see _map_messages).
_OPENING = "(conversation continued)"
# (as sent: the URL-safe base64 of its bytes, which is the same text)
_PLACEHOLDER_SIGNATURE = "skip_thought_signature_validator"

_END = object()  # anext's default: the stream ended before its first chunk
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")  # google.protobuf.Duration, e.g. "27s"


class GeminiInterface(BaseLLMInterface):
    """Gemini through ``google.genai.Client`` (its ``.aio`` side for the async methods).

    The API key comes from ``api_key``, else ``GOOGLE_API_KEY``, else ``GEMINI_API_KEY``
    (the SDK's own order). Any other keyword option goes to ``genai.Client`` (``vertexai``,
    ``project``, ``location``, ``http_options`` — merged under Zerda's base_url/timeout).
    ``client=`` takes a ready ``genai.Client`` (its ``.aio`` serves the async methods) or a
    ``genai.client.AsyncClient`` (then a sync client is built when first needed).
    """

    provider = "gemini"
    # The last chunk of a complete stream carries the candidate's finishReason (or, for a
    # blocked prompt, promptFeedback.blockReason):
    # https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent
    stream_final_event = "a chunk with a finishReason"
    # The fast path's private SDK names (DESIGN §22), checked once by the shared base.
    fast_path_wire: ClassVar[str] = "gemini"
    fast_path_names: ClassVar[tuple[PrivateName, ...]] = _gemini_fastpath.GENERATE_NAMES
    # llm.count_tokens: countTokens, on both APIs (count.py).
    token_counter = _count.CountTokensCounter

    def __init__(self, model: str | None = None, **kwargs: Any) -> None:
        super().__init__(model, **kwargs)
        sdk: Any = self.sdk
        if self._client is not None and isinstance(self._client, sdk.client.AsyncClient):
            self._async_client, self._client = self._client, None
        elif self._client is not None:
            self._async_client = self._client.aio  # a ready Client: its .aio, kept, not closed

    # --- clients --------------------------------------------------------------------------

    def _option_names(self) -> tuple[str, frozenset[str] | None]:
        """Other options go to ``genai.Client()`` (api_key is Zerda's own)."""
        sdk: Any = self.sdk
        return "google.genai.Client()", signature_options(sdk.Client.__init__, {"api_key"})

    def _limit_scope(self) -> tuple[str, ...]:
        """The limiter's account (rate_limit=) on Vertex AI, whose quotas are per project
        and location (https://cloud.google.com/vertex-ai/generative-ai/docs/quotas): given,
        else the environment's, as google-genai reads them. The Gemini API's is its key."""
        if not self.options.get("vertexai"):
            return ()
        import os

        project = self.options.get("project") or os.environ.get("GOOGLE_CLOUD_PROJECT")
        location = self.options.get("location") or os.environ.get("GOOGLE_CLOUD_LOCATION")
        return str(location), str(project)

    def _check_key(self) -> None:
        # Vertex AI signs with Google Cloud credentials (ADC), not an API key.
        if not self.options.get("vertexai"):
            super()._check_key()

    def _http_options(self) -> Any:
        types = self.sdk.types  # type: ignore[union-attr]
        given = self.options.get("http_options") or {}
        options = given.model_dump(exclude_none=True) if hasattr(given, "model_dump") else given
        options = {**options}
        if self.base_url is not None:
            options["base_url"] = self.base_url
        if self.timeout is not None:
            options["timeout"] = int(self.timeout * 1000)  # the SDK counts milliseconds
        options["client_args"] = _with_hook(options.get("client_args"), _track_response)
        options["async_client_args"] = _with_hook(
            options.get("async_client_args"), _track_response_async
        )
        return types.HttpOptions(**options)

    def _make_client(self) -> Any:
        # Held for the interface's lifetime: a genai.Client closes its HTTP clients (the
        # .aio one's too) when garbage-collected.
        options = {k: v for k, v in self.options.items() if k != "http_options"}
        return self.sdk.Client(  # type: ignore[union-attr]
            api_key=self.api_key, http_options=self._http_options(), **options
        )

    def _make_async_client(self) -> Any:
        # A Client of its own for each event loop: its .aio's httpx client is bound to the
        # loop it runs on, and .aio.aclose() closes only that one (the sync client's
        # connections are untouched). The parent Client may be collected: its finalizer
        # closes only its sync side.
        return self._make_client().aio

    # --- request --------------------------------------------------------------------------

    def _tool_results_media(self) -> Media:
        """Media in FunctionResponse.parts are a Gemini 3 feature
        (https://ai.google.dev/gemini-api/docs/function-calling#multimodal): for an older
        Gemini model, media from tools travel in a user message after the results."""
        if GEMINI.has("no_tool_media", self.model or ""):  # the generations before 3
            return Media()
        return super()._tool_results_media()

    def _build_request(self, req: Request) -> dict[str, Any]:
        """Zerda's REST body (see _gemini_sdk), for the API the client speaks: what the model
        path, the tools' form and a few keys depend on. Off the fast path, the arguments of
        ``generate_content`` (:meth:`_documented_request`)."""
        native = dict(req.native)
        api_client = self._api_client()
        vertex = bool(api_client.vertexai)
        hosted, natives = _hosted.map_hosted(req.hosted, self.spec.traits.hosted)
        config = _map_config(req, self._native_output(req), hosted, not vertex)
        if not self._fast:
            return self._documented_request(req, native, config, natives)
        contents = _map_messages(req.messages, vertex)
        return {
            "model": self.model,
            "body": _map_body(api_client, contents, config, native, natives),
            "http_options": _with_timeout(native.get("http_options"), req.timeout),
            # google-genai 3.x's automatic continuation, on unless the caller turns it off.
            "continuation": native.get("automatic_continuation") is not False,
        }

    def _documented_request(
        self,
        req: Request,
        native: dict[str, Any],
        config: dict[str, Any],
        natives: list[dict[str, Any]],
    ) -> dict[str, Any]:
        """``generate_content``'s ``model``, ``contents`` and ``config``: Zerda's config fields
        in the SDK's forms, ``**native`` over them a field at a time (as :func:`_map_body`),
        the per-call timeout in ``http_options``. The SDK converts them for the API its
        client speaks (the contents' Vertex AI keys are the models' own names); native
        hosted tools too (``natives``: the SDK validates them here)."""
        mine = {k: v for k, v in config.items() if k not in native}
        if "tools" in mine or natives:
            mine["tools"] = json.loads(mine.get("tools") or "[]") + natives
        if "tool_config" in mine:
            mine["tool_config"] = _map_tool_config(mine["tool_config"], vertex=True)
        fields = {**mine, **native}
        http_options = _with_timeout(native.get("http_options"), req.timeout)
        if http_options is not None:
            fields["http_options"] = http_options
        on_vertex = bool(self._api_client().vertexai)
        contents = _map_messages(req.messages, vertex=True, on_vertex=on_vertex)
        return _gemini_documented.request(self.model, contents, fields)

    def _api_client(self) -> Any:
        """google-genai's API client of a client this interface has, else of the one the
        call will use (the async one inside an event loop): the request is written for the
        API it speaks (Gemini API or Vertex AI, as the client resolved it)."""
        client = self._client if self._client is not None else self._async_client
        if client is None:
            client = self.async_client if _running_loop() is not None else self.client
        return client._api_client

    def _map_response_format(self, output: OutputSpec) -> dict[str, Any]:
        """JSON output, and the caller's JSON Schema as it is: ``response_json_schema``
        takes JSON Schema (``$ref``, ``anyOf``...), unlike ``response_schema``
        (https://ai.google.dev/gemini-api/docs/structured-output)."""
        config: dict[str, Any] = {"response_mime_type": "application/json"}
        if output.schema is not None:
            config["response_json_schema"] = output.schema
        return config

    def _call(self, native: dict[str, Any]) -> Any:
        if not self._fast:
            models = self.client.models
            return self._retrying(lambda: models.generate_content(**native))
        api_client = self.client._api_client
        return self._retrying(lambda: _gemini_sdk.send(api_client, **native))

    async def _call_async(self, native: dict[str, Any]) -> Any:
        if not self._fast:
            models = self.async_client.models
            return await self._retrying_async(lambda: models.generate_content(**native))
        api_client = self.async_client._api_client
        return await self._retrying_async(lambda: _gemini_sdk.send_async(api_client, **native))

    # --- batch (Batch Mode with inline requests; see batch.py) ----------------------------

    def _batch_protocol(self) -> GeminiBatch:
        # Imported here: building an interface (import + client, benchmarks/bench_imports.py)
        # does not load the batch machinery (zerda.llm.batch, the JSONL writer).
        from zerda.llm.wires.gemini.batch import GeminiBatch

        return GeminiBatch(self)

    # --- retries (Zerda's: base.py runs the loop and decides) -----------------------------

    def _retry_after(self, exc: BaseException) -> float | None:
        return _retry_after(exc)

    # --- response -------------------------------------------------------------------------

    def _map_response(self, raw: Any) -> dict[str, Any]:
        if _is_empty(raw):
            raise _empty_error("body")
        candidate = _first_candidate(raw)
        parts = _candidate_parts(candidate)
        calls = parse_gemini_tool_calls({"candidates": [candidate] if candidate else []})
        text = _map_text(parts)
        provider_data = _map_provider_data(parts)
        server_calls: list[dict[str, Any]] = []
        citations: list[dict[str, Any]] = []
        if candidate is not None and _hosted.has_hosted(candidate, parts):
            server_calls, citations, kept = _map_server_side(candidate, parts, text)
            provider_data = _with_parts(provider_data, kept)
        return self._make_result(
            text,
            calls,
            _native_stop(raw, candidate),
            _map_usage(raw.usage_metadata),
            provider_data,
            _map_thoughts(parts),
            server_tool_calls=server_calls,
            citations=citations,
        )

    def _raw_json(self, raw: Any) -> Any:
        """The answer's JSON body (include_raw=True, DESIGN §18) from google-genai's
        response: without the fields the SDK adds (``sdkHttpResponse``,
        ``automaticFunctionCallingHistory``), bytes in the standard base64 Gemini sends. A
        fast-path stream chunk is that JSON already (stream.py): a copy of its own, which
        nothing of the result shares."""
        if isinstance(raw, dict):
            return json.loads(json.dumps(raw))
        body = super()._raw_json(raw)
        if isinstance(body, dict):
            for key in ("sdkHttpResponse", "automaticFunctionCallingHistory", "parsed"):
                body.pop(key, None)
            for candidate in body.get("candidates") or ():
                for part in ((candidate or {}).get("content") or {}).get("parts") or ():
                    _standard_base64(part)
        return body

    def _replays_hosted(self, message: dict[str, Any]) -> bool:
        """A turn that kept its parts (hosted.replay_parts sends them back); the Gemini API's
        own server-side tool parts only where the client speaks the Gemini API."""
        return _hosted.replays(message, bool(self._api_client().vertexai))

    def _map_stop_reason(self, native: Any) -> str:
        if native == PROMPT_BLOCKED:
            return "content_filter"
        name = getattr(native, "value", native)
        return _STOP_REASONS.get(name, "other") if isinstance(name, str) else "other"

    def _map_error(self, exc: BaseException) -> ZerdaError | None:
        sdk: Any = self.sdk
        if isinstance(exc, sdk.errors.APIError):
            return _map_api_error(exc, self.provider)
        if isinstance(exc, (sdk.errors.UnknownApiResponseError, json.JSONDecodeError)):
            return malformed_response(self.provider, str(exc))
        if isinstance(exc, _stream.BadChunk):  # a fast-path stream chunk's JSON
            return malformed_response(self.provider, str(exc))
        timeouts, transport = _transport_errors(timeouts_only=True), _transport_errors()
        if isinstance(exc, timeouts):
            return TimeoutError(f"request timed out: {exc}")
        if isinstance(exc, (builtins.ConnectionError, *transport)):
            return ConnectionError(f"{type(exc).__name__}: {exc}")
        if _is_validation_error(exc):
            # The request was checked before sending: this is the response not fitting the
            # SDK's models (e.g. integer enums, which only the Go SDK asks for).
            return malformed_response(
                self.provider, f"it does not fit google-genai's models: {exc}"
            )
        return None

    # --- streaming ------------------------------------------------------------------------

    @contextmanager
    def _open_stream(self, native: dict[str, Any]) -> Iterator[Iterator[Any]]:
        client = self.client

        def start() -> tuple[Iterator[Any], list[Any]]:
            # The SDK sends the request on the first next(): retried until a chunk arrives.
            chunks = (
                _gemini_sdk.send_streamed(client._api_client, **native)
                if self._fast
                else client.models.generate_content_stream(**native)
            )
            return chunks, list(islice(chunks, 1))

        with _tracking_responses() as responses:
            chunks, first = self._retrying(start)
        try:
            yield _chain(first, chunks)
        finally:
            getattr(chunks, "close", lambda: None)()
            for response in responses:
                response.close()

    @asynccontextmanager
    async def _open_stream_async(self, native: dict[str, Any]) -> AsyncIterator[AsyncIterator[Any]]:
        client = self.async_client

        async def start() -> tuple[AsyncIterator[Any], list[Any]]:
            chunks = (
                _gemini_sdk.send_streamed_async(client._api_client, **native)
                if self._fast
                else await client.models.generate_content_stream(**native)
            )
            first = await anext(chunks, _END)
            return chunks, [] if first is _END else [first]

        with _tracking_responses() as responses:
            chunks, first = await self._retrying_async(start)
        try:
            yield _chain_async(first, chunks)
        finally:
            aclose = getattr(chunks, "aclose", None)
            if aclose is not None:
                await aclose()
            # Closing the SDK's outer generator leaves its inner ones, down to the one
            # reading the HTTP response, to the event loop's finalizer: close it now.
            for response in responses:
                await response.aclose()

    def _feed(self, acc: StreamAccumulator, chunk: Any) -> list[Event]:
        """One chunk's JSON (stream.py reads it; a GenerateContentResponse of the documented
        call as its JSON first): usage, the finish reason (the chunk that has one ends the
        stream), each part's events, the hosted tools' at the end."""
        chunk = _stream.checked(chunk if isinstance(chunk, dict) else self._raw_json(chunk))
        candidate = _stream.first_candidate(chunk)
        counts = _stream.usage_counts(chunk)
        if counts is not None:
            acc.usage = _map_usage(counts)
        native = _chunk_stop(chunk, candidate)
        if native is not None:
            acc.native_stop = native
            acc.finished = True
        events: list[Event] = []
        hosted = _collector(acc)
        for part in _stream.candidate_parts(candidate):
            events += _feed_part(acc, part, hosted)
        if candidate is not None:
            hosted.candidate(candidate)
        if native is not None:
            events += _finish_hosted(acc, hosted)
        return events


# --- messages -----------------------------------------------------------------------------
#
# The request is written as the REST JSON google-genai puts on the wire
# (https://ai.google.dev/api/generate-content), key for key: where the SDK sends one of its
# models as it is (its inline data and file data, the function responses of the Gemini API,
# the function calling config of Vertex AI, the thinking config) the keys are that model's
# snake_case field names, which the API takes as well as the camelCase ones; bytes are
# URL-safe base64 (google-genai's ``_common.encode_unserializable_types``).
# tests/llm/providers/test_gemini_rest.py checks every body against the SDK's converter.


def _map_messages(
    messages: list[dict[str, Any]], vertex: bool = False, on_vertex: bool | None = None
) -> list[dict[str, Any]]:
    """Unified history -> Gemini contents: each run of tool results is one ``user`` content;
    consecutive contents of one role are merged; messages without parts are dropped. One
    pass, no copies of the caller's arguments or outputs (the body is only encoded).
    ``vertex``: the keys Vertex AI's converter writes; ``on_vertex``: the request goes to
    Vertex AI (default ``vertex``), which takes no Gemini API server-side tool parts."""
    on_vertex = vertex if on_vertex is None else on_vertex
    contents: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for message in messages:
        role = message["role"]
        if role == "tool":
            results.append(message)
            continue
        if results:
            _append(contents, "user", _map_tool_results(results, calls, vertex))
            results = []
        if role == "assistant":
            calls = message["tool_calls"]
            role, parts = "model", _map_model_parts(message, on_vertex)
        else:
            parts = _map_user_parts(message["content"])
        if not parts:
            continue
        if contents and contents[-1]["role"] == role:
            contents[-1]["parts"].extend(parts)  # our own list, built here
        else:
            contents.append({"parts": parts, "role": role})
    if results:
        _append(contents, "user", _map_tool_results(results, calls, vertex))
    if not contents:
        # Checked here, as google-genai's own check is a bare ValueError.
        raise InvalidRequestError("messages: Gemini needs at least one non-empty message")
    if contents[0]["role"] == "model":
        # "Please ensure that function call turn comes immediately after a user turn or
        # after a function response turn" (https://ai.google.dev/gemini-api/docs/function-calling):
        # a history that starts with the model (a conversation continued from another
        # provider, a summary put first) gets a user turn before it (docs/decisions.md).
        contents.insert(0, {"parts": [{"text": _OPENING}], "role": "user"})
    return contents


def _append(contents: list[dict[str, Any]], role: str, parts: list[dict[str, Any]]) -> None:
    if not parts:
        return
    if contents and contents[-1]["role"] == role:
        contents[-1]["parts"].extend(parts)  # our own list, built in _map_messages
    else:
        contents.append({"parts": parts, "role": role})


def _map_model_parts(message: dict[str, Any], vertex: bool = False) -> list[dict[str, Any]]:
    """An assistant message's text and function calls; a turn that ran server-side tools
    gets its kept parts back in their place (DESIGN §18, hosted.replay_parts)."""
    text = message["content"]
    calls = _map_call_parts(message) if message["tool_calls"] else []
    if "provider_data" in message:
        replayed = _hosted.replay_parts(message, calls, vertex)
        if replayed is not None:
            return replayed
    return [{"text": text}, *calls] if text else calls


def _map_user_parts(content: str | list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    if isinstance(content, list):
        return [_map_part(p) for p in content if p["type"] != "text" or p["text"]]
    return [{"text": content}] if content else []


def _map_part(
    part: dict[str, Any], inline: str = "inlineData", file: str = "fileData"
) -> dict[str, Any]:
    """One content part: text, ``inlineData`` (the part's own base64 text) or ``fileData``
    for a URL or a gs:// / Files API URI
    (https://ai.google.dev/gemini-api/docs/file-input-methods); ``inline`` / ``file``: the
    keys they go under (function responses differ)."""
    if part["type"] == "text":
        return {"text": part["text"]}
    if "data" in part:
        # Blob.data is a protobuf ``bytes`` field, whose JSON form takes standard or URL-safe
        # base64 (https://protobuf.dev/programming-guides/json/: "Either standard or
        # URL-safe base64 encoding with/without paddings are accepted"; the REST examples
        # send `base64` output, https://ai.google.dev/gemini-api/docs/image-understanding).
        # google-genai writes the URL-safe form; the checked standard text goes as it is,
        # with no copy of an 11 MiB image text made to swap two characters.
        return {inline: {"data": part["data"], "mime_type": part["media_type"]}}
    uri = part.get("url") or part["uri"]
    if not part.get("media_type"):
        raise InvalidRequestError(
            f"Gemini needs the media_type of {uri!r} (file_data.mime_type): add 'media_type'",
            capability=True,  # another row may take it: a fallback moves on
        )
    return {file: {"file_uri": uri, "mime_type": part["media_type"]}}


def _map_call_parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    calls = message["tool_calls"]
    if not calls:
        return []
    provider_data = message.get("provider_data")
    signatures: list[str | None] = (
        _signatures(provider_data, len(calls)) if provider_data else [None] * len(calls)
    )
    if not any(signatures):
        signatures[0] = _PLACEHOLDER_SIGNATURE  # Gemini 3 needs one on the turn's first call
    parts = []
    for call, signature in zip(calls, signatures, strict=True):
        function_call: dict[str, Any] = {"args": call["arguments"], "name": call["name"]}
        if call["id"]:
            function_call["id"] = call["id"]
        part: dict[str, Any] = {"functionCall": function_call}
        if signature:
            part["thoughtSignature"] = signature
        parts.append(part)
    return parts


def _signatures(provider_data: Any, count: int) -> list[str | None]:
    """The calls' thought signatures as the URL-safe base64 sent (None where a call has
    none)."""
    gemini = (provider_data or {}).get("gemini") if isinstance(provider_data, dict) else None
    texts = gemini.get("thought_signatures") if isinstance(gemini, dict) else None
    texts = list(texts) if isinstance(texts, list) else []
    texts = (texts + [None] * count)[:count]
    return [_wire_signature(j, t) for j, t in enumerate(texts)]


def _wire_signature(j: int, text: Any) -> str | None:
    raw = _decode_signature(j, text)
    return base64.urlsafe_b64encode(raw).decode("ascii") if raw else None


def _decode_signature(j: int, text: Any) -> bytes | None:
    if not text:
        return None
    if not isinstance(text, str):
        raise InvalidRequestError(f"provider_data gemini thought_signatures[{j}] must be text")
    try:
        # Standard or URL-safe alphabet, padding optional.
        return base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        raise InvalidRequestError(
            f"provider_data gemini thought_signatures[{j}] is not base64: {text[:20]!r}"
        ) from None


def _map_tool_results(
    results: list[dict[str, Any]], calls: list[dict[str, Any]], vertex: bool = False
) -> list[dict[str, Any]]:
    """One turn's results as function_response parts, in the order of their calls (the base
    class paired each result with its call: by id, else by position)."""
    if len(results) == 1:
        return [_map_tool_result(results[0], vertex)]
    order = {c["id"]: i for i, c in enumerate(calls) if c["id"]}
    ranked = sorted(
        enumerate(results), key=lambda item: order.get(item[1]["tool_call_id"], item[0])
    )
    return [_map_tool_result(result, vertex) for _, result in ranked]


def _map_tool_result(message: dict[str, Any], vertex: bool = False) -> dict[str, Any]:
    output = message["content"]
    media: list[dict[str, Any]] = []
    if is_parts(output):
        # Media travel as FunctionResponse.parts, the text as the response
        # (https://ai.google.dev/gemini-api/docs/function-calling#multimodal). The Gemini
        # API's converter sends the FunctionResponse model as it is (snake_case parts),
        # Vertex AI's renames the parts' fields.
        keys = ("inlineData", "fileData") if vertex else ("inline_data", "file_data")
        media = [_map_part(p, *keys) for p in output if p["type"] not in ("text", "cache_point")]
        text = text_of(output)
        output = text if text or not media else None
    if message["is_error"]:
        response = {"error": output}
    elif isinstance(output, dict):
        response = output
    else:
        response = {} if output is None else {"result": output}
    function_response: dict[str, Any] = {"name": message["name"], "response": response}
    if message["tool_call_id"]:
        function_response["id"] = message["tool_call_id"]
    if media:
        function_response["parts"] = media
    return {"functionResponse": function_response}


# --- tools, tool_choice, options -------------------------------------------------------


def _map_tools(tools: list[dict[str, Any]] | None) -> str | None:
    """Zerda's adapted declarations, as the JSON key of the SDK-converted tools
    (:func:`_gemini_sdk.rest_tools` caches them per tool set)."""
    if not tools:
        return None
    # The schema adaptation costs ~60 µs a tool and the same tools come back every turn.
    return _adapted_tools(json.dumps(tools, sort_keys=True))


@functools.lru_cache(maxsize=64)
def _adapted_tools(tools_json: str) -> str:
    return json.dumps(to_gemini_tools(json.loads(tools_json)))


def _map_tool_config(value: tuple[Any, bool], vertex: bool = False) -> dict[str, Any]:
    """``toolConfig``: the tool_choice's function calling config and, where built-in tools
    are combined with functions, ``includeServerSideToolInvocations`` (see _map_config)."""
    choice, combined = value
    config: dict[str, Any] = _map_tool_choice(choice, vertex) or {}
    if combined:
        config["includeServerSideToolInvocations"] = True
    return config


def _map_tool_choice(choice: str | dict[str, str] | None, vertex: bool = False) -> Any:
    """DESIGN.md §6: mode AUTO / NONE / ANY; a named tool is ANY + allowed function names
    (the Gemini API's converter renames them; Vertex AI's sends the model as it is)."""
    if choice is None:
        return None
    if isinstance(choice, dict):
        names = "allowed_function_names" if vertex else "allowedFunctionNames"
        config: dict[str, Any] = {"mode": "ANY", names: [choice["name"]]}
    else:
        config = {"mode": _TOOL_MODES[choice]}
    return {"functionCallingConfig": config}


def _map_options(req: Request) -> dict[str, Any]:
    # parallel_tool_calls: Gemini has no such switch; it is ignored. GenerateContentConfig
    # holds temperature and top_p as floats (the SDK sends 1 as 1.0).
    options = {
        "max_output_tokens": req.max_tokens,
        "temperature": _float(req.temperature),
        "top_p": _float(req.top_p),
        "stop_sequences": list(req.stop) if req.stop else None,
    }
    return {k: v for k, v in options.items() if v is not None}


def _float(value: float | None) -> float | None:
    return None if value is None else float(value)


def _map_reasoning(plan: Plan | None) -> dict[str, Any] | None:
    """``thinking_config``: ``thinking_level`` (Gemini 3) or ``thinking_budget`` (2.5, or a
    budget the caller gave), with ``include_thoughts`` so the thought parts come back:
    https://ai.google.dev/gemini-api/docs/thinking (google-genai sends the ThinkingConfig
    model as it is: snake_case keys, the level in capitals)."""
    if plan is None:
        return None
    if not plan.on:
        return {"thinking_budget": plan.off}
    config: dict[str, Any] = {"include_thoughts": plan.summary}
    if plan.budget is not None:
        config["thinking_budget"] = plan.budget
    elif plan.effort is not None:
        config["thinking_level"] = str(plan.effort).upper()
    return config


def _map_config(
    req: Request,
    output: dict[str, Any] | None = None,
    hosted: list[dict[str, Any]] | None = None,
    combines: bool = False,
) -> dict[str, Any]:
    """Zerda's own GenerateContentConfig fields, by their SDK names (``output``: the
    structured-output ones; ``hosted``: the hosted tools as google-genai ``Tool`` dicts;
    ``combines``: the API takes ``include_server_side_tool_invocations``); ``**native``
    goes through the SDK (see _map_body). ``tool_config`` holds (tool_choice, whether
    built-in tools are combined with functions), mapped by :func:`_map_tool_config`."""
    config: dict[str, Any] = {}
    if req.system:
        config["system_instruction"] = req.system
    tools = _map_tools(req.tools)
    if hosted:
        tools = json.dumps([*json.loads(tools or "[]"), *hosted])
    if tools:
        config["tools"] = tools
    if req.tools:
        # Gemini 3 combines built-in tools with function calling when the request sets
        # includeServerSideToolInvocations ("set a flag to enable combination support",
        # https://ai.google.dev/gemini-api/docs/tool-combination); a field the Gemini API
        # alone has ("not supported in Vertex AI", google-genai's ToolConfig).
        combined = combines and bool(req.hosted)
        if req.tool_choice is not None or combined:
            config["tool_config"] = (req.tool_choice, combined)
    config.update(_map_options(req))
    config.update(output or {})
    thinking = _map_reasoning(req.reasoning)
    if thinking:
        config["thinking_config"] = thinking
    return config


# Where each of Zerda's own fields goes in the body: top level, or generationConfig.
_GENERATION_KEYS = {
    "max_output_tokens": "maxOutputTokens",
    "temperature": "temperature",
    "top_p": "topP",
    "stop_sequences": "stopSequences",
    "response_mime_type": "responseMimeType",
    "response_json_schema": "responseJsonSchema",
    "thinking_config": "thinkingConfig",
}


def _map_body(
    api_client: Any,
    contents: list[dict[str, Any]],
    config: dict[str, Any],
    native: dict[str, Any],
    natives: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The GenerateContentRequest: the contents, Zerda's fields, then the ``**native`` ones
    (GenerateContentConfig fields, converted by the SDK) over them, a field at a time as
    before (a native ``temperature=None`` removes Zerda's); ``natives``: native hosted
    tools, put in ``tools`` as they are."""
    vertex = bool(api_client.vertexai)
    mine = {k: v for k, v in config.items() if k not in native}
    body: dict[str, Any] = {"contents": contents}
    if "system_instruction" in mine:
        body["systemInstruction"] = {
            "parts": [{"text": mine["system_instruction"]}],
            "role": "user",
        }
    if "tools" in mine:
        body["tools"] = _gemini_sdk.rest_tools(api_client, mine["tools"])
    if natives and "tools" not in native:
        body["tools"] = [*body.get("tools", ()), *natives]  # not the cached list itself
    if "tool_config" in mine:
        body["toolConfig"] = _map_tool_config(mine["tool_config"], vertex)
    generation = {_GENERATION_KEYS[k]: v for k, v in mine.items() if k in _GENERATION_KEYS}
    if native:
        top, native_generation = _gemini_sdk.convert_config(api_client, native)
        body.update(top)
        generation.update(native_generation)
    body["generationConfig"] = generation  # google-genai sends it even when empty
    return body


def _with_timeout(http_options: Any, timeout: float | None) -> Any:
    """A per-call timeout: google-genai takes per-request ``http_options``
    (https://googleapis.github.io/python-genai/#per-request-http-options), in milliseconds;
    merged over any ``http_options`` the caller gave."""
    if timeout is None:
        return http_options
    given = http_options or {}
    options = given.model_dump(exclude_none=True) if hasattr(given, "model_dump") else dict(given)
    return {**options, "timeout": int(timeout * 1000)}


# --- response pieces ----------------------------------------------------------------------


def _is_empty(raw: Any) -> bool:
    """No candidates, no prompt feedback and no usage: nothing was answered (an empty body).
    ``{"candidates": [], "usageMetadata": ...}`` is an answer, if an empty one."""
    return not raw.candidates and raw.prompt_feedback is None and raw.usage_metadata is None


def _empty_error(what: str) -> Exception:
    """google-genai reads an empty 200 body (or stream) as {} where it refuses any other
    non-JSON body: its own error for that, which _map_error makes a ServerError that is
    not retried, chained to it."""
    from google.genai import errors

    return errors.UnknownApiResponseError(
        f"the {what} is empty (no candidates, prompt feedback or usage)"
    )


def _first_candidate(raw: Any) -> Any:
    candidates = raw.candidates or []
    return candidates[0] if candidates else None


def _candidate_parts(candidate: Any) -> list[Any]:
    content = candidate.content if candidate is not None else None
    return list(content.parts or []) if content is not None else []


def _map_text(parts: list[Any]) -> str | None:
    # Parts with thought=true are the model's reasoning summary, not its answer.
    return "".join(p.text for p in parts if p.text and not p.thought) or None


def _native_stop(raw: Any, candidate: Any) -> Any:
    if candidate is not None:
        return candidate.finish_reason
    feedback = getattr(raw, "prompt_feedback", None)
    if feedback is not None and feedback.block_reason:
        return PROMPT_BLOCKED
    return None


def _encode_signature(signature: bytes | None) -> str | None:
    return base64.b64encode(signature).decode("ascii") if signature else None


def _map_provider_data(parts: list[Any]) -> dict[str, Any] | None:
    """The function-call parts' thought signatures, aligned with tool_calls; None if none."""
    signatures = [
        _encode_signature(p.thought_signature) for p in parts if p.function_call is not None
    ]
    return {"gemini": {"thought_signatures": signatures}} if any(signatures) else None


def _map_thoughts(parts: list[Any]) -> str | None:
    """The text of the parts with thought=true: the model's reasoning summary."""
    return "".join(p.text for p in parts if p.text and p.thought) or None


def _map_server_side(
    candidate: Any, parts: list[Any], text: str | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]] | None]:
    """(server_tool_calls, citations, the parts kept for the history) of a whole answer,
    read as a stream reads it (hosted.Collector)."""
    collector = _hosted.Collector()
    calls = [call for part in parts for call in collector.part(part)]
    collector.candidate(candidate)
    more, citations = collector.finish(text)
    return calls + more, citations, collector.provider_parts()


def _standard_base64(part: dict[str, Any]) -> None:
    """A dumped part's bytes (google-genai writes URL-safe base64) as the API's standard
    base64: the signature and inline data."""
    blob = part.get("inlineData")
    for holder, key in ((part, "thoughtSignature"), (blob, "data")):
        value = holder.get(key) if isinstance(holder, dict) else None
        if isinstance(value, str) and isinstance(holder, dict):
            holder[key] = value.replace("-", "+").replace("_", "/")


def _with_parts(
    provider_data: dict[str, Any] | None, parts: list[dict[str, Any]] | None
) -> dict[str, Any] | None:
    """provider_data with the answer's kept parts under ``gemini.parts``."""
    if parts is None:
        return provider_data
    gemini = dict((provider_data or {}).get("gemini") or {})
    gemini["parts"] = parts
    return {**(provider_data or {}), "gemini": gemini}


def _map_usage(usage: Any) -> dict[str, Any] | None:
    """DESIGN.md §12: ``promptTokenCount`` already counts the cached tokens and
    ``toolUsePromptTokenCount`` is input on top of it; ``candidatesTokenCount`` leaves out
    the ``thoughtsTokenCount`` Google bills as output, so output is the two added
    (https://ai.google.dev/api/generate-content#UsageMetadata). Gemini leaves zero counts
    out of its JSON: in a usage that has a total, a missing addend is 0."""
    if usage is None:
        return None
    counts = usage if isinstance(usage, dict) else _usage_counts(usage)
    zero = 0 if counts["totalTokenCount"] is not None else None
    prompt, tool_use = counts["promptTokenCount"], counts["toolUsePromptTokenCount"]
    candidates, thoughts = counts["candidatesTokenCount"], counts["thoughtsTokenCount"]
    return make_usage(
        plus(prompt, tool_use, zero),
        plus(candidates, thoughts, zero),
        cache_read=counts["cachedContentTokenCount"],
        reasoning=thoughts,
    )


def _usage_counts(usage: Any) -> dict[str, Any]:
    """google-genai's usage metadata as the counts stream.usage_counts reads from JSON."""
    return {
        "totalTokenCount": usage.total_token_count,
        "promptTokenCount": usage.prompt_token_count,
        "toolUsePromptTokenCount": usage.tool_use_prompt_token_count,
        "candidatesTokenCount": usage.candidates_token_count,
        "thoughtsTokenCount": usage.thoughts_token_count,
        "cachedContentTokenCount": usage.cached_content_token_count,
    }


# --- errors -------------------------------------------------------------------------------


def _map_api_error(exc: Any, provider: str) -> ZerdaError:
    code = exc.code if isinstance(exc.code, int) else None
    message = exc.message or str(exc)
    if exc.status:
        message = f"{exc.status}: {message}"
    if code is None:
        return UnknownError(message, provider=provider)
    return error_from_status(code, message, provider)


def _transport_errors(timeouts_only: bool = False) -> tuple[type[BaseException], ...]:
    """httpx's (and its fork httpx2's, google-genai's default) timeout or transport errors,
    from whichever of the two is loaded."""
    name = "TimeoutException" if timeouts_only else "TransportError"
    found = []
    for module in ("httpx", "httpx2"):
        loaded = sys.modules.get(module)
        if loaded is not None and hasattr(loaded, name):
            found.append(getattr(loaded, name))
    return tuple(found)


def _is_validation_error(exc: BaseException) -> bool:
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and isinstance(exc, pydantic.ValidationError)


def _response_headers(exc: BaseException) -> Any:
    response = getattr(exc, "response", None)
    return getattr(response, "headers", None)


def _retry_after(exc: BaseException) -> float | None:
    """Seconds from the Retry-After headers, else from the error's ``google.rpc.RetryInfo``
    detail (``"retryDelay": "27s"``), which Gemini's 429s carry."""
    after = retry_after_from_headers(_response_headers(exc))
    return after if after is not None else _retry_info_delay(getattr(exc, "details", None))


def _retry_info_delay(details: Any) -> float | None:
    error = details.get("error") if isinstance(details, dict) else None
    items = error.get("details") if isinstance(error, dict) else None
    for item in items if isinstance(items, list) else []:
        delay = item.get("retryDelay") if isinstance(item, dict) else None
        match = _DURATION.match(delay) if isinstance(delay, str) else None
        if match:
            return float(match.group(1))
    return None


# --- stream pieces ------------------------------------------------------------------------

# The HTTP responses opened by the stream being started in this context (thread or task);
# None outside _tracking_responses. Filled by the SDK's httpx client through an event hook,
# because google-genai hands out chunks, never the response they come from.
_STREAM_RESPONSES: ContextVar[list[Any] | None] = ContextVar("zerda_gemini_responses", default=None)


@contextmanager
def _tracking_responses() -> Iterator[list[Any]]:
    responses: list[Any] = []
    token = _STREAM_RESPONSES.set(responses)
    try:
        yield responses
    finally:
        _STREAM_RESPONSES.reset(token)


def _track_response(response: Any) -> None:
    responses = _STREAM_RESPONSES.get()
    if responses is not None:
        responses.append(response)


async def _track_response_async(response: Any) -> None:
    _track_response(response)


def _with_hook(client_args: Any, hook: Callable[[Any], Any]) -> dict[str, Any]:
    """httpx client arguments with ``hook`` added to the response event hooks."""
    args = dict(client_args or {})
    hooks = dict(args.get("event_hooks") or {})
    hooks["response"] = [*hooks.get("response", []), hook]
    args["event_hooks"] = hooks
    return args


def _chain(first: list[Any], rest: Iterator[Any]) -> Iterator[Any]:
    """The chunks, then an error if none of them held anything (an empty stream)."""
    answered = False
    for chunk in chain(first, rest):
        answered = answered or not _chunk_empty(chunk)
        yield chunk
    if not answered:
        raise _empty_error("stream")


async def _chain_async(first: list[Any], rest: AsyncIterator[Any]) -> AsyncIterator[Any]:
    answered = False
    for chunk in first:
        answered = answered or not _chunk_empty(chunk)
        yield chunk
    async for chunk in rest:
        answered = answered or not _chunk_empty(chunk)
        yield chunk
    if not answered:
        raise _empty_error("stream")


def _chunk_empty(chunk: Any) -> bool:
    """A chunk that answers nothing: the fast path's JSON, the documented call's object."""
    return _stream.is_empty(chunk) if isinstance(chunk, dict) else _is_empty(chunk)


def _chunk_stop(chunk: dict[str, Any], candidate: dict[str, Any] | None) -> str | None:
    """A chunk's native stop, as :func:`_native_stop` reads a whole answer."""
    if candidate is not None:
        return _stream.finish_reason(candidate)
    return PROMPT_BLOCKED if _stream.block_reason(chunk) else None


def _feed_part(
    acc: StreamAccumulator, part: dict[str, Any], hosted: _hosted.Collector
) -> list[Event]:
    """One part's events: a function call, reasoning or answer text; then what the
    part completes of the hosted tools' calls (hosted.Collector)."""
    call = _stream.function_call(part)
    text = part.get("text")
    if call is not None:
        events = _feed_call(acc, call, _stream.signature(part))
    elif text and part.get("thought"):
        events = acc.reasoning(text)
    else:
        events = acc.text(text)
    for server_call in hosted.part(part):
        events += acc.server_call(server_call)
    return events


def _feed_call(acc: StreamAccumulator, call: dict[str, Any], signature: str | None) -> list[Event]:
    """A whole function call (Gemini never splits one) and its thought signature, kept
    aligned with ``acc.calls``; provider_data appears only once a call has a signature."""
    args = call.get("args")
    events = acc.whole_call(call.get("id") or None, call["name"], dict(args) if args else {})
    gemini = acc.provider_data.get("gemini")
    if signature is None and gemini is None:
        return events
    if gemini is None:
        gemini = acc.provider_data["gemini"] = {"thought_signatures": []}
    signatures: list[str | None] = gemini["thought_signatures"]
    signatures.extend([None] * (len(acc.calls) - 1 - len(signatures)))
    signatures.append(signature)
    return events


def _collector(acc: StreamAccumulator) -> _hosted.Collector:
    """The stream's server-side tool parts and grounding, read as generate reads them."""
    collector = acc.scratch.get("gemini")
    if collector is None:
        collector = acc.scratch["gemini"] = _hosted.Collector()
    return collector


def _finish_hosted(acc: StreamAccumulator, hosted: _hosted.Collector) -> list[Event]:
    """At the chunk with the finish reason (where Gemini puts the grounding metadata, its
    offsets over the whole text): the calls still open, the citations, the kept parts."""
    calls, citations = hosted.finish("".join(acc.text_parts) or None)
    events = [event for call in calls for event in acc.server_call(call)]
    events += [event for cited in citations for event in acc.citation(cited)]
    parts = hosted.provider_parts()
    if parts is not None:
        acc.provider_data.setdefault("gemini", {})["parts"] = parts
    return events


__all__ = ["PROMPT_BLOCKED", "GeminiInterface"]
