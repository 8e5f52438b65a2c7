"""OpenAI Chat Completions through the ``openai`` SDK (docs/providers/openai.md).

Everything OpenAI-shaped lives in ``_openai_compat``; this module holds what is OpenAI's
own: the client, ``max_completion_tokens`` and the usage chunk a stream must ask for.
"""

from __future__ import annotations

from typing import Any, ClassVar

from zerda.llm.providers._openai_compat import OpenAICompatInterface


class OpenAIInterface(OpenAICompatInterface):
    """OpenAI (and OpenAI-compatible servers, e.g. Ollama's ``/v1``) via the ``openai`` SDK."""

    provider: ClassVar[str] = "openai"
    env_keys: ClassVar[tuple[str, ...]] = ("OPENAI_API_KEY",)
    sdk_module: ClassVar[str] = "openai"
    sdk_package: ClassVar[str] = "openai"
    extra: ClassVar[str] = "openai"
    # max_tokens is deprecated and refused by reasoning models:
    # https://platform.openai.com/docs/api-reference/chat/create#chat-create-max_completion_tokens
    max_tokens_field: ClassVar[str] = "max_completion_tokens"

    def _client_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"api_key": self.api_key, "max_retries": self.max_retries}
        if self.base_url is not None:
            kwargs["base_url"] = self.base_url
        if self.timeout is not None:
            kwargs["timeout"] = self.timeout
        return kwargs

    def _make_client(self) -> Any:
        return self.sdk.OpenAI(**self._client_kwargs())  # type: ignore[union-attr]

    def _make_async_client(self) -> Any:
        return self.sdk.AsyncOpenAI(**self._client_kwargs())  # type: ignore[union-attr]

    def _stream_kwargs(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        # Without include_usage a stream carries no usage, and its done result would differ
        # from generate's: https://platform.openai.com/docs/api-reference/chat/create#chat-create-stream_options
        return {"stream_options": {"include_usage": True}, **kwargs, "stream": True}
