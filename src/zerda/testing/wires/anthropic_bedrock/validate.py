"""Claude on Bedrock's InvokeModel (``/model/{id}/invoke``, ``/invoke-with-response-stream``):
the Messages API's rules on a body of Bedrock's own
(https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages.html):
``anthropic_version`` is required, the model and the stream switch are
in the path, so ``model`` / ``stream`` in the body are refused. Requests are SigV4-signed;
every refusal is Bedrock's ``ValidationException`` (400) with the Messages API's message.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from zerda.testing._script import RecordedRequest
from zerda.testing._validate import Rejection, Rule, body_of
from zerda.testing.wires.anthropic.hosted_rules import CLIENT_TOOLS, tool_types_rule
from zerda.testing.wires.anthropic.validate import (
    MESSAGES_RULES,
    THINKING_FORCED,
    api_key_present,
    forces_tool_while_thinking,
    model_present,
)
from zerda.testing.wires.bedrock.validate import invalid, signed

# The platform's own version, or an Anthropic API version (YYYY-MM-DD), which anthropic
# 2.x's AnthropicBedrock sends there (its _prepare_options: ANTHROPIC_API_VERSION).
VERSION = re.compile(r"bedrock-2023-05-31|\d{4}-\d{2}-\d{2}")


def _malformed(problem: str) -> Rejection:
    return invalid(
        f"Malformed input request: #: {problem}, please reformat your input and try again."
    )


def version_valid(req: RecordedRequest) -> Rejection | None:
    """``anthropic_version`` is required: ``bedrock-2023-05-31`` (the user guide above) or
    the Anthropic API version the SDK sends. A missing key is a schema violation ("required key [max_tokens] not found" is
    quoted for its sibling in https://github.com/diffbot/code-gpt-docs/issues/300); another
    value is "Invalid API version: …" (https://github.com/boto/boto3/issues/4218)."""
    version = body_of(req).get("anthropic_version")
    if version is None:
        return _malformed("required key [anthropic_version] not found")
    if not (isinstance(version, str) and VERSION.fullmatch(version)):
        return invalid(f"Invalid API version: {version}")
    return None


def no_path_keys_in_body(req: RecordedRequest) -> Rejection | None:
    """ "Malformed input request: #: extraneous key [model] is not permitted, please
    reformat your input and try again." (and the same for ``stream``): quoted in
    https://github.com/fumito-ito/AnthropicSwiftSDK/issues/19 and
    https://github.com/sigoden/aichat/issues/543."""
    extra = [k for k in ("model", "stream") if k in body_of(req)]
    if not extra:
        return None
    return _malformed("#: ".join(f"extraneous key [{k}] is not permitted" for k in extra))


def _as_validation(rule: Rule) -> Rule:
    """A Messages API rule answering as Bedrock does: a ValidationException."""

    def bedrock_rule(req: RecordedRequest) -> Rejection | None:
        rejection = rule(req)
        if rejection is None:
            return None
        return replace(invalid(rejection.message), rule=getattr(rule, "__name__", "rule"))

    bedrock_rule.__name__ = getattr(rule, "__name__", "rule")
    bedrock_rule.__doc__ = rule.__doc__
    return bedrock_rule


# The Claude models Bedrock refuses adaptive thinking with a forced tool_choice for (Opus
# 4.8 and Sonnet 5 take it: https://github.com/langchain-ai/langchain-aws/pull/1141).
ADAPTIVE_FORCED_REFUSED = re.compile(r"claude-(opus|sonnet)-4-6")


def adaptive_thinking_allows_tool_choice(req: RecordedRequest) -> Rejection | None:
    """Adaptive thinking with a forced tool_choice on Claude 4.6: "The model returned the
    following errors: Thinking may not be enabled when tool_choice forces tool use."
    (us.anthropic.claude-sonnet-4-6 on Bedrock: https://github.com/can1357/oh-my-pi/issues/341).
    Budget thinking is refused by the Messages API's own rule."""
    if ADAPTIVE_FORCED_REFUSED.search(req.path) is None:
        return None
    if not forces_tool_while_thinking(body_of(req), ("adaptive",)):
        return None
    return invalid(f"The model returned the following errors: {THINKING_FORCED}")


def no_mcp_servers(req: RecordedRequest) -> Rejection | None:
    """InvokeModel's body has no ``mcp_servers`` (the MCP connector "is not supported on
    Amazon Bedrock", https://docs.claude.com/en/docs/agents-and-tools/mcp-connector): an
    extraneous key, refused as ``model`` is (no_path_keys_in_body)."""
    if "mcp_servers" not in body_of(req):
        return None
    return _malformed("extraneous key [mcp_servers] is not permitted")


# Claude on Bedrock runs none of Anthropic's server tools: "tools.0: Input tag
# 'web_search_20250305' found using 'type' does not match any of the expected tags:
# 'bash_20250124', 'custom', 'text_editor_20250124'"
# (https://github.com/anthropics/anthropic-sdk-python/issues/948).
bedrock_tool_types_known = tool_types_rule(CLIENT_TOOLS, {})

_MESSAGES_RULES = tuple(r for r in MESSAGES_RULES if r not in (api_key_present, model_present))
RULES: tuple[Rule, ...] = (
    signed,
    version_valid,
    no_path_keys_in_body,
    no_mcp_servers,
    # Bedrock's own answer first: the Messages rule below refuses the same request with
    # the Messages API's wording
    adaptive_thinking_allows_tool_choice,
    *(_as_validation(r) for r in (*_MESSAGES_RULES, bedrock_tool_types_known)),
)


def rules_for(req: RecordedRequest) -> Sequence[Rule]:
    return RULES if "/invoke" in req.path else ()
