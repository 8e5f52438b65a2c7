"""Anthropic's counting endpoint: ``POST /v1/messages/count_tokens``
(https://docs.anthropic.com/en/api/messages-count-tokens) through the SDK's documented
``client.messages.count_tokens``, with the Messages request ``generate`` would send.

The endpoint takes the request's ``model``, ``messages``, ``system``, ``tools``,
``tool_choice``, ``thinking`` and ``output_config``, and refuses the generation settings
(``max_tokens: Extra inputs are not permitted``): the arguments are those of the request
the SDK method names. ``AnthropicVertex`` routes the same call to Vertex AI's
``count-tokens:rawPredict`` itself (https://docs.anthropic.com/en/api/claude-on-vertex-ai);
``AnthropicBedrock`` refuses it ("Token counting is not supported in Bedrock yet"), so that
row's traits name no endpoint and its counts are estimated.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zerda.llm._signatures import signature_options
from zerda.llm.interface.counting import TokenCounter, count_of
from zerda.llm.tools import _get


class MessagesCounter(TokenCounter):
    """``client.messages.count_tokens(...)`` -> ``MessageTokensCount.input_tokens``."""

    def arguments(self, native: dict[str, Any]) -> dict[str, Any] | None:
        sdk: Any = self.llm.sdk
        accepted = signature_options(sdk.resources.Messages.count_tokens) or frozenset()
        return {k: v for k, v in native.items() if k in accepted}

    def method(self, client: Any) -> Callable[..., Any]:
        return client.messages.count_tokens  # type: ignore[no-any-return]

    def tokens(self, raw: Any) -> int:
        return count_of(self.llm.provider, _get(raw, "input_tokens"), "input_tokens")
