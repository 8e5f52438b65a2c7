"""The Responses API's counting endpoint: ``POST /v1/responses/input_tokens``
(https://platform.openai.com/docs/api-reference/responses/input-tokens) through the SDK's
documented ``client.responses.input_tokens.count``, with the request ``generate`` would
send.

The endpoint takes the request's ``model``, ``input``, ``instructions``, ``tools``,
``tool_choice``, ``parallel_tool_calls``, ``reasoning`` and ``text``; the generation
settings (``store``, ``include``, ``max_output_tokens``, sampling) are not among them: the
arguments are those of the request the SDK method names. An openai release without
``responses.input_tokens`` (the floor, 1.97.2, has none) counts by the estimate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zerda.llm._signatures import signature_options
from zerda.llm.interface.counting import TokenCounter, count_of
from zerda.llm.tools import _get


class InputTokensCounter(TokenCounter):
    """``client.responses.input_tokens.count(...)`` -> ``InputTokenCountResponse.input_tokens``."""

    def available(self) -> bool:
        try:
            from openai.resources.responses.input_tokens import InputTokens  # noqa: F401
        except ImportError:
            return False
        return True

    def arguments(self, native: dict[str, Any]) -> dict[str, Any] | None:
        from openai.resources.responses.input_tokens import InputTokens

        accepted = signature_options(InputTokens.count) or frozenset()
        return {k: v for k, v in native.items() if k in accepted}

    def method(self, client: Any) -> Callable[..., Any]:
        return client.responses.input_tokens.count  # type: ignore[no-any-return]

    def tokens(self, raw: Any) -> int:
        return count_of(self.llm.provider, _get(raw, "input_tokens"), "input_tokens")
