"""The contract suite's data about Mistral's wire: OpenAI's history rules."""

from __future__ import annotations

from zerda.testing._wire import WireContract
from zerda.testing.wires.openai.contract import call_ids

# Mistral reports no reasoning count.
CONTRACT = WireContract(
    call_ids,
    {"stream": True},
    sdk_errors="mistralai",
    usage_counts=frozenset({"cache_read_tokens"}),
)
