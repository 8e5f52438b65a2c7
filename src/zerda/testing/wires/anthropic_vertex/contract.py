"""The contract suite's data about Claude on Vertex AI: Anthropic's."""

from __future__ import annotations

from zerda.testing._wire import WireContract
from zerda.testing.wires.anthropic.contract import call_ids

# streamRawPredict, with "stream": true kept in the body.
CONTRACT = WireContract(
    call_ids,
    {"stream": True},
    secret_option="access_token",
    sdk_errors="anthropic",
    usage_counts=frozenset({"cache_read_tokens", "cache_write_tokens"}),
    usage_zeros={"cache_read_tokens": 0, "cache_write_tokens": 0},
)
