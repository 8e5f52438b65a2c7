"""The contract suite's data about Claude on Bedrock (InvokeModel): Anthropic's history, Bedrock's errors."""

from __future__ import annotations

from zerda.testing._wire import WireContract
from zerda.testing.wires.anthropic.contract import call_ids
from zerda.testing.wires.bedrock.contract import AWS_CODES

# InvokeModel takes the stream switch in its path (invoke-with-response-stream), not in
# the body; errors are Bedrock's, shown by the anthropic SDK without their code.
CONTRACT = WireContract(
    call_ids,
    error_codes=AWS_CODES,
    secret_option="aws_secret_key",
    sdk_errors="anthropic",
    usage_counts=frozenset({"cache_read_tokens", "cache_write_tokens"}),
    usage_zeros={"cache_read_tokens": 0, "cache_write_tokens": 0},
)
