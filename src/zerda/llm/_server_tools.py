"""What the provider ran and cited (DESIGN §18), in one shape for every wire.

A wire builds ``result["server_tool_calls"]`` entries with :func:`server_call` and
``result["citations"]`` entries with :func:`citation`; :func:`history_text` is the readable
part of a turn's server calls that another provider receives as text (DESIGN §15).
Part of the core: no wire, no registry.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

SERVER_CALL_TYPES = (
    "web_search",
    "web_fetch",
    "code_execution",
    "file_search",
    "mcp",
    "tool_search",
    "other",
)
CITATION_KEYS = ("url", "title", "text", "start", "end")


def server_call(
    call_id: Any, kind: str, name: Any, input: Any = None, output: Any = None
) -> dict[str, Any]:
    """One call the provider ran: ``{"id", "type", "name", "input", "output"}``. Whatever a
    provider sent is kept: an input that is not an object is kept under ``_raw``, an output
    that is not text as its JSON, an unknown ``kind`` as ``other``."""
    return {
        "id": call_id if isinstance(call_id, str) and call_id else None,
        "type": kind if kind in SERVER_CALL_TYPES else "other",
        "name": name if isinstance(name, str) else str(name),
        "input": _object(input),
        "output": _text(output),
    }


def citation(
    url: Any, title: Any = None, text: Any = None, start: Any = None, end: Any = None
) -> dict[str, Any]:
    """One citation over ``content``: ``start``/``end`` are character offsets where the
    provider gives them, else None."""
    bounded = _offset(start) is not None and _offset(end) is not None
    return {
        "url": url if isinstance(url, str) else None,
        "title": title if isinstance(title, str) else None,
        "text": text if isinstance(text, str) else None,
        "start": _offset(start) if bounded else None,
        "end": _offset(end) if bounded else None,
    }


def _offset(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else None


def _object(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return dict(value)
    return {"_raw": value}


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def char_offsets(content: str, byte_start: Any, byte_end: Any) -> tuple[int | None, int | None]:
    """UTF-8 byte offsets into ``content`` (Gemini's grounding segments) as character
    offsets; None where a bound is missing or falls outside the text."""
    encoded = content.encode("utf-8")
    out: list[int | None] = []
    for bound in (byte_start, byte_end):
        if type(bound) is not int or not 0 <= bound <= len(encoded):
            out.append(None)
            continue
        out.append(len(encoded[:bound].decode("utf-8", errors="ignore")))
    return out[0], out[1]


def history_text(calls: Iterable[Mapping[str, Any]]) -> str:
    """The readable part of a turn's server calls, for a provider that cannot take the
    native blocks back: one paragraph per call, its input and output."""
    paragraphs = []
    for call in calls:
        if not isinstance(call, Mapping):
            continue
        name = call.get("name") or call.get("type") or "tool"
        args = call.get("input") or {}
        head = f"[{call.get('type') or 'other'}: {name}"
        if args:
            head += " " + json.dumps(args, ensure_ascii=False, sort_keys=True, default=str)
        head += "]"
        output = call.get("output")
        paragraphs.append(f"{head}\n{output}" if isinstance(output, str) and output else head)
    return "\n\n".join(paragraphs)
