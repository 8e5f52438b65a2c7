"""Hosted tools on the Chat Completions shape (DESIGN §18), as pure functions.

OpenAI's Chat Completions runs one hosted tool: web search, on its search models
(``gpt-4o-search-preview``, ``gpt-4o-mini-search-preview``, ``gpt-5-search-api``), asked
with the body's ``web_search_options`` (``search_context_size``, ``user_location``
``{"type": "approximate", "approximate": {city, region, country, timezone}}``):
https://platform.openai.com/docs/guides/tools-web-search?api-mode=chat and
https://platform.openai.com/docs/api-reference/chat/create#chat-create-web_search_options.

The answer cites its sources as ``message.annotations``, each
``{"type": "url_citation", "url_citation": {"start_index", "end_index", "url", "title"}}``
with character offsets into ``message.content``
(https://platform.openai.com/docs/api-reference/chat/object#chat/object-choices); a stream
carries them in a delta's ``annotations`` (its last one, with no text: seen in
https://github.com/openai/openai-java/issues/297), offsets into the whole content.
OpenAI reports no search call item here (no query, no id, no count in ``usage``): an answer
that cites URLs lists ONE ``web_search`` server call, its output the cited sources, as
Zerda does for Gemini's grounding. An answer without citations lists none.

Other services on this shape send the same ``url_citation`` annotations (OpenRouter's web
search) or Groq's ``document_citation`` / ``function_citation`` ones
(groq/types/chat/chat_completion_message.py): every kind becomes a citation; an annotation
of another type is kept in ``provider_data`` only.
"""

from __future__ import annotations

from typing import Any

from zerda.llm._server_tools import citation, server_call
from zerda.llm.tools import _get

# Where the unified user_location's keys go: the same names under "approximate".
_LOCATION_KEYS = ("city", "region", "country", "timezone")


# --- request ---------------------------------------------------------------------------


def map_web_search_options(tool: dict[str, Any]) -> dict[str, Any]:
    """A checked unified ``web_search`` dict as the body's ``web_search_options`` (the core
    has refused every option but ``user_location``); ``{}`` turns the search on as it is."""
    options: dict[str, Any] = {}
    location = tool.get("user_location")
    if location:
        approximate = {k: location[k] for k in _LOCATION_KEYS if k in location}
        options["user_location"] = {"type": "approximate", "approximate": approximate}
    return {"web_search_options": options}


# --- response --------------------------------------------------------------------------


def annotations_of(message: Any) -> list[Any]:
    """The message's (or a delta's) annotations, as plain data; [] without any."""
    annotations = _get(message, "annotations")
    if not isinstance(annotations, list) or not annotations:
        return []
    return [_plain(a) for a in annotations]


def _plain(value: Any) -> Any:
    """An SDK model as its JSON (the documented ``to_dict()``), plain data as it is."""
    to_dict = getattr(type(value), "to_dict", None)
    return to_dict(value) if callable(to_dict) else value


def map_citation(annotation: Any) -> dict[str, Any] | None:
    """One annotation as a citation: ``url_citation`` (a web source), Groq's
    ``document_citation`` (a request document, its id as the title) and
    ``function_citation`` (a tool call's result, its id as the title); None for another
    kind (kept in provider_data, never an error)."""
    kind = _get(annotation, "type")
    if kind not in ("url_citation", "document_citation", "function_citation"):
        return None
    body = _get(annotation, kind)
    start, end = _get(body, "start_index"), _get(body, "end_index")
    if kind == "url_citation":
        return citation(_get(body, "url"), _get(body, "title"), None, start, end)
    label = _get(body, "document_id" if kind == "document_citation" else "tool_call_id")
    return citation(None, label, None, start, end)


def map_citations(annotations: list[Any]) -> list[dict[str, Any]]:
    cited = (map_citation(a) for a in annotations)
    return [c for c in cited if c is not None]


def search_call(citations: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The one ``web_search`` call an answer citing URLs stands for (the API reports none
    itself): no id, no input (the query is not reported), the cited sources as its output,
    one per line, each once, in order."""
    sources: dict[str, str] = {}
    for cited in citations:
        url = cited["url"]
        if url and url not in sources:
            sources[url] = f"{cited['title']}: {url}" if cited["title"] else url
    if not sources:
        return None
    return server_call(None, "web_search", "web_search", {}, "\n".join(sources.values()))
