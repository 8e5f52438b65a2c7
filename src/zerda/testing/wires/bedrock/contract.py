"""The contract suite's data about Bedrock's Converse wire (``WireContract``)."""

from __future__ import annotations

from typing import Any

from zerda.testing._wire import WireContract


def call_ids(body: dict[str, Any]) -> list[str | None]:
    """Converse's rules: user first, roles alternate, no empty text, every toolResult
    answers a toolUse of the previous turn, a toolConfig whenever tool blocks are sent."""
    messages = body["messages"]
    assert messages[0]["role"] == "user"
    assert all(a["role"] != b["role"] for a, b in zip(messages, messages[1:], strict=False))
    ids: list[str | None] = []
    previous: set[str] = set()
    for message in messages:
        assert message["content"]
        turn: set[str] = set()
        for block in message["content"]:
            if "text" in block:
                assert block["text"].strip()
            if "toolUse" in block:
                turn.add(block["toolUse"]["toolUseId"])
                ids.append(block["toolUse"]["toolUseId"])
            if "toolResult" in block:
                assert block["toolResult"]["toolUseId"] in previous
        previous = turn
    assert "toolConfig" in body
    return ids


# Bedrock's x-amzn-ErrorType per status
# (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html#API_runtime_Converse_Errors,
# and the common AWS errors: UnrecognizedClientException for bad credentials).
AWS_CODES = {
    400: "ValidationException",
    401: "UnrecognizedClientException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    408: "ModelTimeoutException",
    409: "ConflictException",
    413: "ValidationException",
    422: "ValidationException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
}

# Streams go to converse-stream with the same body.
CONTRACT = WireContract(
    call_ids,
    error_codes=AWS_CODES,
    error_message="{code}: {message}",
    secret_option="aws_secret_access_key",
    sdk_errors="botocore",
    usage_counts=frozenset({"cache_read_tokens", "cache_write_tokens"}),  # no reasoning
)
