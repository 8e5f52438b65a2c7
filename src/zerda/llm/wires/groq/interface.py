"""Groq chat completions through the ``groq`` SDK (docs/providers/groq.md).

Everything OpenAI-shaped lives in ``_openai_compat``; this module holds what is Groq's
own: its client classes and where a stream carries its usage.
"""

from __future__ import annotations

from typing import Any, ClassVar

from zerda.llm._fastpath import PrivateName
from zerda.llm.reasoning import Plan
from zerda.llm.tools import _get
from zerda.llm.wires.groq import fastpath as _fastpath
from zerda.llm.wires.openai.compat import OpenAICompatInterface, _map_reasoning


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
