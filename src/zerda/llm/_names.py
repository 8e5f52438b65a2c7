"""Tool names a provider refuses, mapped to names it accepts and back (DESIGN §15).

MCP tools are named ``server.tool``; other providers' histories may hold names with spaces
or over 64 characters. Each provider's row says which names it accepts
(``Traits.tool_name``); a name outside that rule is sent under a mapped name, the same for
the tool, for every history call and for every history result of the request, and the
provider's answer is mapped back, so the caller only ever sees the original names.

The mapping is a pure function of the request's set of names: ``a.b`` becomes ``a_b``; when
that is not enough (over 64 characters, or two names that would become the same, or the
cleaned name is already another tool's) the cleaned name is cut and given an 8-character
digest of the original, ``<cleaned[:55]>_<sha256[:8]>``. So the same tools give the same
names on every call, and no two tools ever share one.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from typing import Any

from zerda.llm.errors import InvalidRequestError

_BAD = re.compile(r"[^a-zA-Z0-9_-]")
_FIRST = re.compile(r"[a-zA-Z_]")
MAX_MAPPED = 64  # every provider's limit is at least 64 (registry: NAME_64, Gemini 128)


def _cleaned(name: str) -> str:
    out = _BAD.sub("_", name)
    return out if _FIRST.match(out) else f"_{out}"


def _hashed(name: str, cleaned: str) -> str:
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
    return f"{cleaned[: MAX_MAPPED - 9]}_{digest}"


def name_map(names: Iterable[str], pattern: str, rule: str, provider: str) -> dict[str, str]:
    """original -> name sent, for the names ``pattern`` refuses (the others are sent as
    they are and are absent from the map)."""
    check = re.compile(pattern)
    unique = list(dict.fromkeys(names))
    valid = {n for n in unique if check.fullmatch(n)}
    refused = [n for n in unique if n not in valid]
    if not refused:
        return {}
    cleaned = {n: _cleaned(n) for n in refused}
    counts: dict[str, int] = {}
    for c in cleaned.values():
        counts[c] = counts.get(c, 0) + 1
    out: dict[str, str] = {}
    for name in refused:
        c = cleaned[name]
        simple = len(c) <= MAX_MAPPED and counts[c] == 1 and c not in valid
        mapped = c if simple and check.fullmatch(c) else _hashed(name, c)
        if not check.fullmatch(mapped):
            raise InvalidRequestError(
                f"{provider} refuses the tool name {name!r} and no valid name could be made "
                f"for it: tool names there are {rule}"
            )
        out[name] = mapped
    return out


def names_in(tools: list[dict[str, Any]] | None, messages: list[dict[str, Any]]) -> list[str]:
    """Every tool name of a request: its tools', then its history calls' and results'."""
    names = [t["name"] for t in tools or []]
    for m in messages:
        if m["role"] == "assistant":
            names += [c["name"] for c in m["tool_calls"]]
        elif m["role"] == "tool" and m["name"]:
            names.append(m["name"])
    return names


def rename_tools(
    tools: list[dict[str, Any]] | None, mapping: Mapping[str, str]
) -> list[dict[str, Any]] | None:
    if not tools or not mapping:
        return tools
    return [{**t, "name": mapping.get(t["name"], t["name"])} for t in tools]


def rename_messages(
    messages: list[dict[str, Any]], mapping: Mapping[str, str]
) -> list[dict[str, Any]]:
    """Copies with every history call's and result's name mapped (new dicts only where a
    name changes; the caller's messages are never touched)."""
    if not mapping:
        return messages
    out = []
    for m in messages:
        if m["role"] == "assistant" and any(c["name"] in mapping for c in m["tool_calls"]):
            calls = [{**c, "name": mapping.get(c["name"], c["name"])} for c in m["tool_calls"]]
            m = {**m, "tool_calls": calls}
        elif m["role"] == "tool" and m["name"] in mapping:
            m = {**m, "name": mapping[m["name"]]}
        out.append(m)
    return out


def rename_choice(
    choice: str | dict[str, str] | None, mapping: Mapping[str, str]
) -> str | dict[str, str] | None:
    if isinstance(choice, dict) and choice["name"] in mapping:
        return {"name": mapping[choice["name"]]}
    return choice


def restore_call(call: dict[str, Any], back: Mapping[str, str]) -> dict[str, Any]:
    """A tool call dict of the provider's answer, under its original name."""
    name = call.get("name")
    if isinstance(name, str) and name in back:
        return {**call, "name": back[name]}
    return call


def restore_result(result: dict[str, Any], back: Mapping[str, str]) -> dict[str, Any]:
    """generate's result (and the stream's done result) with the original tool names, in
    ``tool_calls`` and in ``message["tool_calls"]`` alike."""
    if not back or not result.get("tool_calls"):
        return result
    calls = [restore_call(c, back) for c in result["tool_calls"]]
    out = {**result, "tool_calls": calls}
    message = result.get("message")
    if isinstance(message, dict):
        out["message"] = {**message, "tool_calls": calls}
    return out


def restore_event(event: dict[str, Any], back: Mapping[str, str]) -> dict[str, Any]:
    """A stream event with the original tool name (tool_call, tool_call_delta and done
    events; others unchanged)."""
    if not back:
        return event
    if event.get("type") == "tool_call" and isinstance(event.get("tool_call"), dict):
        return {**event, "tool_call": restore_call(event["tool_call"], back)}
    if event.get("type") == "tool_call_delta":
        return restore_call(event, back)
    if event.get("type") == "done" and isinstance(event.get("result"), dict):
        return {**event, "result": restore_result(event["result"], back)}
    return event
