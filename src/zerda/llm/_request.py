"""Request normalisation: from what a caller passes to a checked, provider-neutral
:class:`Request`.

Everything here is pure (the caller's messages, tools and schemas are never mutated) and
needs no SDK. The base (``generate`` / ``stream``) and the tool loop both import it; neither
imports the other for it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any

from zerda.llm import _names
from zerda.llm._exact import copy_json, fingerprint
from zerda.llm._record import hot_record
from zerda.llm._schema_check import check_tool_schema
from zerda.llm._schema_walk import bracket_bound, json_depth
from zerda.llm._timeout import check_timeout as check_timeout
from zerda.llm._timeout import split_timeout as split_timeout
from zerda.llm._timeout import timeout_problem as timeout_problem
from zerda.llm.errors import InvalidRequestError
from zerda.llm.executable import ExecutableTool
from zerda.llm.hosted import check_hosted, is_hosted
from zerda.llm.messages import (
    check_history,
    check_system,
    encoded,
    split_system,
    system_parts,
    text_problem,
)
from zerda.llm.parts import check_media, drop_cache_points, move_tool_media
from zerda.llm.tools import _normalize_tool

if TYPE_CHECKING:
    from zerda.llm._structured import OutputSpec
    from zerda.llm._traits import Media
    from zerda.llm._traits import Row as ProviderSpec
    from zerda.llm.reasoning import Plan

TOOL_CHOICES = ("auto", "none", "required")

# How deep a tool schema may nest (dicts and lists), on every provider. Deeper schemas are
# refused before sending: the SDKs and Zerda's own adapters (Gemini's) walk schemas
# recursively, and fail from ~250 levels in different ways; no real tool needs 100.
MAX_SCHEMA_DEPTH = 100


@hot_record
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
    # reasoning= checked against the model's family (zerda.llm.reasoning); set by the base,
    # which knows the model.
    reasoning: Plan | None = None
    # Seconds for this call only (None: the interface's timeout); each provider applies it
    # the way its SDK documents (docs/providers.md, "Timeouts").
    timeout: float | None = None
    # The system prompt as text parts and cache points, where the provider honours cache
    # points and the system holds one (else None: ``system`` says it all).
    system_parts: list[dict[str, Any]] | None = None
    cache_tools: bool = False  # generate(cache=True): a cache point after the tools
    # response_format, checked; in tool mode its answer tool is already in ``tools``.
    output: OutputSpec | None = None
    # Names the row refuses were sent mapped (``_names``): the name sent -> the original,
    # for mapping the answer back. Empty when every name was sent as it is.
    tool_names: dict[str, str] = field(default_factory=dict)
    # The hosted tools (DESIGN §18), checked, in the caller's order: {"type", ...options}.
    hosted: tuple[dict[str, Any], ...] = ()
    # An assistant turn of the history holds server_tool_calls: the base sends their
    # readable text where the wire cannot take its own blocks back (DESIGN §18).
    server_history: bool = False
    include_raw: bool = False  # result["raw"]: the provider's body (DESIGN §18)


# --- tools -----------------------------------------------------------------------------


def schema_depth(schema: Any) -> int:
    """How deep dicts and lists nest in ``schema`` (:func:`zerda.llm._schema_walk.json_depth`)."""
    return json_depth(schema)


def _check_schema(index: int, name: str, schema: dict[str, Any]) -> None:
    text, problem = encoded(schema)
    # Each level of nesting opens a bracket, so their count bounds the depth: the walk
    # runs only for a schema that could be too deep (or that JSON could not encode).
    if text is None or bracket_bound(text) > MAX_SCHEMA_DEPTH:
        depth = schema_depth(schema)
        if depth > MAX_SCHEMA_DEPTH:
            raise InvalidRequestError(
                f"tools[{index}] ({name!r}): the schema nests {depth} levels deep (dicts and "
                f"lists); Zerda sends at most {MAX_SCHEMA_DEPTH} on every provider"
            )
    if problem or text is None:
        raise InvalidRequestError(
            f"tools[{index}] ({name!r}): the schema cannot be sent as JSON: {problem}"
        )
    check_tool_schema(index, name, text)  # valid JSON Schema, usable (cached per schema)


# A tool dict holds one of these; a dict with none of them (``{"city": "Paris", "temp": 18}``)
# is most likely what the function returned: ``tools=[get_weather("x")]``.
_TOOL_KEYS = frozenset({"name", "description", "parameters", "input_schema", "function"})
_CALLED_HINT = (
    " (was the function called? pass the function itself: tools=[get_weather], "
    "not tools=[get_weather(...)])"
)


# The tools checked already (:func:`_unwrap_tool`), by their exact-type digest: an agent
# loop sends the same tools on every turn, and checking one (its schema encoded and checked,
# its name and description) cost more than its digest. Bounded; cleared when full.
_CHECKED_TOOLS: dict[bytes, dict[str, Any]] = {}
_CHECKED_TOOLS_MAX = 512


def _unwrap_tool(index: int, tool: Any) -> dict[str, Any]:
    """A unified tool dict from a unified or an OpenAI-style ({"type": "function"}) dict:
    a tool seen before (the same content, of the same exact types: :mod:`zerda.llm._exact`)
    is not checked again. What is read of a checked tool (its name, description, schema
    and ``strict``) holds no buffer (text and JSON), so a tool whose digest equals a checked
    tool's gives the same unified tool."""
    key = fingerprint(tool) if type(tool) is dict else None
    known = _CHECKED_TOOLS.get(key) if key is not None else None
    if known is not None:
        # The remembered tool, with its own deep copy of the schema (made when it was
        # checked): the caller's schema may change after the call that passed it.
        return dict(known)
    unified = _checked_tool(index, tool)
    if key is not None:
        if len(_CHECKED_TOOLS) >= _CHECKED_TOOLS_MAX:
            _CHECKED_TOOLS.clear()
        _CHECKED_TOOLS[key] = {**unified, "parameters": copy_json(unified["parameters"])}
    return unified


def _checked_tool(index: int, tool: Any) -> dict[str, Any]:
    """:func:`_unwrap_tool`'s checks, for a tool not seen before."""
    if not isinstance(tool, dict):
        raise InvalidRequestError(
            f"tools[{index}] must be a dict, a function or a pydantic model, not "
            f"{type(tool).__name__}{_CALLED_HINT}"
        )
    if tool.get("type") == "function" and isinstance(tool.get("function"), dict):
        tool = tool["function"]
    try:
        t = _normalize_tool(tool)
    except ValueError as exc:
        hint = "" if _TOOL_KEYS & set(tool) else _CALLED_HINT
        raise InvalidRequestError(f"tools[{index}]: {exc}{hint}") from None
    if not isinstance(t["name"], str):
        raise InvalidRequestError(f"tools[{index}]: 'name' must be a string")
    if not isinstance(t["schema"], dict):
        raise InvalidRequestError(f"tools[{index}] ({t['name']!r}): the schema must be a dict")
    _check_schema(index, t["name"], t["schema"])
    description = t["description"] if isinstance(t["description"], str) else ""
    problem = text_problem(description)
    if problem:
        raise InvalidRequestError(f"tools[{index}] ({t['name']!r}): the description {problem}")
    unified: dict[str, Any] = {
        "name": t["name"],
        "description": description or "",
        "parameters": t["schema"],
    }
    if tool.get("strict") is True:  # OpenAI-shaped providers send it (function.strict)
        unified["strict"] = True
    return unified


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
    # Hosted tools are checked by normalize_hosted; indices stay the caller's.
    out = [_unwrap_tool(i, t) for i, t in enumerate(tools) if not is_hosted(t)]
    if not out:
        return None
    seen: set[str] = set()
    for i, t in enumerate(out):
        if t["name"] in seen:
            raise InvalidRequestError(f"tools[{i}]: duplicate tool name {t['name']!r}")
        seen.add(t["name"])
    return out


def normalize_hosted(tools: Sequence[Any] | None) -> tuple[dict[str, Any], ...]:
    """The hosted tools of ``tools`` (DESIGN §18), each checked (zerda.llm.hosted), in order."""
    if not tools or isinstance(tools, (str, bytes, dict)) or not isinstance(tools, Sequence):
        return ()
    return tuple(check_hosted(i, t) for i, t in enumerate(tools) if is_hosted(t))


def check_hosted_row(
    tools: Sequence[Any], hosted: tuple[dict[str, Any], ...], spec: ProviderSpec, model: str | None
) -> None:
    """The checked hosted tools (``Request.hosted``, from ``tools``) against what the row and
    this model run: capability refusals naming each tool by its index in ``tools``."""
    from zerda.llm.hosted import check_for_row

    indices = [i for i, tool in enumerate(tools) if is_hosted(tool)]
    for index, tool in zip(indices, hosted, strict=True):
        check_for_row(index, tool, spec, model)


def with_answer_tool(
    output: OutputSpec,
    tools: list[dict[str, Any]] | None,
    choice: Any,
    can_require: bool,
    can_name: bool = True,
) -> tuple[list[dict[str, Any]], Any]:
    """Tools and tool_choice for tool-mode structured output: the answer tool added and
    forced (alone it is named, or required where a named choice cannot be sent; beside the
    caller's tools any call is required, so the model may still use them first)."""
    from zerda.llm._structured import answer_tool

    tool = answer_tool(output)
    kind = tool["parameters"].get("type")
    if kind != "object":  # a tool's arguments are an object on every provider
        raise InvalidRequestError(
            f"response_format {output.name!r}: in tool mode the answer travels as a tool's "
            f'arguments, which must be an object schema ("type": "object"), not '
            f"{'type ' + repr(kind) if kind is not None else 'a schema without a type'}; "
            "a row with native structured output may take it",
            capability=True,
        )
    if any(t["name"] == tool["name"] for t in tools or []):
        raise InvalidRequestError(
            f"response_format {output.name!r}: a tool of that name is already in tools"
        )
    if not tools:
        if choice not in (None, "auto", "required"):
            raise InvalidRequestError(
                f"tool_choice {choice!r}: the answer of response_format comes in a forced tool"
            )
        return [tool], {"name": tool["name"]} if can_name or not can_require else "required"
    if choice == "none":
        raise InvalidRequestError(
            "tool_choice 'none' leaves no way to give the response_format answer (tool mode)"
        )
    if choice in (None, "auto"):
        choice = "required" if can_require else "auto"
    return [*tools, tool], choice


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


# --- the row's rules -------------------------------------------------------------------


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check_tool_names(tools: list[dict[str, Any]] | None, spec: ProviderSpec) -> None:
    """A tool name holding a control character (``"get_weather\\n"``, a slip in the
    caller's code) is refused; any other name outside the row's rule is sent mapped
    (:mod:`zerda.llm._names`)."""
    for i, t in enumerate(tools or []):
        if _CONTROL.search(t["name"]):
            raise InvalidRequestError(
                f"tools[{i}]: {spec.name} refuses the tool name {t['name']!r}: "
                f"tool names there are {spec.traits.tool_name_rule}"
            )


def check_tool_choice(
    choice: str | dict[str, str] | None, parallel_tool_calls: bool | None, spec: ProviderSpec
) -> None:
    """tool_choice and parallel_tool_calls=False only where the row says the provider
    honours them: never silently ignored (a capability refusal: another row may)."""
    supported = spec.traits.tool_choice
    kind = "name" if isinstance(choice, dict) else choice
    if kind is not None and kind not in supported:
        shown = ", ".join(repr(c) if c != "name" else "a tool name" for c in sorted(supported))
        raise InvalidRequestError(
            f"tool_choice {kind!r}: {spec.name} cannot enforce it (supported: {shown})",
            capability=True,
        )
    if parallel_tool_calls is False and not spec.traits.parallel_tool_calls:
        able = spec.rows_with("parallel_tool_calls")
        raise InvalidRequestError(
            f"parallel_tool_calls=False: {spec.name} has no such switch, so it cannot "
            f"be honoured (providers that have it: {', '.join(able)})",
            capability=True,
        )


# --- options ---------------------------------------------------------------------------


def _check_number(name: str, value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidRequestError(f"{name} must be a number, not {value!r}")
    if not math.isfinite(value):
        raise InvalidRequestError(f"{name} must be a finite number, not {value!r}")


def _check_max_tokens(value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidRequestError(f"max_tokens must be a positive integer, not {value!r}")


def _check_stop(stop: Any) -> list[str] | None:
    """``stop`` as a list of strings (a string is one stop sequence), or None."""
    if stop is None:
        return None
    items = [stop] if isinstance(stop, str) else stop
    if isinstance(items, (bytes, dict)) or not isinstance(items, Sequence):
        raise InvalidRequestError(f"stop must be a string or a list of strings, not {stop!r}")
    for j, item in enumerate(items):
        if not isinstance(item, str):
            raise InvalidRequestError(f"stop[{j}] must be a string, not {item!r}")
        if text_problem(item):
            raise InvalidRequestError(f"stop[{j}] {text_problem(item)}")
    return list(items) or None


def _check_options(
    native: dict[str, Any],
    system: Any,
    max_tokens: Any,
    temperature: Any,
    top_p: Any,
    parallel_tool_calls: Any,
) -> None:
    """Values no provider takes, refused the same way everywhere (each SDK would send,
    mangle or reject them differently)."""
    if "stream" in native:
        raise InvalidRequestError(
            "stream= is not an option of generate() or run(), which return one result: "
            "call llm.stream(...) (or llm.stream_async(...)) for a streamed answer"
        )
    if isinstance(system, str) and text_problem(system):  # parts: checked by check_system
        raise InvalidRequestError(f"system {text_problem(system)}")
    _check_number("temperature", temperature)
    _check_number("top_p", top_p)
    _check_max_tokens(max_tokens)
    if parallel_tool_calls is not None and not isinstance(parallel_tool_calls, bool):
        raise InvalidRequestError(
            f"parallel_tool_calls must be True, False or None, not {parallel_tool_calls!r}"
        )


# --- the whole request -----------------------------------------------------------------

IdRule = Callable[[str | None, int, int], str | None]


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


def map_parts(
    messages: list[dict[str, Any]],
    spec: ProviderSpec,
    tool_results: Media,
    cache: bool,
    has_parts: bool = True,
) -> list[dict[str, Any]]:
    """Content parts (already checked against the row by ``check_media``) made ready
    for the provider: cache points dropped where caching is automatic, the last user
    turn marked with ``cache=True`` where it is explicit, media that tool messages cannot
    carry moved to a user message after them (docs/multimodal.md). ``has_parts`` False
    (no message holds a list of parts) skips the walks that only parts concern."""
    if not spec.traits.cache_points:
        messages = drop_cache_points(messages) if has_parts else messages
    elif cache:
        messages = _mark_last_turn(messages)
    return move_tool_media(messages, tool_results) if has_parts else messages


def map_system_parts(
    messages: list[dict[str, Any]],
    system: str | list[dict[str, Any]] | None,
    text: str | None,
    cache: bool,
) -> list[dict[str, Any]] | None:
    """The system prompt as parts, for a provider that honours cache points, where there
    is one to honour (``cache=True`` adds one after the system prompt)."""
    parts = system_parts(messages, system)
    if cache and text and not (parts and parts[-1]["type"] == "cache_point"):
        parts = [*(parts or [{"type": "text", "text": text}]), {"type": "cache_point"}]
    return parts


def prepare(
    spec: ProviderSpec,
    tool_id: IdRule,
    messages: Any,
    *,
    tool_results: Media | None = None,
    system: str | list[dict[str, Any]] | None = None,
    tools: Sequence[Any] | None = None,
    tool_choice: Any = None,
    max_tokens: int | None = None,
    temperature: float | None = None,
    top_p: float | None = None,
    stop: str | Sequence[str] | None = None,
    parallel_tool_calls: bool | None = None,
    timeout: Any = None,
    cache: bool = False,
    output: OutputSpec | None = None,
    repair: bool = False,
    **native: Any,
) -> Request:
    """Checks all that can be checked before sending, against ``spec``'s rules; ``tool_id``
    is the id rule for history tool calls, ``tool_results`` what this model's tool results
    carry (default: the row's). ``repair``: :func:`zerda.llm.messages.resolve_tool_ids`.
    Tool names the row refuses are mapped (:mod:`zerda.llm._names`) everywhere."""
    _check_options(native, system, max_tokens, temperature, top_p, parallel_tool_calls)
    stop, system = _checked_texts(stop, system, repair)
    unified_tools, tool_choice = _checked_tools(spec, tools, tool_choice, output)
    history = check_history(messages, tool_id, repair=repair)
    system_text, rest, system_parts = _conversation(spec, history, system, tool_results, cache)
    if stop and not spec.traits.stop_sequences:
        raise InvalidRequestError(
            f"stop: {spec.name} has no stop sequences, so they cannot be honoured",
            capability=True,
        )
    hosted = normalize_hosted(tools)
    if tool_choice == "required" and hosted and not unified_tools:
        # Forcing a hosted tool means something else on every API (or nothing): refused.
        raise InvalidRequestError(
            "tool_choice 'required' needs a function tool: the provider decides when to run "
            "its hosted tools"
        )
    choice = normalize_tool_choice(tool_choice, unified_tools)
    check_tool_choice(choice, parallel_tool_calls, spec)
    return Request(
        system=system_text,
        **_renamed(spec, history, rest, unified_tools, choice),
        max_tokens=max_tokens,
        temperature=temperature,
        top_p=top_p,
        stop=list(stop) if stop else None,
        parallel_tool_calls=parallel_tool_calls,
        native=native,
        timeout=check_timeout(timeout),
        system_parts=system_parts,
        cache_tools=bool(cache and spec.traits.cache_points and unified_tools),
        output=output,
        hosted=hosted,
        server_history=history.has_server_calls,
    )


def _checked_texts(stop: Any, system: Any, repair: Any) -> tuple[Any, Any]:
    """(stop, system) checked, as sent; ``repair`` checked too (prepare's order)."""
    stop = _check_stop(stop)
    system = check_system(system)
    if not isinstance(repair, bool):
        raise InvalidRequestError(f"repair must be True or False, not {repair!r}")
    return stop, system


def _checked_tools(
    spec: ProviderSpec, tools: Sequence[Any] | None, tool_choice: Any, output: OutputSpec | None
) -> tuple[list[dict[str, Any]] | None, Any]:
    """The tools in the unified shape, their names checked against the row; with the answer
    tool of a response_format sent in tool mode (and the tool_choice that forces it)."""
    traits = spec.traits
    unified_tools = normalize_tools(tools)
    check_tool_names(unified_tools, spec)
    if output is not None and output.mode == "tool":
        unified_tools, tool_choice = with_answer_tool(
            output,
            unified_tools,
            tool_choice,
            "required" in traits.tool_choice,
            "name" in traits.tool_choice,
        )
    return unified_tools, tool_choice


def _conversation(
    spec: ProviderSpec, history: Any, system: Any, tool_results: Media | None, cache: bool
) -> tuple[Any, list[Any], Any]:
    """(system text, the other messages with their parts mapped for the row, the system
    parts with cache points or None): media checked against what the row takes."""
    traits = spec.traits
    results_media = tool_results if tool_results is not None else traits.tool_results
    if history.has_parts:
        # Indices as the caller gave them: checked before system messages are taken out.
        check_media(history, spec.name, traits.user, results_media)
    system_text, rest = split_system(history, system)
    rest = map_parts(rest, spec, results_media, cache, history.has_parts)
    cached = cache and traits.cache_points
    parts = map_system_parts(history, system, system_text, cached) if traits.cache_points else None
    return system_text, rest, parts


def _renamed(
    spec: ProviderSpec, history: Any, rest: list[Any], tools: Any, choice: Any
) -> dict[str, Any]:
    """The request's messages, tools and tool_choice with the tool names the row refuses
    mapped (:mod:`zerda.llm._names`), and the map back (``tool_names``)."""
    mapping = _names.name_map(
        [*(t["name"] for t in tools or ()), *history.names],
        spec.traits.tool_name,
        spec.traits.tool_name_rule,
        spec.name,
    )
    return {
        "messages": _names.rename_messages(rest, mapping),
        "tools": _names.rename_tools(tools, mapping),
        "tool_choice": _names.rename_choice(choice, mapping),
        "tool_names": {sent: original for original, sent in mapping.items()},
    }
