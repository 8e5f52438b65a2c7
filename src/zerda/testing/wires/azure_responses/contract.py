"""The contract suite's data about Azure OpenAI's Responses wire: OpenAI's."""

from __future__ import annotations

from zerda.testing._wire import WireContract
from zerda.testing.wires.openai_responses.contract import call_ids

CONTRACT = WireContract(
    call_ids,
    {"stream": True},
    sdk_errors="openai",
    usage_counts=frozenset({"cache_read_tokens", "cache_write_tokens", "reasoning_tokens"}),
    usage_zeros={"cache_read_tokens": 0, "reasoning_tokens": 0},
)
