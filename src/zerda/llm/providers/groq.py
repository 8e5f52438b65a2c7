"""Groq chat completions through the ``groq`` SDK (docs/providers/groq.md).

Everything OpenAI-shaped lives in ``_openai_compat``; this module holds what is Groq's
own: its client classes and where a stream carries its usage.
"""

from __future__ import annotations

from typing import Any, ClassVar

from zerda.llm.providers._openai_compat import OpenAICompatInterface
from zerda.llm.tools import _get


class GroqInterface(OpenAICompatInterface):
    """Groq via the ``groq`` SDK."""

    provider = "groq"
    client_class: ClassVar[str] = "Groq"
    async_client_class: ClassVar[str] = "AsyncGroq"
    # The SDK marks max_tokens deprecated in favour of max_completion_tokens:
    # https://console.groq.com/docs/api-reference#chat-create
    max_tokens_field: ClassVar[str] = "max_completion_tokens"
    chat_path: ClassVar[str] = "/openai/v1/chat/completions"  # as groq's create() posts

    def _chunk_usage(self, chunk: Any) -> Any:
        # Groq puts a stream's usage under x_groq on the last chunk (newer responses also
        # under usage): https://console.groq.com/docs/api-reference#chat-create
        return _get(chunk, "usage") or _get(_get(chunk, "x_groq"), "usage")
