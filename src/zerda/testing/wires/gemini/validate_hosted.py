"""What generateContent refuses in its built-in (hosted) tools, on the Gemini API and on
Vertex AI (DESIGN §18): a ``Tool`` field or a tool option the API's ``Tool`` message does
not have, a file search without its stores, server-side tool parts and flags Vertex AI
does not have.

The bodies are Google's answer to a JSON field its protobuf message lacks ("Invalid JSON
payload received. Unknown name "additionalProperties" at '...': Cannot find field.", as
quoted in gemini/validate.py's schema_fields_known); the fields are the API references'
(Gemini API ``Tool``: https://ai.google.dev/api/caching#Tool; Vertex AI ``Tool``:
https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1/Tool) and
google-genai's types ("This field is not supported in Gemini API / in Vertex AI").
"""

from __future__ import annotations

from collections.abc import Mapping

from zerda.testing._script import RecordedRequest
from zerda.testing._validate import Rejection, Rule, body_of, dicts

# Each API's Tool fields and, for the built-in tools, their own fields (camelCase; the
# snake_case spelling is read as well).
GEMINI_TOOLS: Mapping[str, frozenset[str] | None] = {
    "functionDeclarations": None,  # checked by the function rules
    "googleSearch": frozenset({"timeRangeFilter", "searchTypes"}),
    "googleSearchRetrieval": frozenset({"dynamicRetrievalConfig"}),
    "codeExecution": frozenset(),
    "urlContext": frozenset(),
    "fileSearch": frozenset({"fileSearchStoreNames", "topK", "metadataFilter"}),
    "googleMaps": frozenset({"enableWidget"}),
    "computerUse": frozenset({"environment", "excludedPredefinedFunctions"}),
    "mcpServers": None,
}
VERTEX_TOOLS: Mapping[str, frozenset[str] | None] = {
    "functionDeclarations": None,
    "googleSearch": frozenset({"excludeDomains", "blockingConfidence", "searchTypes"}),
    "googleSearchRetrieval": frozenset({"dynamicRetrievalConfig"}),
    "enterpriseWebSearch": frozenset({"excludeDomains", "blockingConfidence"}),
    "retrieval": None,
    "codeExecution": frozenset(),
    "urlContext": frozenset(),
    "googleMaps": frozenset({"authConfig", "enableWidget", "groundingTypes"}),
    "computerUse": frozenset({"environment", "excludedPredefinedFunctions"}),
    "parallelAiSearch": None,
    "exaAiSearch": None,
}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def _unknown(name: str, where: str) -> Rejection:
    return Rejection(
        400,
        f"Invalid JSON payload received. Unknown name \"{name}\" at '{where}': Cannot find field.",
        "INVALID_ARGUMENT",
    )


def tools_known(known: Mapping[str, frozenset[str] | None]) -> Rule:
    """A rule: 400 for a ``tools[i]`` field the API's Tool lacks, or a field a built-in
    tool lacks (``googleSearch.excludeDomains`` on the Gemini API, ``fileSearch`` on
    Vertex AI...): https://ai.google.dev/api/caching#Tool and
    https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1/Tool."""

    def hosted_tools_known(req: RecordedRequest) -> Rejection | None:
        for index, tool in dicts(body_of(req).get("tools")):
            for name, value in tool.items():
                if _camel(name) not in known:
                    return _unknown(name, f"tools[{index}]")
                fields = known[_camel(name)]
                if fields is None or not isinstance(value, dict):
                    continue
                extra = [k for k in value if _camel(k) not in fields]
                if extra:
                    return _unknown(extra[0], f"tools[{index}].{_snake(_camel(name))}")
        return None

    hosted_tools_known.__doc__ = tools_known.__doc__
    return hosted_tools_known


def file_search_stores_given(req: RecordedRequest) -> Rejection | None:
    """400 for a ``fileSearch`` without ``fileSearchStoreNames`` ("Required. The names of
    the fileSearchStores to retrieve from", https://ai.google.dev/api/caching#FileSearch),
    answered as a missing required field (gemini/validate.py's contents_present)."""
    for index, tool in dicts(body_of(req).get("tools")):
        search = tool.get("fileSearch", tool.get("file_search"))
        if not isinstance(search, dict):
            continue
        names = search.get("fileSearchStoreNames", search.get("file_search_store_names"))
        if not (isinstance(names, list) and names and all(isinstance(n, str) for n in names)):
            where = f"tools[{index}].file_search.file_search_store_names"
            return Rejection(
                400,
                f"* GenerateContentRequest.{where}: file_search_store_names is not specified\n",
                "INVALID_ARGUMENT",
            )
    return None


def vertex_server_side_parts_absent(req: RecordedRequest) -> Rejection | None:
    """400 on Vertex AI for ``toolCall`` / ``toolResponse`` parts and the tool config's
    ``includeServerSideToolInvocations``: fields of the Gemini API only (google-genai:
    "tool_call parameter is only supported in Gemini Developer API mode";
    ToolConfig.include_server_side_tool_invocations "is not supported in Vertex AI")."""
    body = body_of(req)
    for index, content in dicts(body.get("contents")):
        for position, part in dicts(content.get("parts")):
            for name in ("toolCall", "toolResponse", "tool_call", "tool_response"):
                if name in part:
                    return _unknown(name, f"contents[{index}].parts[{position}]")
    config = body.get("toolConfig", body.get("tool_config"))
    for name in ("includeServerSideToolInvocations", "include_server_side_tool_invocations"):
        if isinstance(config, dict) and name in config:
            return _unknown(name, "tool_config")
    return None


GEMINI_RULES: tuple[Rule, ...] = (tools_known(GEMINI_TOOLS), file_search_stores_given)
VERTEX_RULES: tuple[Rule, ...] = (tools_known(VERTEX_TOOLS), vertex_server_side_parts_absent)
