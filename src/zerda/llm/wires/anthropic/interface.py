"""Anthropic Messages API through the official ``anthropic`` SDK (0.88 and later).

History rules the API enforces (https://docs.anthropic.com/en/api/messages): the system
prompt is a top-level ``system`` parameter; roles strictly alternate user/assistant, so
consecutive messages of one role are merged; all tool results answering one assistant turn
travel in ONE user message of ``tool_result`` blocks, before any user text; text blocks
must be non-empty; tool-use ids must match ``^[a-zA-Z0-9_-]+$``. Extended thinking with
tools needs the assistant turn's thinking blocks (with their signatures) sent back
unchanged before its ``tool_use`` blocks: Zerda keeps them in
``provider_data["anthropic"]["thinking"]``, never in ``content``. A turn that used a server
tool (DESIGN §18: web search, web fetch, code execution, MCP...; server_tools.py) keeps all
its blocks in ``provider_data["anthropic"]["content"]`` and goes back as exactly those.
"""

from __future__ import annotations

import ast
import base64
import contextlib
import json
import sys
from collections.abc import AsyncIterator, Callable
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, ClassVar

from zerda.llm._fastpath import PrivateName
from zerda.llm._signatures import signature_options
from zerda.llm._strict_schema import to_strict_schema
from zerda.llm._traits import hosted_for
from zerda.llm.base import BaseLLMInterface, without_sdk_retries
from zerda.llm.errors import (
    ConnectionError,
    InvalidRequestError,
    TimeoutError,
    UnknownError,
    ZerdaError,
    error_class_for_status,
    error_from_status,
    excerpt,
    malformed_response,
)
from zerda.llm.interface.batch import BatchProtocol
from zerda.llm.messages import tool_output_text
from zerda.llm.parts import is_parts
from zerda.llm.tools import _get, parse_anthropic_tool_calls, to_anthropic_tools
from zerda.llm.usage import make_usage, plus
from zerda.llm.wires.anthropic import count as _count
from zerda.llm.wires.anthropic import fastpath as _anthropic_post
from zerda.llm.wires.anthropic import long_answers as _long
from zerda.llm.wires.anthropic import server_tools as _server
from zerda.llm.wires.anthropic import stream_blocks as _blocks
from zerda.llm.wires.anthropic.errors import ERROR_TYPE_STATUS

if TYPE_CHECKING:
    from zerda.llm._request import Request
    from zerda.llm._stream import StreamAccumulator
    from zerda.llm._structured import OutputSpec
    from zerda.llm.reasoning import Plan

DEFAULT_MAX_TOKENS = 4096

_STOP_REASONS = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "content_filter",
}

_THINKING_TYPES = ("thinking", "redacted_thinking")


class AnthropicInterface(BaseLLMInterface):
    """Claude through ``anthropic.Anthropic`` / ``anthropic.AsyncAnthropic``.

    Options beyond the common ones: ``default_max_tokens`` (the ``max_tokens`` sent when a
    call gives none; the API requires one); any other keyword option is passed to the SDK
    client's constructor (``default_headers``, ``http_client``...). ``client=`` takes an
    ``Anthropic`` or an ``AsyncAnthropic``; the other kind is built when first needed.
    """

    provider = "anthropic"
    # The SDK's client classes, by name: AnthropicBedrock / AnthropicVertex subclass this.
    client_class: ClassVar[str] = "Anthropic"
    async_client_class: ClassVar[str] = "AsyncAnthropic"
    # https://docs.anthropic.com/en/docs/build-with-claude/streaming#event-types
    stream_final_event = "message_stop"
    # The fast path's private SDK names (DESIGN §22), checked once by the shared base.
    fast_path_wire: ClassVar[str] = "anthropic"
    fast_path_names: ClassVar[tuple[PrivateName, ...]] = _anthropic_post.PRIVATE_NAMES
    # llm.count_tokens: POST /v1/messages/count_tokens (count.py).
    token_counter = _count.MessagesCounter
    # The hosted tools (DESIGN §18) this platform takes only with their beta header: web
    # fetch ("web fetch is a beta tool, so the request also needs the web-fetch-2025-09-10
    # beta header", https://github.com/anthropics/anthropic-sdk-go/issues/235) and code
    # execution (code-execution-2025-08-25, https://docs.claude.com/en/docs/agents-and-tools/tool-use/code-execution-tool).
    hosted_betas: ClassVar[frozenset[str]] = frozenset({"web_fetch", "code_execution"})

    def __init__(self, model: str | None = None, **kwargs: Any) -> None:
        super().__init__(model, **kwargs)
        self.default_max_tokens = int(self.options.pop("default_max_tokens", DEFAULT_MAX_TOKENS))
        if isinstance(self._client, getattr(self.sdk, self.async_client_class)):
            self._async_client, self._client = self._client, None
        # A ready client's own retries are off: Zerda retries every provider (_retrying).
        self._client = without_sdk_retries(self._client)
        self._async_client = without_sdk_retries(self._async_client)

    def _option_names(self) -> tuple[str, frozenset[str] | None]:
        """default_max_tokens is Zerda's; other options go to the SDK's client class."""
        accepted = signature_options(getattr(self.sdk, self.client_class).__init__)
        return f"anthropic.{self.client_class}()", None if accepted is None else accepted | {
            "default_max_tokens"
        }

    # --- clients --------------------------------------------------------------------------

    def _make_client(self) -> Any:
        kwargs = self._with_rate_headers(self._client_kwargs(), is_async=False)
        return getattr(self.sdk, self.client_class)(**kwargs)

    def _make_async_client(self) -> Any:
        kwargs = self._with_rate_headers(self._client_kwargs(), is_async=True)
        return getattr(self.sdk, self.async_client_class)(**kwargs)

    # --- request --------------------------------------------------------------------------

    def _build_request(self, req: Request) -> dict[str, Any]:
        messages, cached = _map_turns(req.messages)
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages}
        if req.system:
            kwargs["system"] = _map_system(req.system_parts) if req.system_parts else req.system
        tools = _map_tools(req.tools)
        hosted = self._map_hosted(req) if req.hosted or req.server_history else None
        if hosted:
            tools = [*(tools or []), *hosted[0]]
        if tools:
            kwargs["tools"] = _cache_last(tools) if req.cache_tools else tools
        _check_cache_points(kwargs, cached)
        tool_choice = _map_tool_choice(req.tool_choice, req.parallel_tool_calls, bool(tools))
        if tool_choice:
            kwargs["tool_choice"] = tool_choice
        kwargs.update(_map_options(req, self.default_max_tokens))
        if hosted:
            _with_hosted_fields(kwargs, hosted[1], hosted[2])
        kwargs.update(_map_reasoning(req.reasoning))
        if req.timeout is not None:  # the SDK's per-request option, in seconds
            kwargs["timeout"] = req.timeout
        output = self._native_output(req)
        if output:  # beside any other output_config field (effort)
            kwargs["output_config"] = {**kwargs.get("output_config", {}), **output}
        return _with_native(kwargs, req.native)

    def _map_hosted(
        self, req: Request
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
        """The hosted tools (DESIGN §18): tools entries (after the functions), MCP servers
        and the betas they need (server_tools.py), in the row's native versions; and the
        betas of the server tools whose blocks the history sends back (a beta block in a
        request needs its beta as a tool does)."""
        traits = hosted_for(self.spec.traits.hosted, self.model)
        tools, servers, betas = _server.map_hosted(req.hosted, traits, self.hosted_betas)
        if req.server_history:
            kinds = _server.replayed_kinds(req.messages, self._replays_hosted)
            betas += _server.betas_of(kinds, traits, self.hosted_betas)
        return tools, servers, list(dict.fromkeys(betas))

    def _replays_hosted(self, message: dict[str, Any]) -> bool:
        """Whether the turn's native blocks go back as they are: they are kept
        (``provider_data["anthropic"]["content"]``) and this row runs every kind of server
        tool the turn used; otherwise its calls go back as text (DESIGN §18)."""
        data = (message.get("provider_data") or {}).get("anthropic")
        if not isinstance(data, dict) or not isinstance(data.get("content"), list):
            return False
        runs = set(self.spec.traits.hosted)
        if runs:  # tool search and Anthropic's other server tools ride along on such a row
            runs |= {"tool_search", "other"}
        return all(c.get("type") in runs for c in message["server_tool_calls"])

    def _raw_json(self, raw: Any) -> Any:
        """The body as JSON (include_raw=True), as the base reads it; a long answer (read
        from its stream, long_answers.py) is the events it was read from."""
        read = super()._raw_json  # not in the comprehension: its own scope has no super()
        if isinstance(raw, _long.Streamed):
            return [read(chunk) for chunk in raw.chunks]
        return read(raw)

    def _map_response_format(self, output: OutputSpec) -> dict[str, Any]:
        """``output_config.format``: a JSON schema with closed objects, without the
        constraints Claude does not support
        (https://docs.claude.com/en/docs/build-with-claude/structured-outputs)."""
        owner = f"response_format {output.name!r}"
        schema = to_strict_schema(output.answer_schema, owner, dialect="anthropic")
        return {"format": {"type": "json_schema", "schema": schema}}

    # On the fast path the body goes out through the SDK's documented low-level
    # ``client.post`` (issue 12): what messages.create() sends, without its copy of the whole
    # body. Off it, messages.create() itself (its stream=True for streams), after the same
    # check of the argument names (the same error, nothing sent). An answer too long for a
    # non-streaming call is streamed and assembled (long_answers.py), each attempt whole.
    def _call(self, kwargs: dict[str, Any]) -> Any:
        if _long.needs_stream(self.sdk, kwargs):
            send = self._sender({**kwargs, "stream": True}, is_async=False)
            return self._retrying(lambda: _long.collect(self, send))
        return self._retrying(self._sender(kwargs, is_async=False))

    async def _call_async(self, kwargs: dict[str, Any]) -> Any:
        if _long.needs_stream(self.sdk, kwargs):
            send = self._sender({**kwargs, "stream": True}, is_async=True)
            return await self._retrying_async(lambda: _long.collect_async(self, send))
        return await self._retrying_async(self._sender(kwargs, is_async=True))

    def _sender(self, kwargs: dict[str, Any], *, is_async: bool) -> Callable[[], Any]:
        """One attempt of the call (a coroutine's when ``is_async``), made again on a retry:
        its arguments are checked and encoded once, here."""
        client = self.async_client if is_async else self.client
        if not self._fast:
            _anthropic_post.check_names(self.sdk, kwargs)
            return lambda: client.messages.create(**kwargs)
        args = _anthropic_post.post_arguments(self.sdk, client, kwargs, is_async=is_async)
        return lambda: client.post(_anthropic_post.MESSAGES_PATH, **args)

    # --- batch (Message Batches; see _batch_anthropic) -------------------------------------

    def _batch_protocol(self) -> BatchProtocol:
        # Imported here: building an interface (import + client, benchmarks/bench_imports.py)
        # does not load the batch machinery (zerda.llm.batch, the JSONL writer).
        from zerda.llm.wires.anthropic.batch import AnthropicBatch

        return AnthropicBatch(self)

    # --- response -------------------------------------------------------------------------

    def _map_response(self, raw: Any) -> dict[str, Any]:
        if isinstance(raw, _long.Streamed):  # a long answer, read from its stream
            return raw.acc.result(self._make_result)
        raw = _json_body(raw)
        blocks = _get(raw, "content")
        if not isinstance(blocks, list):
            # The SDK builds a Message from any JSON ({} included) without checking it.
            raise malformed_response(self.provider, f"no 'content' list in {excerpt(raw)}")
        thinking = [_map_thinking_block(b) for b in blocks if _type(b) in _THINKING_TYPES]
        hosted = _server.has_hosted(blocks)
        data: dict[str, Any] = {"thinking": thinking} if thinking else {}
        if hosted:  # the turn's blocks, to send back as they are (DESIGN §18)
            data["content"] = _server.native_blocks(blocks)
        return self._make_result(
            _map_text(blocks),
            parse_anthropic_tool_calls(blocks),
            _get(raw, "stop_reason"),
            _map_usage(_get(raw, "usage")),
            {"anthropic": data} if data else None,
            "".join(b["thinking"] for b in thinking if b["type"] == "thinking"),
            server_tool_calls=_server.map_server_calls(blocks) if hosted else None,
            citations=_server.map_citations(blocks) or None,
        )

    def _map_stop_reason(self, native: Any) -> str:
        return _STOP_REASONS.get(native, "other")

    def _map_error(self, exc: BaseException) -> ZerdaError | None:
        sdk: Any = self.sdk
        if isinstance(exc, sdk.APITimeoutError):  # before APIConnectionError: a subclass
            return TimeoutError(f"request timed out: {exc}", provider=self.provider)
        if isinstance(exc, sdk.APIConnectionError):
            cause = f" ({exc.__cause__})" if exc.__cause__ else ""
            return ConnectionError(f"{exc}{cause}", provider=self.provider)
        if isinstance(exc, sdk.APIStatusError):
            return _map_status_error(exc, self.provider)
        transport = _map_transport_error(exc, self.provider) or _map_bedrock_frame_error(
            exc, self.provider
        )
        if transport is not None:
            return transport
        if isinstance(exc, sdk.AnthropicError):
            return UnknownError(f"{type(exc).__name__}: {exc}", provider=self.provider)
        if isinstance(exc, json.JSONDecodeError):  # the SDK parses bodies and SSE data with json
            return malformed_response(self.provider, f"not valid JSON: {exc}")
        return None

    # --- streaming ------------------------------------------------------------------------

    def _open_stream(self, kwargs: dict[str, Any]) -> Any:
        # The raw event stream (not the MessageStream helper, which keeps a snapshot of the
        # whole message): the SDK's Stream is a context manager that closes the response.
        return self._call({**kwargs, "stream": True})

    @contextlib.asynccontextmanager
    async def _open_stream_async(self, kwargs: dict[str, Any]) -> AsyncIterator[Any]:
        stream = await self._call_async({**kwargs, "stream": True})
        async with stream:
            yield stream

    def _feed(self, acc: StreamAccumulator, chunk: Any) -> list[dict[str, Any]]:
        handler = _EVENT_HANDLERS.get(_type(chunk))
        return handler(acc, chunk) if handler else []


# --- messages -----------------------------------------------------------------------------


def _map_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Unified history -> alternating user/assistant messages (same-role ones merged;
    messages left without any block dropped; cache points made ``cache_control``)."""
    return _map_turns(messages)[0]


def _map_turns(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], bool]:
    """(:func:`_map_messages`, whether the history held a cache point). One pass, one list
    of blocks per turn (our own, extended in place); the cache points are applied only
    when the history holds one."""
    out: list[dict[str, Any]] = []
    unordered: set[int] = set()  # the turns (ids) a merge may have put out of order
    last_role = None
    cached = False
    for message in messages:
        role = message["role"]
        # One mapper per role, looked up here: this loop runs for every message of the
        # history on every request, and a dispatching frame per message cost about 6% of it.
        blocks = _BLOCKS_OF[role](message)
        if not blocks:
            continue
        cached = cached or _CACHE_POINT in blocks
        if role != "assistant":
            role = "user"
        if role == last_role:
            turn = out[-1]
            first = _FIRST_IN_TURN[role]
            if blocks[0]["type"] in first and turn["content"][-1]["type"] not in first:
                unordered.add(id(turn))
            turn["content"] += blocks
        else:
            out.append({"role": role, "content": blocks})
            last_role = role
    if cached:
        _apply_cache_points(out)
    return [_finish_message(m, id(m) in unordered) for m in out if m["content"]], cached


def _map_user_blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A user (or system) message's text or content parts, a cache point after them with
    ``cache=True``."""
    content = message["content"]
    if type(content) is str:
        blocks = _text_blocks(content)
    else:
        blocks = [b for p in content for b in _map_part(p)]
    return [*blocks, _CACHE_POINT] if message.get("cache_after") else blocks


# A cache point in a block list until _apply_cache_points puts it on the block before it.
_CACHE_POINT: dict[str, Any] = {"type": "cache_point"}
_EPHEMERAL = {"type": "ephemeral"}
_MAX_CACHE_POINTS = 4  # https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching


def _map_part(part: dict[str, Any]) -> list[dict[str, Any]]:
    """One content part as Anthropic blocks: text, image and document blocks with base64,
    text or URL sources (https://docs.anthropic.com/en/docs/build-with-claude/vision,
    /pdf-support), or a cache point."""
    kind = part["type"]
    if kind == "text":
        return _text_blocks(part["text"])
    if kind == "cache_point":
        return [_CACHE_POINT]
    block: dict[str, Any] = {"type": kind, "source": _map_source(part)}
    if kind == "document" and part.get("name"):
        block["title"] = part["name"]
    return [block]


def _map_source(part: dict[str, Any]) -> dict[str, Any]:
    if "url" in part:
        return {"type": "url", "url": part["url"]}
    if part["media_type"] == "text/plain":  # plain-text documents travel as text, not base64
        text = base64.b64decode(part["data"]).decode("utf-8", errors="replace")
        return {"type": "text", "media_type": "text/plain", "data": text}
    return {"type": "base64", "media_type": part["media_type"], "data": part["data"]}


def _apply_cache_points(messages: list[dict[str, Any]]) -> None:
    """Each cache point becomes ``cache_control`` on the block before it (in this message or
    an earlier one); one with no block before it marks nothing. Works on our own fresh
    blocks, never the caller's."""
    last: dict[str, Any] | None = None
    for message in messages:
        content = message["content"]
        if not any(block is _CACHE_POINT for block in content):
            last = content[-1] if content else last  # nothing to move: no new list
            continue
        blocks = []
        for block in content:
            if block is _CACHE_POINT:
                if last is not None:
                    last["cache_control"] = dict(_EPHEMERAL)
                continue
            blocks.append(block)
            last = block
        message["content"] = blocks


def _map_system(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A system prompt holding cache points, as text blocks with ``cache_control``."""
    wrapped: list[dict[str, Any]] = [
        {"role": "system", "content": [b for p in parts for b in _map_part(p)]}
    ]
    _apply_cache_points(wrapped)
    blocks: list[dict[str, Any]] = wrapped[0]["content"]
    return blocks


def _cache_last(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``cache=True``: the tool definitions cached, through the last one's cache_control."""
    return [*tools[:-1], {**tools[-1], "cache_control": dict(_EPHEMERAL)}]


def _check_cache_points(kwargs: dict[str, Any], in_messages: bool = True) -> None:
    """The API refuses more than four cache_control blocks in a request: refused here
    (``in_messages``: whether the messages may hold one; only a cache point makes one)."""
    system = kwargs["system"] if isinstance(kwargs.get("system"), list) else []
    count = sum("cache_control" in b for b in (*kwargs.get("tools", []), *system))
    if in_messages:
        count += sum(
            "cache_control" in b
            for m in kwargs["messages"]
            if isinstance(m["content"], list)
            for b in m["content"]
        )
    if count > _MAX_CACHE_POINTS:
        raise InvalidRequestError(
            f"anthropic takes at most {_MAX_CACHE_POINTS} cache points in a request "
            f"(cache_control blocks: tools, system and messages); this one has {count}"
        )


def _text_blocks(text: str | None) -> list[dict[str, Any]]:
    # The API refuses empty (and whitespace-only) text blocks.
    return [{"type": "text", "text": text}] if text and not text.isspace() else []


def _map_assistant_blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    provider_data = message.get("provider_data")
    if provider_data and "server_tool_calls" in message:
        native = (provider_data.get("anthropic") or {}).get("content")
        if isinstance(native, list):  # a hosted tools' turn this row takes back (DESIGN §18)
            return _replay_native(native, message["tool_calls"])
    blocks = _map_thinking(provider_data) if provider_data else []
    text = message["content"]
    if text and not text.isspace():
        blocks.append({"type": "text", "text": text})
    for c in message["tool_calls"]:
        blocks.append(_map_tool_use(c))
    return blocks


def _replay_native(native: list[Any], calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The turn's own blocks, copied, in their order: server tool uses and results with
    their ids and encrypted content, thinking with its signatures, text with its citations
    (encrypted_index). Its tool_use blocks are the message's tool calls, in order (their
    ids as this request sends them); empty text blocks, which the API refuses in a request,
    are left out."""
    pending = iter(calls)
    out: list[dict[str, Any]] = []
    for block in native:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_use":
            call = next(pending, None)
            if call is not None:
                out.append({**_server.plain(block), **_map_tool_use(call)})
        elif block.get("type") != "text" or block.get("text"):
            out.append(_server.plain(block))
    out.extend(_map_tool_use(call) for call in pending)
    return out


def _map_tool_use(call: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call["id"], "name": call["name"], "input": call["arguments"]}


def _map_thinking(provider_data: dict[str, Any]) -> list[dict[str, Any]]:
    """The turn's thinking blocks, copied (``provider_data["anthropic"]["thinking"]``)."""
    thinking = (provider_data.get("anthropic") or {}).get("thinking")
    return [_copy_thinking(b) for b in thinking or [] if _is_thinking(b)]


def _is_thinking(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") in _THINKING_TYPES


def _copy_thinking(block: dict[str, Any]) -> dict[str, Any]:
    if block["type"] == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.get("data", "")}
    return {
        "type": "thinking",
        "thinking": block.get("thinking", ""),
        "signature": block.get("signature", ""),
    }


def _map_tool_blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A tool result's block; a cache point in its parts marks the whole result."""
    output = message["content"]
    cached = message.get("cache_after") or (
        type(output) is list and any(_is_cache_point(p) for p in output) and is_parts(output)
    )
    block = _map_tool_result(message)
    return [block, _CACHE_POINT] if cached else [block]


def _is_cache_point(part: Any) -> bool:
    return isinstance(part, dict) and part.get("type") == "cache_point"


def _map_tool_result(message: dict[str, Any]) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message["tool_call_id"]}
    output = message["content"]
    if type(output) is str:
        content: Any = output
    elif type(output) is list and is_parts(output):
        # text, image and document blocks may sit inside a tool_result
        content = [b for p in output if p["type"] != "cache_point" for b in _map_part(p)]
    else:
        content = tool_output_text(output)
    if content:  # an empty output is sent as a result with no content, never as ""
        block["content"] = content
    if message["is_error"]:
        block["is_error"] = True
    return block


_BLOCKS_OF: dict[str, Callable[[dict[str, Any]], list[dict[str, Any]]]] = {
    "user": _map_user_blocks,
    "system": _map_user_blocks,
    "assistant": _map_assistant_blocks,
    "tool": _map_tool_blocks,
}


# The blocks the API wants first in a turn of each role.
_FIRST_IN_TURN = {"assistant": _THINKING_TYPES, "user": ("tool_result",)}


def _finish_message(message: dict[str, Any], merged_out_of_order: bool) -> dict[str, Any]:
    """Thinking blocks first in a (merged) assistant turn, tool results first in a user
    turn, as the API requires; a lone text block sent as plain string content. The turn
    is our own: it is finished in place. Only a merge can put a turn out of order (each
    message's own blocks come in order): ``merged_out_of_order`` says whether one may have."""
    blocks = message["content"]
    if len(blocks) == 1:
        block = blocks[0]
        if block["type"] == "text" and "cache_control" not in block:
            return {"role": message["role"], "content": block["text"]}
        return message
    if not merged_out_of_order:
        return message
    first = _FIRST_IN_TURN[message["role"]]
    if not _in_order(blocks, first):
        message["content"] = [b for b in blocks if b["type"] in first] + [
            b for b in blocks if b["type"] not in first
        ]
    return message


def _in_order(blocks: list[dict[str, Any]], first: tuple[str, ...]) -> bool:
    """Whether every block of a ``first`` type comes before all the others."""
    others = False
    for block in blocks:
        if block["type"] not in first:
            others = True
        elif others:
            return False
    return True


# --- tools, tool_choice, options -------------------------------------------------------


def _map_tools(tools: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    return to_anthropic_tools(tools)


def _map_tool_choice(
    choice: str | dict[str, str] | None, parallel_tool_calls: bool | None, has_tools: bool
) -> dict[str, Any] | None:
    """DESIGN.md §6: auto/none/any/tool; parallel_tool_calls=False rides inside it."""
    if not has_tools:  # the API refuses a tool_choice without tools
        return None
    if isinstance(choice, dict):
        native: dict[str, Any] = {"type": "tool", "name": choice["name"]}
    elif choice == "required":
        native = {"type": "any"}
    elif choice == "none":
        return {"type": "none"}
    elif choice == "auto" or parallel_tool_calls is False:
        native = {"type": "auto"}
    else:
        return None
    if parallel_tool_calls is False:
        native["disable_parallel_tool_use"] = True
    return native


def _map_options(req: Request, default_max_tokens: int) -> dict[str, Any]:
    """max_tokens (required by the API; a thinking budget comes on top of the default, as
    the budget must stay below it), stop_sequences, temperature and top_p."""
    max_tokens = req.max_tokens
    if max_tokens is None:
        budget = req.reasoning.budget if req.reasoning and req.reasoning.on else None
        max_tokens = default_max_tokens + (budget or 0)
    options: dict[str, Any] = {"max_tokens": max_tokens}
    if req.stop:
        options["stop_sequences"] = list(req.stop)
    # anthropic 2.x's messages.create has no temperature/top_p parameters; the API still
    # takes them, so they travel in the body.
    sampling = {
        k: v for k, v in (("temperature", req.temperature), ("top_p", req.top_p)) if v is not None
    }
    if sampling:
        options["extra_body"] = sampling
    return options


def _map_reasoning(plan: Plan | None) -> dict[str, Any]:
    """``thinking`` (https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking):
    a budget where the family takes tokens (or the caller gave budget_tokens); adaptive
    thinking with ``output_config.effort`` where the model takes effort
    (https://docs.anthropic.com/en/docs/build-with-claude/adaptive-thinking)."""
    if plan is None:
        return {}
    if not plan.on:
        return {"thinking": dict(plan.off)}
    if plan.budget is not None:
        native: dict[str, Any] = {"thinking": {"type": "enabled", "budget_tokens": plan.budget}}
    else:
        native = {"thinking": {"type": "adaptive"}}
    if plan.effort is not None:
        native["output_config"] = {"effort": plan.effort}
    return native


_BETA_HEADER = "anthropic-beta"


def _with_hosted_fields(kwargs: dict[str, Any], servers: list[Any], betas: list[str]) -> None:
    """``mcp_servers`` (a body field messages.create() has no parameter for: extra_body)
    and the ``anthropic-beta`` header the hosted tools need (comma-separated values,
    https://docs.anthropic.com/en/api/beta-headers)."""
    if servers:
        kwargs["extra_body"] = {**kwargs.get("extra_body", {}), "mcp_servers": servers}
    if betas:
        kwargs["extra_headers"] = {_BETA_HEADER: ",".join(betas)}


def _with_native(kwargs: dict[str, Any], native: dict[str, Any]) -> dict[str, Any]:
    """``**native`` over Zerda's arguments; ``extra_body`` and ``extra_headers`` dicts
    merged, the caller's winning, but both lists of betas kept."""
    if not native:
        return kwargs
    merged = {**kwargs, **native}
    for key in ("extra_body", "extra_headers"):
        if isinstance(kwargs.get(key), dict) and isinstance(native.get(key), dict):
            merged[key] = {**kwargs[key], **native[key]}
    headers = merged.get("extra_headers")
    if isinstance(kwargs.get("extra_headers"), dict) and isinstance(headers, dict):
        betas = [kwargs["extra_headers"].get(_BETA_HEADER), headers.get(_BETA_HEADER)]
        merged["extra_headers"] = {**headers, _BETA_HEADER: _joined_betas(betas)}
    return merged


def _joined_betas(values: list[Any]) -> str:
    """Comma-separated beta values, each once, in order."""
    names = [n.strip() for v in values if isinstance(v, str) for n in v.split(",") if n.strip()]
    return ",".join(dict.fromkeys(names))


# --- response pieces ----------------------------------------------------------------------


def _json_body(raw: Any) -> Any:
    """The answer as JSON data. ``cast_to=object`` gives the text of a body served without
    a JSON content type, which the SDK would still have parsed into a ``Message``."""
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _type(obj: Any) -> Any:
    return _get(obj, "type")


def _map_text(blocks: list[Any]) -> str | None:
    """The text blocks' text; a block whose text is not a string is a malformed response."""
    texts = [_get(b, "text") for b in blocks if _type(b) == "text"]
    bad = next((t for t in texts if t is not None and not isinstance(t, str)), None)
    if bad is not None:
        raise malformed_response("anthropic", f"a text block's text is not a string: {bad!r}")
    return "".join(t for t in texts if t) or None


def _map_thinking_block(block: Any) -> dict[str, Any]:
    if _type(block) == "redacted_thinking":
        return {"type": "redacted_thinking", "data": _get(block, "data")}
    return {
        "type": "thinking",
        "thinking": _get(block, "thinking"),
        "signature": _get(block, "signature"),
    }


def _map_usage(usage: Any) -> dict[str, Any] | None:
    """DESIGN.md §12: Anthropic's ``input_tokens`` leaves out the tokens read from and
    written to the prompt cache, which are added; ``output_tokens`` includes thinking
    (https://docs.anthropic.com/en/api/messages#response-usage)."""
    if usage is None:
        return None
    read = _get(usage, "cache_read_input_tokens")
    write = _get(usage, "cache_creation_input_tokens")
    thinking = _get(_get(usage, "output_tokens_details"), "thinking_tokens")
    mapped: dict[str, Any] = make_usage(
        plus(_get(usage, "input_tokens"), read, write),
        _get(usage, "output_tokens"),
        cache_read=read,
        cache_write=write,
        reasoning=thinking,
    )
    # usage.server_tool_use: the web searches and fetches the answer made (DESIGN §18).
    requests = _server.server_tool_requests(usage)
    if requests:
        mapped["server_tool_requests"] = requests
    return mapped


def _map_status_error(exc: Any, provider: str) -> ZerdaError:
    body = getattr(exc, "body", None)
    message = _api_message(exc, body) or _platform_message(body) or exc.message
    status = exc.status_code
    if status < 400:
        # An `event: error` inside a 200 stream: its error.type says what it means.
        return _in_stream_error(_error_type(exc, body), message, provider)
    return error_from_status(status, message, provider)


def _in_stream_error(error_type: str | None, message: str, provider: str) -> ZerdaError:
    equivalent = ERROR_TYPE_STATUS.get(error_type or "", 500)
    return error_class_for_status(equivalent)(f"{error_type}: {message}", provider=provider)


# What anthropic < 2.5's Bedrock stream decoder raises for an exception frame of
# invoke-with-response-stream, instead of the `error` event newer SDKs turn it into.
_BEDROCK_BAD_FRAME = "Bad response code, expected 200: "


def _map_bedrock_frame_error(exc: BaseException, provider: str) -> ZerdaError | None:
    """The old SDKs' ``ValueError`` for a Bedrock in-stream exception, mapped as anthropic
    2.5+ maps it: error type the frame's ``:exception-type`` header, message its body's
    ``message`` (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModelWithResponseStream.html)."""
    text = str(exc)
    if not isinstance(exc, ValueError) or not text.startswith(_BEDROCK_BAD_FRAME):
        return None
    try:  # the decoder puts the repr of the frame's response dict in its message
        frame = ast.literal_eval(text[len(_BEDROCK_BAD_FRAME) :])
    except (ValueError, SyntaxError):
        return None
    if not isinstance(frame, dict):
        return None
    headers = frame.get("headers")
    code = headers.get(":exception-type") if isinstance(headers, dict) else None
    raw = frame.get("body")
    body = raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw or "")
    message = _platform_message(_json_body(body)) or body
    return _in_stream_error(code if isinstance(code, str) else None, message, provider)


def _error_field(body: Any, field: str) -> str | None:
    """``body["error"][field]`` of the Messages API's error shape
    ``{"type": "error", "error": {"type", "message"}}``
    (https://docs.anthropic.com/en/api/errors), or None."""
    error = body.get("error") if isinstance(body, dict) else None
    value = error.get(field) if isinstance(error, dict) else None
    return value if isinstance(value, str) and value else None


def _api_message(exc: Any, body: Any) -> str | None:
    """The API's own error message: ``APIStatusError.api_message`` from anthropic 2.5 on;
    read from the body on older SDKs, which lack the attribute."""
    return getattr(exc, "api_message", None) or _error_field(body, "message")


def _error_type(exc: Any, body: Any) -> str | None:
    """The error's ``error.type``: ``APIStatusError.type`` from anthropic 2.5 on; read from
    the body on older SDKs, which lack the attribute."""
    return getattr(exc, "type", None) or _error_field(body, "type")


def _platform_message(body: Any) -> str | None:
    """The message of a cloud platform's own error body: Bedrock answers
    ``{"message": ...}`` (https://docs.aws.amazon.com/bedrock/latest/APIReference/CommonErrors.html),
    not the Messages API's ``{"error": {"message"}}``."""
    message = body.get("message") if isinstance(body, dict) else None
    return message if isinstance(message, str) and message else None


def _map_transport_error(exc: BaseException, provider: str) -> ZerdaError | None:
    """An HTTP-level failure while reading a stream: the SDK wraps failures of the request
    itself, but not those of a response body it is iterating."""
    for module_name in ("httpx2", "httpx"):  # anthropic 2.x is built on httpx2, 0.x on httpx
        module = sys.modules.get(module_name)
        if module is None:
            continue
        if isinstance(exc, module.TimeoutException):
            return TimeoutError(f"the stream timed out: {exc}", provider=provider)
        if isinstance(exc, module.TransportError):
            return ConnectionError(f"the connection failed mid-stream: {exc}", provider=provider)
    return None


# --- stream events ------------------------------------------------------------------------

Events = list[dict[str, Any]]


def _on_message_start(acc: StreamAccumulator, event: Any) -> Events:
    usage = _get(_get(event, "message"), "usage")
    acc.scratch["anthropic_usage"] = usage
    acc.usage = _map_usage(usage)
    return []


def _on_block_start(acc: StreamAccumulator, event: Any) -> Events:
    block = _get(event, "content_block")
    kind = _type(block)
    index = _get(event, "index")
    if kind == "tool_use":
        _blocks.start(acc, index, _server.plain(block))
        return acc.start_call(index, _get(block, "id"), _get(block, "name"))
    if kind == "text":
        _blocks.start(acc, index, _blocks.text_record(acc, block))
        return acc.text(_get(block, "text"))
    if kind in _THINKING_TYPES:
        thinking = _map_thinking_block(block)
        _thinking_list(acc).append(thinking)
        _blocks.start(acc, index, thinking)
        return []
    if not _server.is_hosted_block(block):  # no type: no block
        return []
    # A server tool's block (DESIGN §18), or one Zerda does not know: kept, never dropped.
    return _blocks.start_hosted(acc, index, block)


def _on_block_delta(acc: StreamAccumulator, event: Any) -> Events:
    delta = _get(event, "delta")
    kind = _type(delta)
    if kind == "text_delta":
        return acc.text(_get(delta, "text"))
    if kind == "input_json_delta":
        index, fragment = _get(event, "index"), _get(delta, "partial_json")
        if _blocks.add_input(acc, index, fragment):  # a server tool use's input
            return []
        return acc.add_arguments(index, fragment)
    if kind == "citations_delta":
        _blocks.add_citation(acc, _get(event, "index"), _get(delta, "citation"))
        return []
    if kind == "thinking_delta":
        _current_thinking(acc)["thinking"] += _get(delta, "thinking")
        return acc.reasoning(_get(delta, "thinking"))
    elif kind == "signature_delta":
        # Sent whole, once per block; replaced as the SDK's own accumulator does.
        _current_thinking(acc)["signature"] = _get(delta, "signature")
    return []


def _on_block_stop(acc: StreamAccumulator, event: Any) -> Events:
    index = _get(event, "index")
    events = _blocks.stop(acc, index)
    return events + acc.end_call(index)


def _on_message_delta(acc: StreamAccumulator, event: Any) -> Events:
    acc.native_stop = _get(_get(event, "delta"), "stop_reason")
    usage = _get(event, "usage")
    if usage is not None:
        # message_delta's counts are cumulative and update message_start's: output always,
        # input and cache counts when server tools ran. Fields it leaves out keep their value.
        merged = _merged_usage(acc.scratch.get("anthropic_usage"), usage)
        acc.scratch["anthropic_usage"] = merged
        acc.usage = _map_usage(merged)
    return []


def _merged_usage(start: Any, update: Any) -> Any:
    """message_start's usage with message_delta's non-null fields over it."""
    fields = (
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
        "output_tokens_details",
        "server_tool_use",
    )
    merged = {f: _get(start, f) for f in fields}
    merged.update({f: _get(update, f) for f in fields if _get(update, f) is not None})
    return SimpleNamespace(**merged)


def _on_message_stop(acc: StreamAccumulator, event: Any) -> Events:
    acc.finished = True
    return _blocks.finish(acc)


def _thinking_list(acc: StreamAccumulator) -> list[dict[str, Any]]:
    data = acc.provider_data.setdefault("anthropic", {})
    thinking: list[dict[str, Any]] = data.setdefault("thinking", [])
    return thinking


def _current_thinking(acc: StreamAccumulator) -> dict[str, Any]:
    """The thinking block a delta belongs to: content blocks are sent one after the other,
    so it is the latest one."""
    thinking = _thinking_list(acc)
    if not thinking or thinking[-1]["type"] != "thinking":
        thinking.append({"type": "thinking", "thinking": "", "signature": ""})
    return thinking[-1]


_EVENT_HANDLERS: dict[str, Callable[[StreamAccumulator, Any], Events]] = {
    "message_start": _on_message_start,
    "content_block_start": _on_block_start,
    "content_block_delta": _on_block_delta,
    "content_block_stop": _on_block_stop,
    "message_delta": _on_message_delta,
    "message_stop": _on_message_stop,
}

__all__ = ["DEFAULT_MAX_TOKENS", "AnthropicInterface"]
