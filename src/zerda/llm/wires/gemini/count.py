"""Gemini's counting endpoint: ``models.countTokens`` (https://ai.google.dev/api/tokens;
on Vertex AI https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/count-tokens),
with the request ``generate`` would send.

On the fast path the request is Zerda's own GenerateContentRequest (``sdk.py``), posted to
``{model}:countTokens`` with the SDK's API client as generateContent is (the private names
of ``fastpath.GENERATE_NAMES``, no other): on the Gemini API inside
``generateContentRequest`` (its system instruction, tools and tool config counted too), on
Vertex AI as the request's ``contents``, ``systemInstruction``, ``tools`` and
``generationConfig``, the fields Vertex AI's CountTokensRequest has.

Off it, google-genai's documented ``client.models.count_tokens(model=, contents=,
config=CountTokensConfig(...))``. Its Gemini API converter refuses a system instruction or
tools ("only supported in ... Vertex AI mode"): a request holding either is estimated
there; on Vertex AI they go in the config and the count is exact.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from zerda.llm.errors import malformed_response
from zerda.llm.interface.counting import TokenCounter, count_of

# The fields of Vertex AI's CountTokensRequest a GenerateContentRequest also has.
_VERTEX_FIELDS = ("contents", "systemInstruction", "tools", "generationConfig")


class CountTokensCounter(TokenCounter):
    """``countTokens`` -> ``totalTokens`` (see the module docstring)."""

    def arguments(self, native: dict[str, Any]) -> dict[str, Any] | None:
        if "body" in native:  # the fast path's REST body
            return self._rest_arguments(native)
        return self._documented_arguments(native)

    def _rest_arguments(self, native: dict[str, Any]) -> dict[str, Any]:
        from google.genai import _transformers

        llm: Any = self.llm
        api_client = llm._api_client()
        name = _transformers.t_model(api_client, native["model"])
        body = native["body"]
        if api_client.vertexai:
            request = {k: body[k] for k in _VERTEX_FIELDS if k in body}
        else:
            request = {"generateContentRequest": {"model": name, **body}}
        return {"path": f"{name}:countTokens", "body": request, "options": native["http_options"]}

    def _documented_arguments(self, native: dict[str, Any]) -> dict[str, Any] | None:
        from google.genai import types

        config = native["config"]
        fields = {
            "system_instruction": config.system_instruction,
            "tools": config.tools,
            "http_options": config.http_options,
        }
        if (config.system_instruction or config.tools) and not self.llm.client.vertexai:
            return None  # the Gemini API's count_tokens converter refuses them
        counted = types.CountTokensConfig(**{k: v for k, v in fields.items() if v})
        return {"model": native["model"], "contents": native["contents"], "config": counted}

    def count(self, arguments: dict[str, Any]) -> Any:
        if "path" not in arguments:
            return super().count(arguments)
        api_client = self.llm.client._api_client
        return self.llm._retrying(lambda: api_client.request("post", *_posted(arguments)))

    async def count_async(self, arguments: dict[str, Any]) -> Any:
        if "path" not in arguments:
            return await super().count_async(arguments)
        api_client = self.llm.async_client._api_client
        return await self.llm._retrying_async(
            lambda: api_client.async_request("post", *_posted(arguments))
        )

    def method(self, client: Any) -> Callable[..., Any]:
        return client.models.count_tokens  # type: ignore[no-any-return]

    def tokens(self, raw: Any) -> int:
        """``totalTokens`` of the REST answer (an ``SdkHttpResponse``), or the documented
        call's ``CountTokensResponse.total_tokens``."""
        if hasattr(raw, "total_tokens"):
            return count_of(self.llm.provider, raw.total_tokens, "total_tokens")
        try:
            data = json.loads(raw.body) if raw.body else {}
        except ValueError:
            raise malformed_response(self.llm.provider, f"not JSON: {raw.body[:200]!r}") from None
        total = data.get("totalTokens") if isinstance(data, dict) else None
        return count_of(self.llm.provider, total, "totalTokens")


def _posted(arguments: dict[str, Any]) -> tuple[str, dict[str, Any], Any]:
    """``request`` / ``async_request``'s path, body and http_options."""
    return arguments["path"], arguments["body"], arguments["options"]
