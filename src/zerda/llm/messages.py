"""The unified history format (DESIGN.md §4): validation, the ``tool_result`` helper, and
tool-call id reconciliation shared by every provider.

Every function returns new objects; the caller's messages are never mutated.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from zerda.llm._traits import PART_TYPES
from zerda.llm.errors import InvalidRequestError
from zerda.llm.parts import check_parts, is_parts, text_of

if TYPE_CHECKING:
    from zerda.llm.types import ToolCall, ToolMessage

ROLES = ("system", "user", "assistant", "tool")
NOT_EXECUTED = "not executed"  # the content of the result repair=True gives an orphaned call
logger = logging.getLogger("zerda")


def tool_result(
    call: ToolCall | Mapping[str, Any], output: Any, is_error: bool = False
) -> ToolMessage:
    """The ``tool`` message answering ``call`` (a tool call dict as generate returned it).

    ``output`` is text, JSON data, or a list of content parts (``[text, image(...)]``) for a
    tool that returns media (docs/multimodal.md)."""
    return cast("ToolMessage", tool_message(call, output, is_error))


def tool_message(call: Mapping[str, Any], output: Any, is_error: bool = False) -> dict[str, Any]:
    """:func:`tool_result` as the plain dict the library's own code works with."""
    return {
        "role": "tool",
        "tool_call_id": call.get("id"),
        "name": call.get("name"),
        "content": output,
        "is_error": is_error,
    }


def _fail(index: int, problem: str) -> InvalidRequestError:
    return InvalidRequestError(f"messages[{index}]: {problem}")


# One encoder, built once: ``json.dumps`` with options builds a new encoder on every call,
# and ``JSONEncoder.encode`` a new C encoder on every call, each costing more than encoding
# a small tool call's arguments (a history of 1,000 round trips holds 2,000 such values).
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False)


def _c_encoder() -> Any:
    """CPython's C encoder with ``_ENCODER``'s settings (the arguments
    ``JSONEncoder.iterencode`` gives it), without the cycle check: a cycle ends in a
    RecursionError, which the check reports. None where there is none (PyPy)."""
    make = getattr(json.encoder, "c_make_encoder", None)
    quote = getattr(json.encoder, "c_encode_basestring", None)
    if make is None or quote is None:
        return None
    e = _ENCODER
    try:
        encoder = make(
            None, e.default, quote, None, e.key_separator, e.item_separator, False, False, False
        )
        encoder({"a": [1.5, None, True, "é"]}, 0)
    except Exception:  # another signature: the pure-Python path is as exact, only slower
        return None
    return encoder


_C_ENCODER = _c_encoder()


def _encode(value: Any) -> str:
    """``value`` as JSON text, as ``json.dumps(value, ensure_ascii=False, allow_nan=False)``
    writes it (canary: tests/llm/test_json_text.py)."""
    if _C_ENCODER is None or isinstance(value, (str, int, float)) or value is None:
        return _ENCODER.encode(value)
    return "".join(_C_ENCODER(value, 0))


class JSONObject(dict[str, Any]):
    """A checked tool call's arguments or tool output (equal to the caller's dict, a
    shallow copy of it) that carries the JSON text the check produced, so that providers
    sending it as text never encode it a second time (:func:`json_text`). A flat object
    (:func:`_flat_json`) has no text until a provider asks for one."""

    __slots__ = ("json",)
    json: str


class JSONArray(list[Any]):
    """As :class:`JSONObject`, for a tool output that is a JSON array."""

    __slots__ = ("json",)
    json: str


def json_text(value: Any) -> str:
    """``value`` as JSON text (``ensure_ascii=False``): the text the history check kept
    for it when it has one, else encoded now."""
    if type(value) in (JSONObject, JSONArray):
        text = getattr(value, "json", None)
        if text is None:
            text = value.json = _encode(value)
        return str(text)
    return _encode(value)


def tool_output_text(output: Any) -> str:
    """A tool's output as the text a provider's tool result carries: a string as it is,
    anything else (dict, list, number...) as JSON. The one rule for every provider whose
    tool results are text (OpenAI, Groq, Mistral, Ollama, Anthropic; Bedrock's non-object
    outputs); the history check has already refused what JSON cannot carry."""
    if isinstance(output, str):
        return output
    return json_text(output)  # the text the history check made, where it made one


def encoded(value: Any) -> tuple[str | None, str | None]:
    """(``value`` as JSON text, None) or (None, why it cannot be sent as JSON: NaN,
    infinities, sets, objects, text with a lone surrogate, nesting too deep)."""
    try:
        # _encode's two paths written out: this runs for every tool call and tool output
        # of a history, on every request.
        if _C_ENCODER is not None and isinstance(value, (dict, list)):
            text = "".join(_C_ENCODER(value, 0))
        else:
            text = _ENCODER.encode(value)
        if not text.isascii():  # ASCII text holds no lone surrogate: no copy to check it
            text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return None, (
            f"a string holds the lone surrogate {exc.object[exc.start : exc.end]!r}, "
            "which is not valid Unicode text"
        )
    except (TypeError, ValueError) as exc:
        return None, str(exc)
    except RecursionError:
        return None, "it is nested too deeply"
    return text, None


def _checked_json(value: Any) -> tuple[Any, str | None]:
    """(the value, carrying its JSON text when it is an object or array; None) or
    (None, why it cannot be sent as JSON: see :func:`encoded`)."""
    text, problem = encoded(value)
    if text is None:
        return None, problem
    if isinstance(value, dict):
        checked: Any = JSONObject(value)
    elif isinstance(value, list):
        checked = JSONArray(value)
    else:
        return value, None
    checked.json = text
    return checked, None


def json_problem(value: Any) -> str | None:
    """Why ``value`` cannot be sent as JSON (NaN, infinities, sets, objects, text with a
    lone surrogate), or None.

    Providers differ on such values (some send ``NaN``, some fail inside the SDK), so Zerda
    refuses them before anything is sent."""
    return encoded(value)[1]


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot be sent (a lone surrogate: not valid Unicode, which every
    provider's JSON refuses or mangles), as words following the field's name; or None."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (
            f"holds the lone surrogate {text[exc.start]!r} at position {exc.start}, "
            "which is not valid Unicode text"
        )
    return None


def _check_tool_call(index: int, j: int, call: Any) -> dict[str, Any]:
    if not isinstance(call, dict):
        raise _fail(index, f"tool_calls[{j}] must be a dict with 'id', 'name' and 'arguments'")
    name = call.get("name")
    if not isinstance(name, str) or not name:
        raise _bad_call_name(index, j, call)
    call_id = call.get("id")
    if call_id is not None and not isinstance(call_id, str):
        raise _fail(
            index, f"tool_calls[{j}].id must be a string or None, not {type(call_id).__name__}"
        )
    arguments = call.get("arguments")
    if type(arguments) is dict and arguments:
        arguments, problem = _checked_json(arguments)
        if problem:
            raise _fail(index, f"tool_calls[{j}].arguments cannot be sent as JSON: {problem}")
        return {"id": call_id or None, "name": name, "arguments": arguments}
    if not arguments:
        if arguments is not None and not isinstance(arguments, dict):
            raise _fail(
                index, f"tool_calls[{j}].arguments must be a dict, not {type(arguments).__name__}"
            )
        return {"id": call_id or None, "name": name, "arguments": {}}
    if not isinstance(arguments, dict):
        raise _fail(
            index, f"tool_calls[{j}].arguments must be a dict, not {type(arguments).__name__}"
        )
    arguments, problem = _checked_json(arguments)
    if problem:
        raise _fail(index, f"tool_calls[{j}].arguments cannot be sent as JSON: {problem}")
    return {"id": call_id or None, "name": name, "arguments": arguments}


def _bad_call_name(index: int, j: int, call: dict[str, Any]) -> InvalidRequestError:
    if isinstance(call.get("function"), dict):
        return _fail(
            index,
            f"tool_calls[{j}] looks like an OpenAI tool call ({{'type': 'function', 'function': ...}}); "
            "Zerda's assistant messages hold tool calls as {'id', 'name', 'arguments'} "
            "(docs/getting-started.md, 'The history format'): append result['message'] as generate returned it",
        )
    return _fail(index, f"tool_calls[{j}] has no 'name' (a non-empty string is required)")


def _check_text(index: int, message: dict[str, Any], *, optional: bool) -> str | None:
    content = message.get("content")
    if content is None and optional:
        return None
    if not isinstance(content, str):
        if "content" not in message:
            kind = "missing"
        else:
            kind = "None" if content is None else f"a {type(content).__name__}"
        raise _fail(
            index,
            f"{message['role']} message 'content' must be a string, got {kind}"
            + _blocks_hint(message["role"], content),
        )
    problem = text_problem(content)
    if problem:
        raise _fail(index, f"'content' {problem}")
    return content


def _blocks_hint(role: str, content: Any) -> str:
    """What to write instead of an assistant turn of Anthropic-shaped content blocks
    (``[{'type': 'text'}, {'type': 'tool_use'}]``), as met in histories written for its SDK."""
    if role != "assistant" or not isinstance(content, list):
        return ""
    return (
        "; that looks like Anthropic content blocks: an assistant message holds its text in "
        "'content' and its calls in 'tool_calls' ({'id', 'name', 'arguments'}); append "
        "result['message'] as generate returned it"
    )


def _check_message(index: int, message: Any) -> dict[str, Any]:
    if not isinstance(message, dict):
        raise _fail(index, f"must be a dict with a 'role', not {type(message).__name__}")
    role = message.get("role")
    # The roles of a tool loop's history first: this runs once per message on every call.
    if role == "tool":
        return _check_tool(index, message)
    if role == "assistant":
        return _check_assistant(index, message)
    if role == "user" or role == "system":
        content = message.get("content")
        if type(content) is str and content.isascii():  # ASCII holds no lone surrogate
            return {"role": role, "content": content}
        if isinstance(content, list):
            allowed = ("text", "cache_point") if role == "system" else PART_TYPES
            parts = check_parts(f"messages[{index}].content", content, allowed=allowed)
            return {"role": role, "content": parts}
        return {"role": role, "content": _check_text(index, message, optional=False)}
    if role is None and "stop_reason" in message and "message" in message:
        raise _fail(
            index,
            "this is a whole result of generate(), not a message: append result['message'] "
            "(and the tool results) to the history",
        )
    raise _fail(index, f"unknown role {role!r} (expected one of {', '.join(ROLES)})")


def _check_assistant(index: int, message: dict[str, Any]) -> dict[str, Any]:
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list):
        raise _fail(index, "'tool_calls' must be a list")
    content = message.get("content")
    if not (content is None or (type(content) is str and content.isascii())):
        content = _check_text(index, message, optional=True)
    out: dict[str, Any] = {
        "role": "assistant",
        "content": content,
        "tool_calls": [_check_tool_call(index, j, c) for j, c in enumerate(calls)],
    }
    provider_data = message.get("provider_data")
    if provider_data is not None and not isinstance(provider_data, dict):
        raise _fail(index, "'provider_data' must be a dict")
    if provider_data:
        out["provider_data"] = provider_data
    server_calls = message.get("server_tool_calls")
    if server_calls is not None and not (
        isinstance(server_calls, list) and all(isinstance(c, dict) for c in server_calls)
    ):
        raise _fail(index, "'server_tool_calls' must be a list of dicts (a result's own)")
    if server_calls:
        out["server_tool_calls"] = server_calls
    return out


def _check_tool(index: int, message: dict[str, Any]) -> dict[str, Any]:
    if "content" not in message or message["content"] is None:
        raise _fail(index, "tool message has no 'content' (the tool's output is required)")
    call_id = message.get("tool_call_id")
    if call_id is not None and not isinstance(call_id, str):
        raise _fail(index, "'tool_call_id' must be a string or None")
    name = message.get("name")
    if name is not None and not isinstance(name, str):
        raise _fail(index, "'name' must be a string or None")
    content = message["content"]
    if isinstance(content, str):
        problem = text_problem(content)
    elif type(content) is not dict and is_parts(content):
        content = check_parts(f"messages[{index}].content", content)
        problem = json_problem(content)
    else:
        content, problem = _checked_json(content)
    if problem:
        raise _fail(index, f"tool message 'content' cannot be sent as JSON: {problem}")
    return {
        "role": "tool",
        "tool_call_id": call_id or None,
        "name": name or None,
        "content": content,
        "is_error": bool(message.get("is_error", False)),
    }


def validate_messages(messages: str | Sequence[Any]) -> list[dict[str, Any]]:
    """Checked copies of ``messages`` (a string is one user turn); raises
    :class:`InvalidRequestError` naming the message index and field at the first problem."""
    return list(_checked(messages))


def _checked(messages: str | Sequence[Any]) -> Iterator[dict[str, Any]]:
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    if not isinstance(messages, Sequence):
        raise InvalidRequestError(
            f"messages must be a string or a list of messages, not {type(messages).__name__}"
        )
    return map(_check_message, range(len(messages)), messages)


def split_system(
    messages: list[dict[str, Any]], system: str | list[dict[str, Any]] | None
) -> tuple[str | None, list[dict[str, Any]]]:
    """The system prompt (the argument first, then every system message, joined) and the
    other messages. Providers send the system prompt first, whatever its position."""
    if isinstance(messages, History) and not messages.has_system:
        text = text_of(system) if system else ""
        return (text or None), messages
    texts = [text_of(c) for c in _system_contents(messages, system)]
    texts = [t for t in texts if t]
    rest = [m for m in messages if m["role"] != "system"]
    return ("\n\n".join(texts) if texts else None), rest


def system_parts(
    messages: list[dict[str, Any]], system: str | list[dict[str, Any]] | None
) -> list[dict[str, Any]] | None:
    """The system prompt as text parts and cache points, in order, when it holds a cache
    point (else None: the joined text of :func:`split_system` says it all)."""
    parts: list[dict[str, Any]] = []
    for content in _system_contents(messages, system):
        items = [{"type": "text", "text": content}] if isinstance(content, str) else content
        parts += [p for p in items if p["type"] == "cache_point" or p["text"]]
    return parts if any(p["type"] == "cache_point" for p in parts) else None


def _system_contents(
    messages: list[dict[str, Any]], system: str | list[dict[str, Any]] | None
) -> list[Any]:
    head = [system] if system else []
    if isinstance(messages, History) and not messages.has_system:
        return head
    return head + [m["content"] for m in messages if m["role"] == "system" and m["content"]]


def check_system(system: Any) -> str | list[dict[str, Any]] | None:
    """The ``system=`` argument checked: a string, or a list of text parts and cache points."""
    if system is None or isinstance(system, str):
        return system
    if isinstance(system, list):
        return check_parts("system", system, allowed=("text", "cache_point"))
    raise InvalidRequestError("system must be a string or a list of text parts and cache points")


MakeId = Callable[[str | None, int, int], str | None]


class History(list[dict[str, Any]]):
    """Checked messages with every tool id resolved (:func:`check_history`), and what the
    later passes of a request need to know about them, gathered on the way: whether any
    message holds content parts, whether any is a system message, and every tool name of
    the history's calls and results. A history of plain text and tool calls (an agent's
    usual one) thus skips the media, cache-point and system passes altogether."""

    __slots__ = ("has_parts", "has_server_calls", "has_system", "names")

    def __init__(self) -> None:
        super().__init__()
        self.has_parts = False
        self.has_system = False
        self.has_server_calls = False  # an assistant turn holds server_tool_calls
        self.names: list[str] = []


def _pending_calls(
    index: int, message: dict[str, Any], used: set[str], make_id: MakeId, names: list[str]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The calls of an assistant message waiting for their results, and the message with
    the ids to send (itself when no id changes); the calls' names go on ``names``."""
    pending = []
    changed = False
    for j, call in enumerate(message["tool_calls"]):
        names.append(call["name"])
        orig = call["id"]
        new_id = make_id(orig, index, j)
        suffix = 0
        while new_id is not None and new_id in used:
            # A duplicated id would pair a result with the wrong call: make it unique.
            suffix += 1
            new_id = make_id(f"{orig}_{suffix}", index, j)
        if new_id is not None:
            used.add(new_id)
        changed = changed or new_id != orig
        pending.append({"orig": orig, "id": new_id, "name": call["name"], "done": False})
    if changed:
        calls = [{**c, "id": p["id"]} for c, p in zip(message["tool_calls"], pending, strict=True)]
        message = {**message, "tool_calls": calls}
    return pending, message


def _find_call(wanted: str | None, pending: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The open call of ``pending`` a result with the id ``wanted`` answers, or None."""
    if wanted is not None:
        for p in pending:
            if p["orig"] == wanted and not p["done"]:
                return p
    open_calls = [p for p in pending if not p["done"]]
    if wanted is None or all(p["orig"] is None for p in open_calls):
        # Id-less results (Gemini, Ollama) pair with the open calls in order.
        return open_calls[0] if open_calls else None
    return None


def _match_result(
    index: int, message: dict[str, Any], pending: list[dict[str, Any]]
) -> dict[str, Any]:
    wanted = message["tool_call_id"]
    match = _find_call(wanted, pending)
    if match is None:
        if not pending:
            raise _fail(index, "tool result without a preceding assistant message with tool_calls")
        raise _fail(
            index,
            f"tool_call_id {wanted!r} matches no open tool call of the preceding assistant message",
        )
    match["done"] = True
    return match


def default_id(orig: str | None, index: int, j: int) -> str | None:
    """Keeps an existing id; synthesises a deterministic one for an id-less call."""
    return orig if orig else f"call_{index}_{j}"


def check_history(
    messages: str | Sequence[Any], make_id: MakeId = default_id, *, repair: bool = False
) -> History:
    """:func:`validate_messages` and :func:`resolve_tool_ids` in one pass over the caller's
    messages (what every request runs, so its cost stays one walk of the history)."""
    if isinstance(messages, list):
        history = _plain_history(messages, make_id, repair)
        if history is not None:
            return history
    return resolve_tool_ids(_checked(messages), make_id, repair=repair)


def _plain_history(messages: list[Any], make_id: MakeId, repair: bool = False) -> History | None:
    """:func:`check_history` of a history of plain messages (text, tool calls with object
    arguments, tool results of text or a JSON object, no content parts), written as one
    loop; None at the first message of any other shape, or with any problem, or needing
    repair: the full check then runs from the start, and says what is wrong.

    Why a second path: an agent resends its whole history on every turn, and the full
    check (a helper per field, a copy of every value) was half of Anthropic's CPU per call
    at 1,000 round trips; this loop takes 60% of it (38M instructions against 63M). Both
    paths give equal results (tests/llm/test_messages_plain.py)."""
    out = History()
    names = out.names
    used: set[str] = set()
    pending: list[dict[str, Any]] = []
    waiting = 0  # how many of pending's calls have no result yet
    for index, message in enumerate(messages):
        if type(message) is not dict:
            return None
        role = message.get("role")
        content = message.get("content")
        if role == "tool":
            checked = _plain_result(message, content, pending)
            if checked is None:
                return None
            waiting -= 1
            names.append(checked["name"])
            out.append(checked)
            continue
        if waiting:
            return None  # a call left unanswered: an error, or repair's to answer
        if role == "assistant":
            assistant = _plain_assistant(message, content)
            if assistant is None:
                return None
            pending = []
            if assistant["tool_calls"]:
                pending, assistant = _pending_calls(index, assistant, used, make_id, names)
                waiting = len(pending)
            out.append(assistant)
        elif (role == "user" or role == "system") and _plain_text(content):
            pending = []
            out.has_system = out.has_system or role == "system"
            out.append({"role": role, "content": content})
        else:
            return None
    return None if waiting and repair else out  # repair answers the last turn's open calls


def _plain_text(content: Any) -> bool:
    return type(content) is str and (content.isascii() or text_problem(content) is None)


def _flat_json(value: dict[str, Any]) -> bool:
    """Whether ``value`` maps ASCII keys to JSON scalars that encode as they are (ASCII
    text, integers, booleans, None, finite floats): its encoding cannot fail."""
    for key, item in value.items():
        if type(key) is not str or not key.isascii():
            return False
        kind = type(item)
        if kind is str:
            if not item.isascii():
                return False
        elif not (kind is int or kind is bool or item is None) and not (
            kind is float and math.isfinite(item)
        ):
            return False
    return True


def _plain_object(value: dict[str, Any]) -> dict[str, Any] | None:
    """A plain dict as :func:`_checked_json` checks it, or None when it cannot be sent."""
    if _flat_json(value):
        # Its values immutable, the caller's dict is as safe to share as a copy (no
        # converter mutates a message): no copy, and no text until a provider needs one
        # (Anthropic, Bedrock, Gemini and Ollama send tool-call arguments as objects).
        return value
    checked, problem = _checked_json(value)
    return None if problem else checked


def _plain_assistant(message: dict[str, Any], content: Any) -> dict[str, Any] | None:
    if "server_tool_calls" in message:
        return None  # a hosted tools' turn (DESIGN §18): the full check keeps and flags it
    calls = message.get("tool_calls") or []
    provider_data = message.get("provider_data")
    if type(calls) is not list or not (provider_data is None or type(provider_data) is dict):
        return None
    if content is not None and not _plain_text(content):
        return None
    checked = []
    for call in calls:
        if type(call) is not dict:
            return None
        name, call_id, arguments = call.get("name"), call.get("id"), call.get("arguments")
        if type(name) is not str or not name or not (call_id is None or type(call_id) is str):
            return None
        if type(arguments) is dict and arguments:
            arguments = _plain_object(arguments)
            if arguments is None:
                return None
        elif arguments is None or type(arguments) is dict:
            arguments = {}
        else:
            return None
        checked.append({"id": call_id or None, "name": name, "arguments": arguments})
    out = {"role": "assistant", "content": content, "tool_calls": checked}
    if provider_data:
        out["provider_data"] = provider_data
    return out


def _plain_result(
    message: dict[str, Any], content: Any, pending: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """A tool result of text or a JSON object, with its call's id and name, its call
    marked done; None for any other result, or one that answers no open call."""
    call_id, name = message.get("tool_call_id"), message.get("name")
    if not (call_id is None or type(call_id) is str) or not (name is None or type(name) is str):
        return None
    if type(content) is dict:
        content = _plain_object(content)
    elif not _plain_text(content):
        return None
    match = None if content is None else _find_call(call_id or None, pending)
    if match is None:
        return None
    match["done"] = True
    return {
        "role": "tool",
        "tool_call_id": match["id"],
        "name": name or match["name"],
        "content": content,
        "is_error": bool(message.get("is_error", False)),
    }


def resolve_tool_ids(
    messages: Iterable[dict[str, Any]],
    make_id: MakeId = default_id,
    *,
    repair: bool = False,
) -> History:
    """Validated ``messages`` where every tool call has an id and every tool result
    carries its call's id and name (system messages are kept in place). A message that
    changes is a new dict; one that does not is the validated message itself (validated
    messages are already Zerda's own copies, never the caller's).

    Results are paired with the calls of the nearest preceding assistant message: by id
    when both have one, else by position. ``make_id(orig, message_index, call_index)`` gives
    the id to send (Mistral maps foreign ids to its 9-character form; a provider that needs
    no ids may return None); the same id goes on the call and on its result.

    By default raises :class:`InvalidRequestError` for a result that answers no call, or a
    call left without a result before the conversation moves on. With ``repair=True`` a
    result without a call is dropped (a warning on the ``zerda`` logger names it) and an
    unanswered call gets an ``is_error`` result saying "not executed", placed right after
    the turn's other results (also at the end of the history).
    """
    out = History()
    names = out.names
    used: set[str] = set()
    pending: list[dict[str, Any]] = []
    pending_at = -1
    index = -1
    for index, message in enumerate(messages):
        role = message["role"]
        if role == "tool":
            result = _paired_result(index, message, pending, repair)
            if result is not None:
                names.append(result["name"])
                out.has_parts = out.has_parts or type(result["content"]) is list
                out.append(result)
            continue
        if pending:
            _end_turn(out, pending, pending_at, index, repair)
        if role == "assistant" and "server_tool_calls" in message:
            out.has_server_calls = True
        if role == "assistant" and message["tool_calls"]:
            pending, message = _pending_calls(index, message, used, make_id, names)
            pending_at = index
        else:
            pending = []
            out.has_system = out.has_system or role == "system"
            out.has_parts = out.has_parts or type(message["content"]) is list
        out.append(message)
    if repair:
        out += _not_executed(pending, pending_at, index + 1)
    return out


def _paired_result(
    index: int, message: dict[str, Any], pending: list[dict[str, Any]], repair: bool
) -> dict[str, Any] | None:
    """A tool result with its call's id and name; None: it answers no call and is
    dropped (``repair``), else that raises."""
    try:
        match = _match_result(index, message, pending)
    except InvalidRequestError as exc:
        if not repair:
            raise
        logger.warning("repair: dropped a tool result: %s", exc)
        return None
    if match["id"] != message["tool_call_id"] or not message["name"]:
        # validated copies already: a new dict only where something changes
        message = {
            **message,
            "tool_call_id": match["id"],
            "name": message["name"] or match["name"],
        }
    return message


def _end_turn(
    out: History, pending: list[dict[str, Any]], at: int, index: int, repair: bool
) -> None:
    """The conversation moves on with calls unanswered: "not executed" results for them
    (``repair``), else the refusal."""
    if repair:
        out += _not_executed(pending, at, index)
    else:
        _check_answered(pending, at, index)


def _not_executed(pending: list[dict[str, Any]], at: int, index: int) -> list[dict[str, Any]]:
    """repair=True: an ``is_error`` result for each call of messages[at] still unanswered
    at messages[index]."""
    missing = [p for p in pending if not p["done"]]
    for p in missing:
        p["done"] = True
        logger.warning(
            "repair: tool call %r of messages[%d] has no result before messages[%d]; answered %r",
            p["name"],
            at,
            index,
            NOT_EXECUTED,
        )
    return [
        {
            "role": "tool",
            "tool_call_id": p["id"],
            "name": p["name"],
            "content": NOT_EXECUTED,
            "is_error": True,
        }
        for p in missing
    ]


def _check_answered(pending: list[dict[str, Any]], at: int, index: int) -> None:
    missing = [p for p in pending if not p["done"]]
    if missing:
        names = ", ".join(repr(p["name"]) for p in missing)
        raise _fail(at, f"tool call(s) {names} have no tool result before messages[{index}]")
