"""Claude on Bedrock's InvokeModel: the Messages API's rules, the model named by the path
(https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages.html)."""

from __future__ import annotations

from zerda.testing._validate_anthropic_vertex import rules_for

__all__ = ["rules_for"]
