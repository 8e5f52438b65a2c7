"""A script's hosted-tool calls and citations (DESIGN §18) as Gemini sends them, in the
shapes Zerda reads back to the same calls and citations (zerda/llm/wires/gemini/hosted.py):

- ``code_execution``: an ``executableCode`` part (``input.code``, ``input.language`` when
  given) and a ``codeExecutionResult`` part (``OUTCOME_OK``, ``output``), ids when the
  script gives one (https://ai.google.dev/gemini-api/docs/code-execution);
- ``web_search`` without an id, whose input is ``{"queries": [...]}``: the answer's
  ``groundingMetadata`` (``webSearchQueries``, a web ``groundingChunks`` entry per line of
  the output, ``title (uri)``), as Gemini 2.5 grounds with Google Search
  (https://ai.google.dev/gemini-api/docs/google-search);
- ``web_fetch`` without an id, whose input is ``{"urls": [...]}`` and output ``url
  (status)`` lines (or none): ``urlContextMetadata``
  (https://ai.google.dev/gemini-api/docs/url-context);
- any other call: a ``toolCall`` part (``toolType`` by type: GOOGLE_SEARCH_WEB,
  URL_CONTEXT, FILE_SEARCH, else the name in capitals; ``args`` the input) and a
  ``toolResponse`` part (``response.output``), as Gemini 3 shows its server-side tools
  with ``includeServerSideToolInvocations``
  (https://ai.google.dev/gemini-api/docs/tool-combination).

Citations are ``groundingSupports``, one per citation, each citing one ``groundingChunks``
entry (its url and title; ``retrievedContext`` when the script ran a file search and no
web search), ``segment.startIndex``/``endIndex`` in UTF-8 bytes of the text.
"""

from __future__ import annotations

import re
from typing import Any

from zerda.testing._script import Script

_TOOL_TYPES = {
    "web_search": "GOOGLE_SEARCH_WEB",
    "web_fetch": "URL_CONTEXT",
    "file_search": "FILE_SEARCH",
}
_SOURCE = re.compile(r"^(.*) \((\w[\w+.-]*://[^()]*)\)$")
_URL = re.compile(r"^\w[\w+.-]*://\S+$")
_FETCHED = re.compile(r"^(\S+) \((URL_RETRIEVAL_STATUS_[A-Z_]+)\)$")
_SUCCESS = "URL_RETRIEVAL_STATUS_SUCCESS"


def server_parts(script: Script) -> list[dict[str, Any]]:
    """The parts of the script's calls that travel as parts, in order."""
    parts: list[dict[str, Any]] = []
    for call in script.server_tool_calls:
        if call["type"] == "code_execution":
            parts += _code_parts(call)
        elif not (_grounded_search(call) or _fetched(call) is not None):
            parts += _invocation_parts(call)
    return parts


def _code_parts(call: dict[str, Any]) -> list[dict[str, Any]]:
    arguments = call.get("input") or {}
    executable: dict[str, Any] = {"code": arguments.get("code", "")}
    if arguments.get("language"):
        executable["language"] = arguments["language"]
    result: dict[str, Any] = {"outcome": "OUTCOME_OK"}
    if call.get("output") is not None:
        result["output"] = call["output"]
    if call.get("id"):
        executable["id"] = result["id"] = call["id"]
    return [{"executableCode": executable}, {"codeExecutionResult": result}]


def _invocation_parts(call: dict[str, Any]) -> list[dict[str, Any]]:
    tool_type = _TOOL_TYPES.get(call["type"]) or str(call.get("name") or "other").upper()
    invoked: dict[str, Any] = {"toolType": tool_type, "args": call.get("input") or {}}
    response: dict[str, Any] = {"toolType": tool_type, "response": {}}
    if call.get("output") is not None:
        response["response"] = {"output": call["output"]}
    if call.get("id"):
        invoked["id"] = response["id"] = call["id"]
    return [{"toolCall": invoked}, {"toolResponse": response}]


def _grounded_search(call: dict[str, Any]) -> bool:
    """A Google Search Gemini reports as grounding only: no id, input ``{"queries"}``."""
    arguments = call.get("input") or {}
    queries = arguments.get("queries")
    return (
        call["type"] == "web_search"
        and not call.get("id")
        and set(arguments) == {"queries"}
        and isinstance(queries, list)
        and bool(queries)
        and all(isinstance(q, str) and q for q in queries)
    )


def _fetched(call: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The urlMetadata of a URL context fetch Gemini reports as metadata only (no id, input
    ``{"urls"}``, output None or ``url (status)`` lines for those URLs); None otherwise."""
    arguments = call.get("input") or {}
    urls = arguments.get("urls")
    if call["type"] != "web_fetch" or call.get("id") or set(arguments) != {"urls"}:
        return None
    if not isinstance(urls, list) or not urls or not all(isinstance(u, str) for u in urls):
        return None
    output = call.get("output")
    if output is None:
        statuses = [_SUCCESS] * len(urls)
    else:
        matches = [_FETCHED.match(line) for line in str(output).split("\n")]
        if len(matches) != len(urls) or not all(
            m and m.group(1) == u for m, u in zip(matches, urls, strict=True)
        ):
            return None
        statuses = [m.group(2) for m in matches if m]
    return [
        {"retrievedUrl": u, "urlRetrievalStatus": s} for u, s in zip(urls, statuses, strict=True)
    ]


def candidate_metadata(script: Script) -> dict[str, Any]:
    """The candidate's ``groundingMetadata`` and ``urlContextMetadata`` (the final chunk's
    in a stream), where the script has them."""
    out: dict[str, Any] = {}
    grounding = _grounding(script)
    if grounding:
        out["groundingMetadata"] = grounding
    fetched = [m for c in script.server_tool_calls for m in (_fetched(c) or [])]
    if fetched:
        out["urlContextMetadata"] = {"urlMetadata": fetched}
    return out


def _grounding(script: Script) -> dict[str, Any]:
    searches = [c for c in script.server_tool_calls if _grounded_search(c)]
    kind = "web"
    types = {c["type"] for c in script.server_tool_calls}
    if "file_search" in types and "web_search" not in types:
        kind = "retrievedContext"
    chunks = [{kind: source} for c in searches for source in _sources(c.get("output"))]
    grounding: dict[str, Any] = {}
    if searches:
        grounding["webSearchQueries"] = [q for c in searches for q in c["input"]["queries"]]
    supports = [_support(script.text or "", cited, chunks, kind) for cited in script.citations]
    if chunks:
        grounding["groundingChunks"] = chunks
    if supports:
        grounding["groundingSupports"] = supports
    return grounding


def _sources(output: Any) -> list[dict[str, Any]]:
    """A grounded search's output, ``title (uri)`` a line, as web chunks."""
    if not isinstance(output, str):
        return []
    sources = []
    for line in output.split("\n"):
        match = _SOURCE.match(line)
        if match:
            sources.append({"uri": match.group(2), "title": match.group(1)})
        elif _URL.match(line):
            sources.append({"uri": line})
        else:
            sources.append({"title": line})
    return sources


def _support(
    text: str, cited: dict[str, Any], chunks: list[dict[str, Any]], kind: str
) -> dict[str, Any]:
    """One grounding support for a citation, its chunk found (or added) by url and title."""
    source = {k: cited[k] for k in ("url", "title") if cited.get(k) is not None}
    source = {"uri" if k == "url" else k: v for k, v in source.items()}
    if {kind: source} not in chunks:
        chunks.append({kind: source})
    start, end = cited["start"], cited["end"]
    segment: dict[str, Any] = {
        "startIndex": len(text[:start].encode("utf-8")),
        "endIndex": len(text[:end].encode("utf-8")),
    }
    if cited.get("text") is not None:
        segment["text"] = cited["text"]
    return {"segment": segment, "groundingChunkIndices": [chunks.index({kind: source})]}
