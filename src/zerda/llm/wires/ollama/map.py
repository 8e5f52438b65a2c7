"""Ollama's request and response mapping (``POST /api/chat``): the unified request as the
chat body, and the answer's fields read back. Loaded with the first call, not with the
interface (docs/decisions.md, "Building an interface loads only what building needs").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from zerda.llm.errors import ServerError, ZerdaError, excerpt, malformed_response
from zerda.llm.messages import tool_output_text
from zerda.llm.parts import is_parts, text_of
from zerda.llm.tools import _get, parse_ollama_tool_calls, to_ollama_tools
from zerda.llm.usage import make_usage

if TYPE_CHECKING:
    from zerda.llm._request import Request
    from zerda.llm._stream import StreamAccumulator
    from zerda.llm.reasoning import Plan

_STOP_REASONS = {"stop": "end_turn", "length": "max_tokens"}


# --- request ---------------------------------------------------------------------------


def _map_tool_call(call: dict[str, Any]) -> dict[str, Any]:
    # Ollama takes arguments as an object, not JSON text.
    out: dict[str, Any] = {"function": {"name": call["name"], "arguments": call["arguments"]}}
    if call["id"]:
        out["id"] = call["id"]
    return out


def _map_tool_result(message: dict[str, Any]) -> dict[str, Any]:
    # Ollama pairs a result with its call by tool_name (and, on servers that send call ids,
    # by tool_call_id; older servers ignore the unknown field). It has no is_error field.
    # Media from tools were moved to a user message by the base: only text is left here.
    output = message["content"]
    if type(output) is not str:
        output = text_of(output) if is_parts(output) else tool_output_text(output)
    out = {"role": "tool", "content": output, "tool_name": message["name"]}
    if message["tool_call_id"]:
        out["tool_call_id"] = message["tool_call_id"]
    return out


def _map_message(message: dict[str, Any]) -> dict[str, Any]:
    """One unified message (system removed, tool ids resolved) in Ollama's shape."""
    role = message["role"]
    if role == "tool":
        return _map_tool_result(message)
    content = message["content"]
    out: dict[str, Any] = {"role": role, "content": text_of(content or "")}
    images = (
        [p["data"] for p in content if p["type"] == "image"] if isinstance(content, list) else ()
    )
    if images:
        # message.images: base64 images, the server fetches no URL
        # (https://github.com/ollama/ollama/blob/main/docs/api.md#chat-request-with-images).
        out["images"] = images
    if role == "assistant" and message["tool_calls"]:
        out["tool_calls"] = [_map_tool_call(c) for c in message["tool_calls"]]
    return out


def _map_messages(system: str | None, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    head = [{"role": "system", "content": system}] if system else []
    return head + [_map_message(m) for m in messages]


def _map_tools(tools: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    return to_ollama_tools(tools)


def _map_tool_choice(
    choice: str | dict[str, str] | None, tools: list[dict[str, Any]] | None
) -> list[dict[str, Any]] | None:
    """The tools to send: the server has no tool_choice, so the closest Ollama can do is
    to offer no tools ("none") or only the named one; "required" cannot be enforced."""
    if not tools or choice == "none":
        return None
    if isinstance(choice, dict):
        return [t for t in tools if t["function"]["name"] == choice["name"]]
    return tools


def _map_options(req: Request) -> dict[str, Any]:
    """max_tokens (``num_predict``), temperature, top_p and stop: Ollama's ``options``."""
    options = {
        "num_predict": req.max_tokens,
        "temperature": req.temperature,
        "top_p": req.top_p,
        "stop": req.stop,
    }
    return {k: v for k, v in options.items() if v is not None}


def _map_reasoning(plan: Plan | None) -> dict[str, Any]:
    """``think``: true/false, or "low"/"medium"/"high" for gpt-oss, which cannot turn it
    off (https://docs.ollama.com/capabilities/thinking)."""
    if plan is None:
        return {}
    return {"think": plan.effort if plan.on else plan.off}


def _as_dict(value: Any) -> dict[str, Any]:
    """A native ``options`` value (a dict or an ``ollama.Options``) as a plain dict."""
    if hasattr(value, "model_dump"):
        dumped: dict[str, Any] = value.model_dump(exclude_none=True)
        return dumped
    return dict(value)


def _merge_native(body: dict[str, Any], native: dict[str, Any]) -> dict[str, Any]:
    """``**native`` on top of the body; a native ``options`` dict is merged into the
    mapped options (its keys win) rather than replacing them."""
    extra = dict(native)
    options = {**body.get("options", {}), **_as_dict(extra.pop("options", None) or {})}
    merged = {**body, **extra}
    if options:
        merged["options"] = options
    return merged


# --- response --------------------------------------------------------------------------


def _map_usage(raw: Any) -> dict[str, Any] | None:
    """``prompt_eval_count`` (the prompt tokens evaluated) and ``eval_count`` (thinking
    included); Ollama reports no cache or reasoning counts."""
    prompt, completion = _get(raw, "prompt_eval_count"), _get(raw, "eval_count")
    if prompt is None and completion is None:
        return None
    return make_usage(prompt, completion)


def _map_stop_reason(native: Any) -> str:
    # Ollama says "stop" for a natural end and for a stop string alike: stop_sequence
    # cannot be told apart. It has no content filter.
    return _STOP_REASONS.get(native, "other") if isinstance(native, str) else "other"


def _body_error(raw: Any) -> ZerdaError | None:
    """A 200 body that holds ``{"error": ...}`` and no message (a proxy, an old server),
    or is not a chat response at all (``{}``, ``[]``, ``null``)."""
    if isinstance(raw, dict) and raw.get("error") and "message" not in raw:
        return ServerError(f"Ollama: {raw['error']}", retryable=False)
    if not isinstance(raw, dict) or not isinstance(raw.get("message"), dict):
        return malformed_response("ollama", f"no 'message' object in {excerpt(raw)}")
    return None


# --- stream --------------------------------------------------------------------------------


def feed(acc: StreamAccumulator, chunk: Any) -> list[dict[str, Any]]:
    """One chunk's events: Ollama sends text deltas, each tool call whole, and the stop
    reason and usage on the last (``done``) chunk."""
    message = _get(chunk, "message") or {}
    events = acc.reasoning(_get(message, "thinking"))
    events += acc.text(_get(message, "content"))
    for call in parse_ollama_tool_calls(message):
        events += acc.whole_call(call.id, call.name, call.arguments)
    if _get(chunk, "done"):
        acc.finished = True
        acc.native_stop = _get(chunk, "done_reason")
        acc.usage = _map_usage(chunk)
    return events
