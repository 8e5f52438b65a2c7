"""Claude on Vertex AI (``rawPredict`` / ``streamRawPredict``): the Messages API's rules on
Vertex's body (https://docs.anthropic.com/en/api/claude-on-vertex-ai): the model is named
by the path, not the body, and ``anthropic_version`` goes in the body. Requests carry a Google OAuth bearer token."""

from __future__ import annotations

import re
from collections.abc import Sequence

from zerda.testing._script import RecordedRequest
from zerda.testing._validate import Rejection, Rule, body_of
from zerda.testing.wires.anthropic.hosted_rules import (
    CLIENT_TOOLS,
    no_mcp_servers,
    tool_types_rule,
)
from zerda.testing.wires.anthropic.validate import (
    COUNT_RULES,
    MESSAGES_RULES,
    invalid,
    model_present,
)

# The platform's own version, or an Anthropic API version (YYYY-MM-DD), which anthropic
# 2.x's AnthropicVertex sends there (its _prepare_options: ANTHROPIC_API_VERSION).
VERSION = re.compile(r"vertex-2023-10-16|\d{4}-\d{2}-\d{2}")


def version_valid(req: RecordedRequest) -> Rejection | None:
    """``anthropic_version`` must be in the body (the page above: "passed in the request
    body (rather than as a header)"), ``vertex-2023-10-16`` or the Anthropic API version
    the SDK sends; the answer is the Messages API's required-field one."""
    version = body_of(req).get("anthropic_version")
    if version is None:
        return invalid("anthropic_version: Field required")
    if not (isinstance(version, str) and VERSION.fullmatch(version)):
        return invalid(f"anthropic_version: Input should be 'vertex-2023-10-16', not {version!r}")
    return None


# Claude on Vertex AI takes the client tools, tool search and web search (only with
# "anthropic-beta: web-search-2025-03-05":
# https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude/web-search,
# https://github.com/ax-llm/ax/pull/457), no other server tool and no MCP connector.
vertex_tool_types_known = tool_types_rule(
    CLIENT_TOOLS, {"web_search_20250305": "web-search-2025-03-05"}
)

RULES: tuple[Rule, ...] = (
    *MESSAGES_RULES[:2],
    version_valid,
    *(r for r in MESSAGES_RULES[2:] if r is not model_present),
    vertex_tool_types_known,
    no_mcp_servers,
)


# count-tokens:rawPredict: the counting endpoint's rules, ``anthropic_version`` beside them;
# the path names no model, so the body's ``model`` is required (the page above, "Token
# counting").
COUNT_RULES_VERTEX: tuple[Rule, ...] = (*COUNT_RULES[:2], version_valid, *COUNT_RULES[2:])


def rules_for(req: RecordedRequest) -> Sequence[Rule]:
    if req.path.endswith("/count-tokens:rawPredict"):
        return COUNT_RULES_VERTEX
    return RULES if "Predict" in req.path else ()
