"""The result shape of DESIGN.md §3, the same from generate and from stream."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from zerda.llm import _lazy
from zerda.llm.errors import excerpt, malformed_response
from zerda.llm.interface._host import Host

if TYPE_CHECKING:
    from zerda.llm import _cost, tools
    from zerda.llm._request import Request
    from zerda.llm._stream import StreamAccumulator
    from zerda.llm.tools import ToolCall
else:
    # Loaded with the first result (_cost with its price table).
    _cost = _lazy.module("zerda.llm._cost", __name__, "_cost")
    tools = _lazy.module("zerda.llm.tools", __name__, "tools")


class Results(Host):
    """``_make_result`` (every wire's result goes through it) and the truncation rule."""

    # The event that ends a complete stream (a fact of the class's wire protocol, the same
    # for every row it serves), named in the error when a stream ends without it.
    stream_final_event: str = "its final event"

    def _make_result(
        self,
        content: str | None,
        calls: list[ToolCall],
        native_stop: Any,
        usage: dict[str, Any] | None,
        provider_data: dict[str, Any] | None = None,
        reasoning: str | None = None,
        *,
        server_tool_calls: list[dict[str, Any]] | None = None,
        citations: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """The result shape of DESIGN.md §3, the same from generate and from stream;
        ``reasoning`` is the reasoning text shown ("" counts as none). A response whose
        text or reasoning is not a string or whose tool call has no name is malformed:
        reported as such, the raw part in the message, rather than returned as a success
        that the next call's history check would refuse."""
        _check_parts(self.provider, content, reasoning, calls)
        tool_calls = tools.tool_calls_to_dicts(calls)
        # Providers say "stop" with calls present (forced tool_choice, Gemini, Ollama).
        stop_reason = "tool_use" if tool_calls else self._map_stop_reason(native_stop)
        message: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "tool_calls": tool_calls,
        }
        result: dict[str, Any] = {
            "content": content,
            "tool_calls": tool_calls,
            "stop_reason": stop_reason,
            "usage": usage,
            "reasoning": reasoning or None,
            "message": message,
            # Priced from the usage (DESIGN §21): None where the price is unknown. generate
            # and stream both build their result here, so they give the same cost.
            "cost": _cost.cost_of(self.spec.price_provider, str(self.model), usage),
        }
        if provider_data:
            message["provider_data"] = provider_data
            result["provider_data"] = provider_data
        if server_tool_calls:  # DESIGN §18: what the provider ran, also in the history
            result["server_tool_calls"] = server_tool_calls
            message["server_tool_calls"] = server_tool_calls
        if citations:
            result["citations"] = citations
        return result

    def _with_extras(
        self, result: dict[str, Any], req: Request, raw: Any, chunks: list[Any] | None = None
    ) -> dict[str, Any]:
        """A success's DESIGN §18 keys: ``server_tool_calls`` and ``citations`` as [] when the
        call declared hosted tools and the provider ran none; ``raw`` with include_raw=True:
        the response's body (``raw``), or a stream's ``chunks``, each as JSON."""
        if req.hosted:
            result.setdefault("server_tool_calls", [])
            result.setdefault("citations", [])
        if req.include_raw:
            if chunks is not None:
                result["raw"] = [self._raw_json(c) for c in chunks]
            else:
                result["raw"] = self._raw_json(raw)
        return result

    def _raw_json(self, raw: Any) -> Any:
        """The provider's response body (or one stream chunk) as JSON: a wire whose SDK
        object is not the body overrides this."""
        return raw_json(raw)

    def _check_finished(self, acc: StreamAccumulator) -> None:
        """The truncation rule, for every provider: a stream that ended (cleanly) before
        its final event is an error, its text kept (docs/errors.md, Streams)."""
        if not acc.finished:
            # Looked up in zerda.llm.base, where the decision is documented (and a test
            # records its calls).
            from zerda.llm import base

            raise base.stream_ended_early(self.provider, self.stream_final_event)


def raw_json(raw: Any) -> Any:
    """JSON of what an SDK handed back: a dict or list as it is, bytes or text parsed, an
    HTTP response's body, a pydantic object's fields as the API named them."""
    if isinstance(raw, (dict, list)) or raw is None:
        return raw
    if isinstance(raw, (bytes, bytearray, str)):
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode("utf-8", "replace") if isinstance(raw, (bytes, bytearray)) else raw
    content = getattr(raw, "content", None)
    if isinstance(content, (bytes, bytearray)) and hasattr(raw, "status_code"):
        return raw_json(content)  # an httpx response
    dump = getattr(raw, "model_dump", None)
    if callable(dump):
        return dump(mode="json", by_alias=True, exclude_unset=True, warnings=False)
    to_dict = getattr(raw, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    return repr(raw)


def _check_parts(provider: str, content: Any, reasoning: Any, calls: list[ToolCall]) -> None:
    """A text, a reasoning or a tool call that a result cannot carry is a malformed
    response (raised), its raw part in the message."""
    if content is not None and not isinstance(content, str):
        raise malformed_response(provider, f"the message content is not text: {excerpt(content)}")
    if reasoning is not None and not isinstance(reasoning, str):
        raise malformed_response(provider, f"the reasoning is not text: {excerpt(reasoning)}")
    for j, call in enumerate(calls):
        if call.id is not None and not isinstance(call.id, str):
            raise malformed_response(
                provider, f"tool_calls[{j}] has an id that is not text: {call.id!r}"
            )
        if not isinstance(call.name, str) or not call.name:
            raise malformed_response(
                provider,
                f"tool_calls[{j}] has no name (id={call.id!r}, "
                f"arguments={excerpt(call.arguments)})",
            )
