"""The contract suite's data about Azure OpenAI's chat wire: OpenAI's."""

from __future__ import annotations

from zerda.testing._wire import WireContract
from zerda.testing.wires.openai.contract import STREAM_FIELDS, call_ids

# Azure's deployments speak the OpenAI wires through openai.AzureOpenAI.
CONTRACT = WireContract(
    call_ids,
    STREAM_FIELDS,
    sdk_errors="openai",
    usage_counts=frozenset({"cache_read_tokens", "cache_write_tokens", "reasoning_tokens"}),
    usage_zeros={"cache_read_tokens": 0, "reasoning_tokens": 0},
)
