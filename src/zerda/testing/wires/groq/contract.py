"""The contract suite's data about Groq's wire: OpenAI's history rules."""

from __future__ import annotations

from zerda.testing._wire import WireContract
from zerda.testing.wires.openai.contract import call_ids

CONTRACT = WireContract(
    call_ids,
    {"stream": True},
    usage_counts=frozenset({"cache_read_tokens", "reasoning_tokens"}),
)
