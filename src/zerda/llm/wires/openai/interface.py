"""OpenAI Chat Completions through the ``openai`` SDK (docs/providers/openai.md).

Everything OpenAI-shaped lives in ``_openai_compat``; this module holds what is OpenAI's
own: its client classes, ``max_completion_tokens`` and the usage chunk a stream must
ask for.
"""

from __future__ import annotations

from typing import Any, ClassVar

from zerda.llm.wires.openai.compat import OpenAICompatInterface


class OpenAIInterface(OpenAICompatInterface):
    """OpenAI (and OpenAI-compatible servers, e.g. Ollama's ``/v1``) via the ``openai`` SDK."""

    provider = "openai"
    client_class: ClassVar[str] = "OpenAI"
    async_client_class: ClassVar[str] = "AsyncOpenAI"
    # max_tokens is deprecated and refused by reasoning models:
    # https://platform.openai.com/docs/api-reference/chat/create#chat-create-max_completion_tokens
    max_tokens_field: ClassVar[str] = "max_completion_tokens"

    def _stream_kwargs(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        # Without include_usage a stream carries no usage, and its done result would differ
        # from generate's: https://platform.openai.com/docs/api-reference/chat/create#chat-create-stream_options
        return {"stream_options": {"include_usage": True}, **kwargs, "stream": True}
