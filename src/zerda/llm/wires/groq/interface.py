"""Groq chat completions through the ``groq`` SDK (docs/providers/groq.md).

Everything OpenAI-shaped lives in ``_openai_compat``; this module holds what is Groq's
own: its client classes and where a stream carries its usage.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from zerda.llm._fastpath import PrivateName
from zerda.llm.tools import _get
from zerda.llm.wires.groq import fastpath as _fastpath
from zerda.llm.wires.groq import hosted as _hosted
from zerda.llm.wires.openai.compat import Event, OpenAICompatInterface, _map_reasoning

if TYPE_CHECKING:
    from zerda.llm._stream import StreamAccumulator
    from zerda.llm.reasoning import Plan


class GroqInterface(OpenAICompatInterface):
    """Groq via the ``groq`` SDK."""

    provider = "groq"
    client_class: ClassVar[str] = "Groq"
    async_client_class: ClassVar[str] = "AsyncGroq"
    # The SDK marks max_tokens deprecated in favour of max_completion_tokens:
    # https://console.groq.com/docs/api-reference#chat-create
    max_tokens_field: ClassVar[str] = "max_completion_tokens"
    chat_path: ClassVar[str] = "/openai/v1/chat/completions"  # as groq's create() posts
    fast_path_wire: ClassVar[str] = "groq"
    fast_path_names: ClassVar[tuple[PrivateName, ...]] = _fastpath.PRIVATE_NAMES
    # Groq reports the tools it ran (message.executed_tools): no call is inferred.
    cited_search_call: ClassVar[bool] = False

    def _map_reasoning(self, plan: Plan | None) -> dict[str, Any]:
        """``reasoning_effort``, and ``reasoning_format`` "parsed" so the reasoning comes
        back in ``message.reasoning`` rather than as ``<think>`` text in the content
        ("hidden" with summary=False): https://console.groq.com/docs/reasoning"""
        native = _map_reasoning(plan)
        if plan is not None and plan.on:
            native["reasoning_format"] = "parsed" if plan.summary else "hidden"
        return native

    def _chunk_usage(self, chunk: Any) -> Any:
        # Groq puts a stream's usage under x_groq on the last chunk (newer responses also
        # under usage): https://console.groq.com/docs/api-reference#chat-create
        return _get(chunk, "usage") or _get(_get(chunk, "x_groq"), "usage")

    # --- hosted tools (DESIGN §18; wires/groq/hosted.py) ---

    def _map_hosted(
        self, hosted: tuple[dict[str, Any], ...]
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """A Compound system gets the tools it may run as ``compound_custom`` (and the
        search's domains as ``search_settings``); a gpt-oss model gets them in ``tools``.
        Native tools go in ``tools`` on both."""
        natives = [t["tool"] for t in hosted if t["type"] == "native"]
        unified = tuple(t for t in hosted if t["type"] != "native")
        if _hosted.is_compound(self.model):
            return natives, _hosted.compound_request(unified)
        traits = self.traits.hosted
        tools = [_hosted.gpt_oss_tool(t, traits[t["type"]].native) for t in unified]
        return natives + tools, {}

    def _server_side(
        self, message: Any
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
        """The tools Groq ran (``message.executed_tools``, in order) before the citations
        of its annotations."""
        calls, citations, native = super()._server_side(message)
        executed = _get(message, "executed_tools")
        if not isinstance(executed, list) or not executed:
            return calls, citations, native
        ran = [_hosted.map_executed_tool(t) for t in executed]
        return ran + calls, citations, {"executed_tools": executed, **native}

    def _feed_hosted(self, acc: StreamAccumulator, delta: Any) -> list[Event]:
        """``delta.executed_tools``: a tool's arguments first, its results later under the
        same index; its ``server_tool_call`` event once its results are in."""
        events = super()._feed_hosted(acc, delta)
        executed = _get(delta, "executed_tools")
        if not isinstance(executed, list):
            return events
        tools: dict[Any, dict[str, Any]] = acc.scratch.setdefault("groq_tools", {})
        done: set[Any] = acc.scratch.setdefault("groq_done", set())
        for piece in executed:
            key = _get(piece, "index")
            key = key if isinstance(key, int) else len(tools)
            tools[key] = _hosted.merged(tools.get(key), piece)
            if key not in done and _hosted.is_complete(tools[key]):
                done.add(key)
                events += acc.server_call(_hosted.map_executed_tool(tools[key]))
        return events

    def _end_hosted(self, acc: StreamAccumulator) -> tuple[list[Event], dict[str, Any]]:
        """At the finish: a tool that never got results is listed as it is (generate lists
        it too), and the executed tools are kept in provider_data."""
        events, native = super()._end_hosted(acc)
        tools: dict[Any, dict[str, Any]] = acc.scratch.get("groq_tools") or {}
        done: set[Any] = acc.scratch.get("groq_done") or set()
        for key, tool in tools.items():
            if key not in done:
                events += acc.server_call(_hosted.map_executed_tool(tool))
        if tools:
            native = {"executed_tools": list(tools.values()), **native}
        return events, native
