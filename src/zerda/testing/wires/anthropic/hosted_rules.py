"""What the Messages API refuses of server tools (DESIGN §18): tool types it does not know
(or knows only with their beta header), their fixed names, their options, the MCP
connector's servers. One rule per function; the platforms' type lists are parameters
(api.anthropic.com here, Claude on Vertex AI and on Bedrock in their wires).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from zerda.testing._script import RecordedRequest
from zerda.testing._validate import Rejection, Rule, body_of, dicts, list_of

# The client tools every platform takes (the anthropic SDK's ToolUnionParam; Bedrock's and
# Vertex AI's answers list them: https://github.com/anthropics/anthropic-sdk-python/issues/948,
# https://github.com/ax-llm/ax/pull/457).
CLIENT_TOOLS = frozenset(
    {
        "custom",
        "bash_20250124",
        "text_editor_20250124",
        "text_editor_20250429",
        "text_editor_20250728",
        "memory_20250818",
        "computer_20250124",
        "computer_20251124",
        # Tool search (https://docs.claude.com/en/docs/agents-and-tools/tool-use/tool-search-tool;
        # answered on Vertex AI: https://github.com/vercel/ai/issues/13337).
        "tool_search_tool_bm25",
        "tool_search_tool_bm25_20251119",
        "tool_search_tool_regex",
        "tool_search_tool_regex_20251119",
    }
)
# The server tools api.anthropic.com takes without a beta header (anthropic 2.17's
# ToolUnionParam; advisor_20260301 from its beta types).
API_SERVER_TOOLS = frozenset(
    {
        "web_search_20250305",
        "web_search_20260209",
        "web_search_20260318",
        "web_fetch_20260209",
        "web_fetch_20260309",
        "web_fetch_20260318",
        "code_execution_20250522",
        "code_execution_20250825",
        "code_execution_20260120",
        "code_execution_20260521",
        "advisor_20260301",
    }
)
# Types taken only with a beta: web fetch's first version ("web fetch is a beta tool, so the
# request also needs the web-fetch-2025-09-10 beta header — without it the API rejects the
# web_fetch_20250910 tool type", https://github.com/anthropics/anthropic-sdk-go/issues/235)
# and the MCP connector's toolset (mcp-client-2025-11-20,
# https://docs.claude.com/en/docs/agents-and-tools/mcp-connector).
API_BETA_TOOLS = {
    "web_fetch_20250910": "web-fetch-2025-09-10",
    "mcp_toolset": "mcp-client-2025-11-20",
}

# The fixed name of each server tool type ("tools.0.web_search_20250305.name: Input should
# be 'web_search'", https://github.com/router-for-me/CLIProxyAPI/issues/1094).
_FIXED_NAMES = (
    (re.compile(r"web_search_\d{8}"), "web_search"),
    (re.compile(r"web_fetch_\d{8}"), "web_fetch"),
    (re.compile(r"code_execution_\d{8}"), "code_execution"),
    (re.compile(r"tool_search_tool_bm25(_\d{8})?"), "tool_search_tool_bm25"),
    (re.compile(r"tool_search_tool_regex(_\d{8})?"), "tool_search_tool_regex"),
)
_DOMAINS = ("allowed_domains", "blocked_domains")
_MCP_BETA = re.compile(r"mcp-client-\d{4}-\d{2}-\d{2}")


def invalid(message: str) -> Rejection:
    return Rejection(400, message, "invalid_request_error")


def betas(req: RecordedRequest) -> set[str]:
    """The request's betas: the ``anthropic-beta`` header's values, or the body's
    ``anthropic_beta`` list (where AnthropicBedrock moves them)."""
    found = {b.strip() for b in req.headers.get("anthropic-beta", "").split(",") if b.strip()}
    found |= {b for b in list_of(body_of(req).get("anthropic_beta")) if isinstance(b, str)}
    return found


def lacks_beta(req: RecordedRequest, beta: str | re.Pattern[str]) -> bool:
    """Whether the request names its betas and not ``beta``. A request naming none is given
    the benefit of the doubt: recorded exchanges keep no headers, and the API took them
    (tests/testing/test_fidelity.py sends them as recorded)."""
    sent = betas(req)
    if not sent:
        return False
    if isinstance(beta, str):
        return beta not in sent
    return not any(beta.fullmatch(b) for b in sent)


def tool_types_rule(known: frozenset[str], with_beta: Mapping[str, str]) -> Rule:
    """The rule refusing a tool type the platform does not take (``known``, plus those of
    ``with_beta`` unless the request lacks their beta: lacks_beta): "tools.0: Input tag
    'web_search_20250305' found using 'type' does not match any of the expected tags: ..."
    (the answer quoted in the sources of CLIENT_TOOLS and API_BETA_TOOLS)."""

    def tool_types_known(req: RecordedRequest) -> Rejection | None:
        """400 "tools.0: Input tag 'web_search_20250305' found using 'type' does not match
        any of the expected tags: 'bash_20250124', 'custom', 'text_editor_20250124'" for a
        tool type the platform does not take (answers quoted in
        https://github.com/anthropics/anthropic-sdk-python/issues/948 and
        https://github.com/anthropics/anthropic-sdk-go/issues/235)."""
        accepted = known | {kind for kind, beta in with_beta.items() if not lacks_beta(req, beta)}
        for index, tool in dicts(body_of(req).get("tools")):
            kind = tool.get("type")
            if kind is None or kind in accepted:
                continue
            tags = ", ".join(f"'{k}'" for k in sorted(accepted))
            return invalid(
                f"tools.{index}: Input tag '{kind}' found using 'type' does not match any of "
                f"the expected tags: {tags}"
            )
        return None

    return tool_types_known


def server_tool_names_valid(req: RecordedRequest) -> Rejection | None:
    """400 "tools.0.web_search_20250305.name: Input should be 'web_search'" for a server
    tool whose name is not its type's (quoted in
    https://github.com/router-for-me/CLIProxyAPI/issues/1094)."""
    for index, tool in dicts(body_of(req).get("tools")):
        kind = str(tool.get("type"))
        fixed = next((name for pattern, name in _FIXED_NAMES if pattern.fullmatch(kind)), None)
        if fixed is not None and tool.get("name") != fixed:
            return invalid(f"tools.{index}.{kind}.name: Input should be '{fixed}'")
    return None


def server_tool_domains_valid(req: RecordedRequest) -> Rejection | None:
    """400 for an empty domain list ("tools.0.web_search_20250305.blocked_domains: Empty
    list of domains is ambiguous. Provide at least one domain or null.", quoted in
    https://github.com/CherryHQ/cherry-studio/pull/10374) and for both lists at once (the
    SDK's WebSearchTool20250305Param: "Cannot be used alongside"; the answer "Cannot specify
    both allowed_domains and blocked_domains in the same request" is quoted in
    https://github.com/anthropics/claude-code/issues/19131)."""
    for index, tool in dicts(body_of(req).get("tools")):
        kind = tool.get("type")
        for key in _DOMAINS:
            if tool.get(key) == []:
                return invalid(
                    f"tools.{index}.{kind}.{key}: Empty list of domains is ambiguous. Provide "
                    "at least one domain or null."
                )
        if all(tool.get(key) for key in _DOMAINS):
            return invalid(
                f"tools.{index}.{kind}: Cannot specify both allowed_domains and "
                "blocked_domains in the same request"
            )
    return None


def server_tool_max_uses_valid(req: RecordedRequest) -> Rejection | None:
    """400 for a ``max_uses`` below 1 (the tools' pages: "Maximum number of times the tool
    can be used", https://docs.claude.com/en/docs/agents-and-tools/tool-use/web-search-tool;
    the validator's usual bound answer, as for ``budget_tokens``)."""
    for index, tool in dicts(body_of(req).get("tools")):
        uses = tool.get("max_uses")
        if uses is None:
            continue
        if type(uses) is not int:
            return invalid(
                f"tools.{index}.{tool.get('type')}.max_uses: Input should be a valid integer"
            )
        if uses < 1:
            return invalid(
                f"tools.{index}.{tool.get('type')}.max_uses: Input should be greater than or "
                "equal to 1"
            )
    return None


def mcp_servers_valid(req: RecordedRequest) -> Rejection | None:
    """The MCP connector (https://docs.claude.com/en/docs/agents-and-tools/mcp-connector):
    ``mcp_servers`` only with an ``mcp-client-*`` beta
    (without it the field is unknown: the validator's "Extra inputs are not permitted";
    checked when the request names its betas: lacks_beta);
    each server ``{"type": "url", "url": "https://...", "name"}``; an ``mcp_toolset`` names
    one of them."""
    body = body_of(req)
    if "mcp_servers" not in body:
        return None
    if lacks_beta(req, _MCP_BETA):
        return invalid("mcp_servers: Extra inputs are not permitted")
    names = set()
    for index, server in dicts(body.get("mcp_servers")):
        problem = _mcp_server_problem(server)
        if problem:
            return invalid(f"mcp_servers.{index}.{problem}")
        names.add(server["name"])
    return _toolsets_named(body, names)


def _mcp_server_problem(server: dict[str, Any]) -> str | None:
    """What is wrong with one server definition ("url": "Must start with https://")."""
    if server.get("type") != "url":
        return "type: Input should be 'url'"
    if not isinstance(server.get("url"), str) or not server["url"].startswith("https://"):
        return "url: URL must start with https://"
    if not isinstance(server.get("name"), str) or not server["name"]:
        return "name: Field required"
    return None


def _toolsets_named(body: dict[str, Any], names: set[str]) -> Rejection | None:
    """An mcp_toolset's mcp_server_name "must match a server name defined in the mcp_servers
    array" (the connector's page; the wording of the answer is Zerda's)."""
    for index, tool in dicts(body.get("tools")):
        if tool.get("type") == "mcp_toolset" and tool.get("mcp_server_name") not in names:
            return invalid(
                f"tools.{index}.mcp_toolset.mcp_server_name: no MCP server named "
                f"{tool.get('mcp_server_name')!r} in mcp_servers"
            )
    return None


def no_mcp_servers(req: RecordedRequest) -> Rejection | None:
    """A platform without the MCP connector ("not supported on Amazon Bedrock and Google
    Vertex", https://docs.claude.com/en/docs/agents-and-tools/mcp-connector) does not know
    the field: "Extra inputs are not permitted"."""
    if "mcp_servers" in body_of(req):
        return invalid("mcp_servers: Extra inputs are not permitted")
    return None


# Every platform's checks of the server tools it runs.
SERVER_TOOL_RULES: tuple[Rule, ...] = (
    server_tool_names_valid,
    server_tool_domains_valid,
    server_tool_max_uses_valid,
)
# api.anthropic.com: its tool types, the MCP connector.
api_tool_types_known = tool_types_rule(CLIENT_TOOLS | API_SERVER_TOOLS, API_BETA_TOOLS)
API_HOSTED_RULES: tuple[Rule, ...] = (api_tool_types_known, mcp_servers_valid)
