"""OpenAI's Responses API through the ``openai`` SDK's ``client.responses``
(docs/providers/openai-responses.md).

The shape (https://platform.openai.com/docs/api-reference/responses/create): the system
prompt is ``instructions``; the history is a list of input items — user and assistant
messages, ``function_call`` items (the call's id is its ``call_id``, not the item's ``fc_``
id) and ``function_call_output`` items answering them by ``call_id``; function tools are
flat ``{"type": "function", "name", "parameters", "strict"}`` items.

Reasoning models return ``reasoning`` items. Zerda calls the API statelessly (``store=False``)
and asks for their ``encrypted_content``, keeps a response's output items in
``provider_data[<provider>]["items"]`` and sends them back in their order on the next turn:
the API refuses a reasoning item "without its required following item" (the message or
function call with its own item id), so the items that follow one keep their ids too.
Another provider never sees them. Reasoning summaries are ``result["reasoning"]``.

Built-in (hosted) tools (DESIGN §18, hosted.py): the request's hosted tools are ``tools``
entries after the functions; each hosted output item is a server call, each text
annotation a citation; the hosted items are kept as the API sent them and go back by id
(``_replays_hosted``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias

from zerda.llm._fastpath import PrivateName
from zerda.llm._strict_schema import to_strict_schema
from zerda.llm._traits import Hosted
from zerda.llm.base import Request
from zerda.llm.errors import ZerdaError, excerpt, malformed_response
from zerda.llm.messages import tool_output_text
from zerda.llm.parts import is_parts
from zerda.llm.registry.profiles import OPENAI
from zerda.llm.tools import ToolCall, _get, _parse_json_arguments, to_openai_responses_tools
from zerda.llm.usage import make_usage
from zerda.llm.wires.openai.compat import _stream_error, data_url
from zerda.llm.wires.openai.interface import OpenAIInterface
from zerda.llm.wires.openai_responses import count as _count
from zerda.llm.wires.openai_responses import fastpath as _fastpath
from zerda.llm.wires.openai_responses import hosted as _hosted

if TYPE_CHECKING:
    from zerda.llm._stream import StreamAccumulator
    from zerda.llm._structured import OutputSpec
    from zerda.llm.reasoning import Plan

Event = dict[str, Any]

# status (and incomplete_details.reason) -> unified stop reason.
# https://platform.openai.com/docs/api-reference/responses/object#responses/object-status
_STOP_REASONS = {
    "completed": "end_turn",
    "incomplete:max_output_tokens": "max_tokens",
    "incomplete:content_filter": "content_filter",
    "refusal": "content_filter",
}

# Only the models that reason (their profile's reasoning_items) accept this include.
_ENCRYPTED = "reasoning.encrypted_content"

# Output items that need nothing of provider_data to be sent back when alone.
_PLAIN_ITEMS = frozenset({"message", "function_call"})


# --- request ---------------------------------------------------------------------------


def _map_tool_call(call: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function_call",
        "call_id": call["id"],
        "name": call["name"],
        "arguments": tool_output_text(call["arguments"]),
    }


def _map_part(part: dict[str, Any]) -> dict[str, Any]:
    """One content part (checked against the row's traits) as an input content part:
    https://platform.openai.com/docs/guides/images-vision, /docs/guides/pdf-files."""
    kind = part["type"]
    if kind == "text":
        return {"type": "input_text", "text": part["text"]}
    if kind == "image":
        return {"type": "input_image", "image_url": data_url(part), "detail": "auto"}
    if kind == "file":  # an uploaded file's id
        return {"type": "input_file", "file_id": part["uri"]}
    if "url" in part:
        return {"type": "input_file", "file_url": part["url"]}
    name = part.get("name") or "document.pdf"  # the API asks a filename with file_data
    return {"type": "input_file", "filename": name, "file_data": data_url(part)}


def _map_content(content: Any) -> Any:
    """A user message's or a tool output's content: text as it is, parts mapped."""
    if is_parts(content):
        return [_map_part(p) for p in content]
    return content


def _map_tool_result(message: dict[str, Any]) -> dict[str, Any]:
    # No is_error field exists on function_call_output: the output text itself says so.
    # Parts (a screenshot, a PDF) travel in the output itself, as input content parts.
    content = message["content"]
    if type(content) is str:
        output: Any = content
    elif is_parts(content):
        output = [_map_part(p) for p in content]
    else:
        output = tool_output_text(content)
    return {"type": "function_call_output", "call_id": message["tool_call_id"], "output": output}


def _output_message(slot: dict[str, Any], text: str) -> dict[str, Any]:
    """An assistant message item with its original id (and phase), as the API sent it."""
    item: dict[str, Any] = {
        "type": "message",
        "id": slot["id"],
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    if slot.get("phase"):
        item["phase"] = slot["phase"]
    return item


def _message_texts(content: str | None, lengths: list[int]) -> list[str]:
    """The assistant text split over the response's message items as it came; when the
    text was edited (the lengths no longer add up), all of it goes in the first item."""
    if not lengths:
        return []
    if content is not None and sum(lengths) == len(content):
        starts = [sum(lengths[:i]) for i in range(len(lengths))]
        return [content[s : s + n] for s, n in zip(starts, lengths, strict=True)]
    return [content or ""] + [""] * (len(lengths) - 1)


def _replay(items: list[dict[str, Any]], message: dict[str, Any]) -> list[dict[str, Any]]:
    """The assistant turn as the response's own output items, in their order: reasoning and
    built-in tool items verbatim, message and function_call items with their item ids but
    the text and calls of the unified message (the caller's edits win)."""
    calls = {c["id"]: _map_tool_call(c) for c in message["tool_calls"]}
    slots = [i for i in items if i.get("type") == "message"]
    texts = _message_texts(message["content"], [int(s.get("length") or 0) for s in slots])
    out: list[dict[str, Any]] = []
    if message["content"] and not slots:
        out.append({"role": "assistant", "content": message["content"]})
    for item in items:
        kind = item.get("type")
        if kind == "message":
            text = texts.pop(0)
            if text:
                out.append(_output_message(item, text))
        elif kind == "function_call":
            call = calls.pop(item.get("call_id"), None)
            if call is not None:
                out.append({**call, "id": item["id"]} if item.get("id") else call)
        else:
            out.append(item)
    return out + list(calls.values())  # calls the caller added go last


def _map_assistant(message: dict[str, Any], key: str) -> list[dict[str, Any]]:
    items = ((message.get("provider_data") or {}).get(key) or {}).get("items")
    if isinstance(items, list) and all(isinstance(i, dict) for i in items):
        return _replay(items, message)
    head = [{"role": "assistant", "content": message["content"]}] if message["content"] else []
    return head + [_map_tool_call(c) for c in message["tool_calls"]]


def _map_message(message: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """One unified message (system removed, tool ids resolved) as input items."""
    role = message["role"]
    if role == "tool":
        return [_map_tool_result(message)]
    if role == "assistant":
        return _map_assistant(message, key)
    return [{"role": role, "content": _map_content(message["content"])}]


def _map_messages(messages: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    return [item for m in messages for item in _map_message(m, key)]


def _map_tool_choice(choice: str | dict[str, str]) -> Any:
    if isinstance(choice, dict):
        return {"type": "function", "name": choice["name"]}
    return choice


def _map_tools(tools: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    """Flat function items; a tool that says ``"strict": True`` is sent strict, its schema
    made strict (https://platform.openai.com/docs/guides/function-calling#strict-mode)."""
    mapped = to_openai_responses_tools(tools)
    if not mapped or not tools:
        return mapped
    return [_strict_tool(m) if t.get("strict") else m for t, m in zip(tools, mapped, strict=True)]


def _strict_tool(tool: dict[str, Any]) -> dict[str, Any]:
    parameters = to_strict_schema(tool["parameters"], f"tool {tool['name']!r}")
    return {**tool, "parameters": parameters, "strict": True}


def _map_tool_options(req: Request, natives: Mapping[str, Hosted]) -> dict[str, Any]:
    """tools (functions, then the hosted tools: hosted.py), tool_choice and
    parallel_tool_calls (the last two only with tools)."""
    tools = (_map_tools(req.tools) or []) + _hosted.map_hosted_tools(req.hosted, natives)
    if not tools:
        return {}
    options: dict[str, Any] = {"tools": tools}
    if req.tool_choice is not None:
        options["tool_choice"] = _map_tool_choice(req.tool_choice)
    if req.parallel_tool_calls is not None:
        options["parallel_tool_calls"] = req.parallel_tool_calls
    return options


def _map_options(req: Request) -> dict[str, Any]:
    # stop= never gets here: the row's traits say the API has no stop sequences.
    options = {
        "max_output_tokens": req.max_tokens,
        "temperature": req.temperature,
        "top_p": req.top_p,
    }
    return {k: v for k, v in options.items() if v is not None}


def _map_text_format(output: OutputSpec) -> dict[str, Any]:
    """``text.format``: ``json_object`` for "json", else a ``json_schema`` format (flat: name,
    schema, strict beside ``type``), strict with the schema made strict where the row says so
    (https://platform.openai.com/docs/guides/structured-outputs?api-mode=responses)."""
    if output.schema is None:
        return {"text": {"format": {"type": "json_object"}}}
    owner = f"response_format {output.name!r}"
    schema = to_strict_schema(output.schema, owner) if output.strict else output.schema
    fmt: dict[str, Any] = {"type": "json_schema", "name": output.name, "schema": schema}
    if output.description:
        fmt["description"] = output.description
    fmt["strict"] = output.strict
    return {"text": {"format": fmt}}


def _map_reasoning(plan: Plan | None) -> dict[str, Any]:
    """``reasoning: {"effort", "summary"}``
    (https://platform.openai.com/docs/api-reference/responses/create#responses-create-reasoning):
    the effort from the model family's row in zerda.llm.reasoning.TABLE (the Chat Completions
    families: the same models), and ``summary: "auto"`` (the most detailed summary the model
    gives) unless ``summary=False``; off is the family's off effort (``"none"``)."""
    if plan is None:
        return {}
    if not plan.on:
        return {"reasoning": {"effort": plan.off}}
    reasoning: dict[str, Any] = {}
    if plan.effort is not None:
        reasoning["effort"] = plan.effort
    if plan.summary:
        reasoning["summary"] = "auto"
    return {"reasoning": reasoning} if reasoning else {}


def _map_storage(model: str, includes: list[str]) -> dict[str, Any]:
    """Stateless by default: nothing stored at OpenAI, reasoning carried in the history
    (https://platform.openai.com/docs/guides/reasoning#encrypted-reasoning-items); with
    ``includes``, what the built-in tools need to show their results (hosted.py)."""
    storage: dict[str, Any] = {"store": False}
    if OPENAI.has("reasoning_items", model.rpartition("/")[2]):
        includes = [_ENCRYPTED, *includes]
    if includes:
        storage["include"] = includes
    return storage


# --- response --------------------------------------------------------------------------


def _as_dict(item: Any) -> dict[str, Any]:
    """An output item as plain JSON data (SDK objects dumped without their None fields)."""
    if isinstance(item, dict):
        return {k: v for k, v in item.items() if v is not None}
    dumped: dict[str, Any] = item.model_dump(mode="json", exclude_none=True, warnings=False)
    return dumped


def _parts(item: Any, key: str, kind: str) -> list[str]:
    texts = [_get(p, "text") for p in _get(item, key) or [] if _get(p, "type") == kind]
    return [t for t in texts if isinstance(t, str)]


def _message_text(item: Any) -> str:
    """The text of a message item: its ``output_text`` parts, and the text of its
    ``refusal`` parts (``{"type": "refusal", "refusal"}``, what the model says instead of
    answering: https://platform.openai.com/docs/guides/structured-outputs?api-mode=responses#refusals),
    which DESIGN §3 makes the content of a ``content_filter`` result."""
    texts = []
    for part in _get(item, "content") or []:
        kind = _get(part, "type")
        text = _get(part, "text") if kind == "output_text" else None
        if kind == "refusal":
            text = _get(part, "refusal")
        if isinstance(text, str):
            texts.append(text)
    return "".join(texts)


def _reasoning_text(item: Any) -> str:
    """Summary parts, then reasoning_text content parts (what the model shows)."""
    return "".join(
        _parts(item, "summary", "summary_text") + _parts(item, "content", "reasoning_text")
    )


def _has_refusal(items: list[Any]) -> bool:
    return any(
        _get(p, "type") == "refusal"
        for i in items
        if _get(i, "type") == "message"
        for p in _get(i, "content") or []
    )


def _map_tool_call_item(item: Any) -> ToolCall:
    return ToolCall(
        _get(item, "call_id"), _get(item, "name"), _parse_json_arguments(_get(item, "arguments"))
    )


def _native_stop(response: Any, items: list[Any]) -> str:
    """``status``, with the reason of an incomplete response (``incomplete:<reason>``); a
    message refused is ``refusal``."""
    status = str(_get(response, "status") or "")
    if status == "incomplete":
        return f"incomplete:{_get(_get(response, 'incomplete_details'), 'reason')}"
    if status == "completed" and _has_refusal(items):
        return "refusal"
    return status


def _map_usage(usage: Any) -> dict[str, Any] | None:
    """input_tokens already counts cached (and cache-write) tokens, output_tokens the
    reasoning ones. https://platform.openai.com/docs/api-reference/responses/object#responses/object-usage"""
    if not usage:
        return None
    inputs = _get(usage, "input_tokens_details")
    outputs = _get(usage, "output_tokens_details")
    return make_usage(
        _get(usage, "input_tokens"),
        _get(usage, "output_tokens"),
        cache_read=_get(inputs, "cached_tokens"),
        cache_write=_get(inputs, "cache_write_tokens"),
        reasoning=_get(outputs, "reasoning_tokens"),
    )


def _raw_item(item: Any) -> dict[str, Any]:
    """An output item exactly as the API sent it (its nulls too: a code_interpreter_call
    goes back with ``outputs: null``, a required field of the input item)."""
    if isinstance(item, dict):
        return item
    if not hasattr(item, "model_dump"):
        return {}
    dumped: dict[str, Any] = item.model_dump(
        mode="json", by_alias=True, exclude_unset=True, warnings=False
    )
    return dumped


def _map_hosted_results(items: list[Any]) -> dict[str, Any]:
    """``server_tool_calls``: one per hosted output item, in order; ``citations``: the
    messages' annotations over the text joined (hosted.py). Only those items are read as
    JSON: an answer without them costs a type check per item."""
    return {
        "server_tool_calls": [
            _hosted.map_server_call(_raw_item(i))
            for i in items
            if _hosted.is_hosted_item(_get(i, "type"))
        ],
        "citations": _map_citations(items),
    }


def _map_citations(items: list[Any]) -> list[dict[str, Any]]:
    """The message items' annotations, each moved by the text of the messages before."""
    out: list[dict[str, Any]] = []
    base = 0
    for item in items:
        if _get(item, "type") != "message":
            continue
        if any(_get(p, "annotations") for p in _get(item, "content") or []):
            out += [c for _, _, c in _hosted.message_citations(_raw_item(item), base)]
        base += len(_message_text(item))
    return out


def _map_item(item: Any) -> dict[str, Any]:
    """What provider_data keeps of one output item: reasoning items whole, built-in tool
    items as the API sent them, messages and function calls by their ids (their text and
    calls are the unified message's)."""
    kind = _get(item, "type")
    if _hosted.is_hosted_item(kind):
        return dict(_raw_item(item))
    if kind == "message":
        slot = {"type": "message", "id": _get(item, "id"), "length": len(_message_text(item))}
        phase = _get(item, "phase")
        return {**slot, "phase": phase} if phase else slot
    if kind == "function_call":
        return {"type": "function_call", "id": _get(item, "id"), "call_id": _get(item, "call_id")}
    data = _as_dict(item)
    if kind == "reasoning":
        data.pop("status", None)  # the input item takes it, but it says nothing there
    return data


def _map_provider_data(items: list[Any], key: str) -> dict[str, Any] | None:
    """The output items to send back, when any of them needs it (a reasoning or built-in
    tool item); a turn of only messages and calls needs nothing."""
    if all(_get(i, "type") in _PLAIN_ITEMS for i in items):
        return None
    return {key: {"items": [_map_item(i) for i in items]}}


def _failure(response: Any, provider: str) -> ZerdaError:
    """A response whose status is ``failed``, as the error its ``error`` object names."""
    error = _get(response, "error")
    body = _as_dict(error) if error is not None else {}
    message = body.get("message") or "the response failed with no error message"
    return _stream_error(body, f"response failed: {message}", provider)


def _event_error(event: Any, provider: str) -> ZerdaError:
    """An ``error`` event: ``{"type": "error", "code", "message"}`` (some servers nest it
    under ``error``)."""
    body = _as_dict(event)
    inner = body.get("error")
    if isinstance(inner, dict):
        body = inner
    return _stream_error(body, str(body.get("message") or "stream error"), provider)


# --- the interface ---------------------------------------------------------------------


class OpenAIResponsesInterface(OpenAIInterface):
    """The Responses API via ``openai.OpenAI().responses`` (clients, options and errors as
    :class:`OpenAIInterface`)."""

    provider = "openai-responses"
    max_tokens_field: ClassVar[str] = "max_output_tokens"
    # The body goes out through client.post, as Chat Completions' does (wires/openai):
    # POST {base_url}/responses, unknown keywords refused as responses.create() would;
    # responses.create() itself when the fast path is off.
    chat_path: ClassVar[str] = "/responses"
    create_resource: ClassVar[tuple[str, str]] = ("responses", "Responses")
    documented_call: ClassVar[tuple[str, ...]] = ("responses", "create")
    fast_path_wire: ClassVar[str] = "openai-responses"
    fast_path_names: ClassVar[tuple[PrivateName, ...]] = _fastpath.PRIVATE_NAMES
    # llm.count_tokens: POST /v1/responses/input_tokens (count.py).
    token_counter = _count.InputTokensCounter
    # https://platform.openai.com/docs/api-reference/responses-streaming/response/completed
    stream_final_event = "response.completed, response.incomplete or response.failed"
    # The ``include`` values the built-in tools' readable results need, by native tool type.
    hosted_includes: ClassVar[Mapping[str, str]] = _hosted.INCLUDES

    # --- request ---

    def _build_request(self, req: Request) -> dict[str, Any]:
        tools = _map_tool_options(req, self.spec.traits.hosted)
        includes = _hosted.map_includes(tools.get("tools") or [], self.hosted_includes)
        kwargs: dict[str, Any] = {
            "model": self.model,
            "input": _map_messages(req.messages, self.provider),
            **({"instructions": req.system} if req.system else {}),
            **tools,
            **_map_options(req),
            **_map_storage(str(self.model), includes),
            **self._map_timeout(req.timeout),
            **self._native_output(req),
            **self._map_reasoning(req.reasoning),
        }
        kwargs.update(req.native)
        return kwargs

    def _map_response_format(self, output: OutputSpec) -> dict[str, Any]:
        return _map_text_format(output)

    def _replays_hosted(self, message: dict[str, Any]) -> bool:
        """Whether the assistant message's provider_data holds this provider's hosted
        output items, which _map_assistant sends back by id, in their order."""
        items = ((message.get("provider_data") or {}).get(self.provider) or {}).get("items")
        return isinstance(items, list) and any(
            isinstance(i, dict) and _hosted.is_hosted_item(i.get("type")) for i in items
        )

    def _map_reasoning(self, plan: Plan | None) -> dict[str, Any]:
        return _map_reasoning(plan)

    def _stream_kwargs(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        return {**kwargs, "stream": True}  # usage always comes with response.completed

    # --- response ---

    def _map_response(self, raw: Any) -> dict[str, Any]:
        if not isinstance(_get(raw, "output"), list):
            # The SDK hands over any JSON ({} included), or an HTML page as text, unchecked.
            raise malformed_response(self.provider, f"no 'output' list in {excerpt(raw)}")
        if _get(raw, "status") == "failed":
            raise _failure(raw, self.provider)
        items = list(_get(raw, "output") or [])
        calls = [_map_tool_call_item(i) for i in items if _get(i, "type") == "function_call"]
        text = "".join(_message_text(i) for i in items if _get(i, "type") == "message")
        return self._make_result(
            text or None,
            calls,
            _native_stop(raw, items),
            _map_usage(_get(raw, "usage")),
            _map_provider_data(items, self.provider),
            "".join(_reasoning_text(i) for i in items if _get(i, "type") == "reasoning"),
            **_map_hosted_results(items),
        )

    def _map_stop_reason(self, native: Any) -> str:
        return _STOP_REASONS.get(native, "other") if isinstance(native, str) else "other"

    # --- streaming ---

    def _feed(self, acc: StreamAccumulator, chunk: Any) -> list[Event]:
        handler = _HANDLERS.get(str(_get(chunk, "type")))
        return handler(self, acc, chunk) if handler else []

    def _on_text(self, acc: StreamAccumulator, event: Any) -> list[Event]:
        _part_start(acc, event)
        return acc.text(_get(event, "delta"))

    def _on_refusal(self, acc: StreamAccumulator, event: Any) -> list[Event]:
        """``response.refusal.delta``: a piece of a refusal, which is the content (its done
        message item says ``refusal``, which makes the stop reason content_filter)."""
        _part_start(acc, event)
        return acc.text(_get(event, "delta"))

    def _on_annotation(self, acc: StreamAccumulator, event: Any) -> list[Event]:
        """``response.output_text.annotation.added``: a citation, its offsets into the text
        part moved by the text before the part (the done message repeats it: taken once)."""
        base = _part_start(acc, event)
        annotation = _raw_item(_get(event, "annotation"))
        cited = _hosted.map_annotation(annotation, base)
        if cited is None:
            return []
        key = tuple(_get(event, k) for k in ("output_index", "content_index", "annotation_index"))
        _stream_state(acc)["cited"].add(key)
        return acc.citation(cited)

    def _on_reasoning(self, acc: StreamAccumulator, event: Any) -> list[Event]:
        _stream_state(acc)["streamed"].add(_get(event, "output_index"))
        return acc.reasoning(_get(event, "delta"))

    def _on_item_added(self, acc: StreamAccumulator, event: Any) -> list[Event]:
        item = _get(event, "item")
        if _get(item, "type") != "function_call":
            return []
        key = _get(event, "output_index")
        events = acc.start_call(key, _get(item, "call_id"), _get(item, "name") or "")
        return events + acc.add_arguments(key, _get(item, "arguments"))

    def _on_arguments(self, acc: StreamAccumulator, event: Any) -> list[Event]:
        return acc.add_arguments(_get(event, "output_index"), _get(event, "delta"))

    def _on_item_done(self, acc: StreamAccumulator, event: Any) -> list[Event]:
        return _item_done(acc, _get(event, "output_index"), _get(event, "item"))

    def _on_finished(self, acc: StreamAccumulator, event: Any) -> list[Event]:
        """response.completed / .incomplete: status, usage, and any output item the
        stream did not deliver as an output_item.done event."""
        response = _get(event, "response")
        state = _stream_state(acc)
        events: list[Event] = []
        for index, item in enumerate(_get(response, "output") or []):
            if index not in state["items"]:
                events += _item_done(acc, index, item)
        events += acc.end_all_calls()
        events += _flush_server_calls(acc, everything=True)
        items = [state["items"][i] for i in sorted(state["items"])]
        # Citations in output order, as generate lists them (a message the stream did not
        # deliver was read last above).
        acc.citations[:] = _map_citations(items)
        acc.native_stop = _native_stop(response, items)
        acc.finished = True
        acc.usage = _map_usage(_get(response, "usage"))
        acc.provider_data = _map_provider_data(items, self.provider) or {}
        return events

    def _on_failed(self, acc: StreamAccumulator, event: Any) -> list[Event]:
        raise _failure(_get(event, "response"), self.provider)

    def _on_error(self, acc: StreamAccumulator, event: Any) -> list[Event]:
        raise _event_error(event, self.provider)


def _stream_state(acc: StreamAccumulator) -> dict[str, Any]:
    """Per stream: output items completed (by output_index), the indexes whose text or
    reasoning came as deltas (their done item must not add it again), where each message
    and each of its text parts started in the content (by output_index, and by
    (output_index, content_index)), and the annotations already cited."""
    state: dict[str, Any] = acc.scratch.setdefault(
        "responses",
        {"items": {}, "streamed": set(), "starts": {}, "cited": set(), "pending": {}, "next": 0},
    )
    return state


def _flush_server_calls(acc: StreamAccumulator, everything: bool = False) -> list[Event]:
    """The ``server_tool_call`` events of the hosted items done whose earlier output items
    are all done too (``everything``: all of them, at the end), so that the events and the
    result list them in output order, as generate does, even when the stream leaves an
    item to response.completed."""
    state = _stream_state(acc)
    events: list[Event] = []
    while state["next"] in state["items"]:
        call = state["pending"].pop(state["next"], None)
        state["next"] += 1
        events += acc.server_call(call) if call is not None else []
    if everything:
        for index in sorted(state["pending"], key=lambda i: i if isinstance(i, int) else -1):
            events += acc.server_call(state["pending"].pop(index))
    return events


def _part_start(acc: StreamAccumulator, event: Any) -> int:
    """Where the text part of a delta or annotation event starts in the content (the first
    event of the part says), its message marked as streamed."""
    index = _get(event, "output_index")
    state = _stream_state(acc)
    state["streamed"].add(index)
    state["starts"].setdefault(index, acc.content_length)
    start: int = state["starts"].setdefault(
        (index, _get(event, "content_index")), acc.content_length
    )
    return start


def _message_done(acc: StreamAccumulator, index: Any, item: Any) -> list[Event]:
    """A finished message: its text when no delta brought it, and its citations that no
    annotation event brought."""
    state = _stream_state(acc)
    text = _message_text(item)
    events = [] if index in state["streamed"] else acc.text(text)
    start = state["starts"].setdefault(index, acc.content_length - len(text))
    if not any(_get(p, "annotations") for p in _get(item, "content") or []):
        return events
    for part, n, cited in _hosted.message_citations(_raw_item(item), start):
        if (index, part, n) not in state["cited"]:
            events += acc.citation(cited)
    return events


def _item_done(acc: StreamAccumulator, index: Any, item: Any) -> list[Event]:
    """A finished output item: a call completes with its final arguments; a message's text
    or a reasoning summary that came without deltas is taken whole; a hosted item is a
    server call, complete."""
    state = _stream_state(acc)
    state["items"][index] = item
    kind = _get(item, "type")
    if kind == "message":
        return _message_done(acc, index, item) + _flush_server_calls(acc)
    if _hosted.is_hosted_item(kind):
        state["pending"][index] = _hosted.map_server_call(_raw_item(item))
        return _flush_server_calls(acc)
    if kind == "function_call":
        events = [] if acc.is_open(index) else acc.start_call(index, _get(item, "call_id"), "")
        open_call = acc.open_call(index)
        if open_call is not None:
            open_call.id = _get(item, "call_id") or open_call.id
            events += acc.name_call(index, _get(item, "name") or "")
            if not open_call.fragments:  # no deltas came: the done item's arguments
                open_call.arguments = _get(item, "arguments")
        return events + acc.end_call(index)
    if index in state["streamed"]:
        return []
    if kind == "reasoning":
        return acc.reasoning(_reasoning_text(item))
    return []


# A string: StreamAccumulator is imported for type checking only (it loads with the first
# stream, interface/calls.py).
Handler: TypeAlias = "Callable[[OpenAIResponsesInterface, StreamAccumulator, Any], list[Event]]"

# Every event of the Responses stream that carries output, status or an error
# (https://platform.openai.com/docs/api-reference/responses-streaming); the others
# (created, in_progress, content_part.*, *.done echoes) add nothing. A built-in tool's
# progress events (response.web_search_call.in_progress / .searching / .completed,
# file_search_call.*, code_interpreter_call.*, mcp_call.*, mcp_list_tools.*) carry only
# its item id: the call is reported at its response.output_item.done, which holds its
# action and results.
_HANDLERS: dict[str, Handler] = {
    "response.output_text.delta": OpenAIResponsesInterface._on_text,
    "response.output_text.annotation.added": OpenAIResponsesInterface._on_annotation,
    "response.refusal.delta": OpenAIResponsesInterface._on_refusal,
    "response.reasoning_summary_text.delta": OpenAIResponsesInterface._on_reasoning,
    "response.reasoning_text.delta": OpenAIResponsesInterface._on_reasoning,
    "response.output_item.added": OpenAIResponsesInterface._on_item_added,
    "response.function_call_arguments.delta": OpenAIResponsesInterface._on_arguments,
    "response.output_item.done": OpenAIResponsesInterface._on_item_done,
    "response.completed": OpenAIResponsesInterface._on_finished,
    "response.incomplete": OpenAIResponsesInterface._on_finished,
    "response.failed": OpenAIResponsesInterface._on_failed,
    "error": OpenAIResponsesInterface._on_error,
}


__all__ = ["OpenAIResponsesInterface"]
