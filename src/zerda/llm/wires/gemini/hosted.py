"""Gemini's hosted tools (DESIGN §18): the request's tools, what the answer says the model
ran and cited, and those parts sent back.

Request: each unified hosted tool is a ``Tool`` of generateContent's ``tools``
(https://ai.google.dev/api/caching#Tool), in google-genai's field names, which its config
converter writes as the REST body (``{"google_search": {}}`` becomes ``{"googleSearch": {}}``):
``google_search`` (Vertex AI: ``exclude_domains`` for blocked domains), ``url_context``,
``code_execution``, ``file_search`` (``file_search_store_names``, ``top_k``). A native tool
goes in the list as it is.

Answer (https://ai.google.dev/api/generate-content#candidate):

- ``executableCode`` + ``codeExecutionResult`` parts (matched by ``id`` when they have one,
  else in order): one ``code_execution`` call each, input ``{"code", "language"}``, output
  the result's ``output`` (https://ai.google.dev/gemini-api/docs/code-execution);
- ``toolCall`` + ``toolResponse`` parts (Gemini 3 with ``includeServerSideToolInvocations``,
  https://ai.google.dev/gemini-api/docs/tool-combination): one call each by ``toolType``
  (GOOGLE_SEARCH_WEB → ``web_search``, URL_CONTEXT → ``web_fetch``, FILE_SEARCH →
  ``file_search``, anything else ``other``), input the call's ``args``;
- ``groundingMetadata`` (https://ai.google.dev/api/generate-content#GroundingMetadata):
  ``webSearchQueries`` and web ``groundingChunks`` are ONE ``web_search`` call of the answer
  (input ``{"queries"}``, output the sources, ``title (uri)`` a line), ``retrievedContext``
  chunks one ``file_search`` call, ``maps`` chunks one ``other`` (google_maps) call; where a
  ``toolCall`` of that type was made, its output is the sources instead. Each
  ``groundingSupports`` entry cites each of its chunks: one citation per (support, chunk),
  ``segment.startIndex``/``endIndex`` (UTF-8 bytes into the answer's text) as characters;
- ``urlContextMetadata`` (https://ai.google.dev/gemini-api/docs/url-context): one
  ``web_fetch`` call, input ``{"urls"}``, output ``url (status)`` a line;
- a part of a kind Zerda does not know: an ``other`` call named by its field, kept.

Streams bring the same parts chunk by chunk and the grounding metadata with the last
chunk(s); its offsets count the whole answer's text. :class:`Collector` reads them the same
way in both, so a stream's result equals generate's. The answer's non-thought parts
(native JSON, consecutive texts joined) are kept in ``provider_data["gemini"]["parts"]``
when it ran anything, and :func:`replay_parts` sends them back in their place.

Every accessor reads a google-genai object (snake_case attributes) and a plain JSON dict
(camelCase keys, or snake_case) alike.
"""

from __future__ import annotations

import base64
import binascii
import functools
from collections.abc import Mapping
from typing import Any

from zerda.llm._server_tools import char_offsets, citation, server_call
from zerda.llm.errors import InvalidRequestError

Part = dict[str, Any]

# google-genai Part fields that are no server-side tool (or are read elsewhere).
_PLAIN_FIELDS = frozenset(
    {
        "text", "thought", "thought_signature", "function_call", "function_response",
        "inline_data", "file_data", "video_metadata", "part_metadata", "media_resolution",
        "audio_transcription", "speech_metadata", "document_metadata", "spreadsheet_metadata",
        "audio_metadata",
    }
)  # fmt: skip
_HOSTED_FIELDS = ("executable_code", "code_execution_result", "tool_call", "tool_response")
# ToolCall.toolType (google-genai's ToolType) -> (unified type, native name).
_TOOL_TYPES = {
    "GOOGLE_SEARCH_WEB": ("web_search", "google_search"),
    "GOOGLE_SEARCH_IMAGE": ("web_search", "google_search"),
    "URL_CONTEXT": ("web_fetch", "url_context"),
    "FILE_SEARCH": ("file_search", "file_search"),
    "GOOGLE_MAPS": ("other", "google_maps"),
}
# Parts of Gemini's own server-side tools, which Vertex AI does not take back ("tool_call
# parameter is only supported in Gemini Developer API mode", google-genai's _Part_to_vertex).
_GEMINI_API_ONLY = ("toolCall", "toolResponse", "tool_call", "tool_response")


# --- accessors ----------------------------------------------------------------------------


@functools.lru_cache(maxsize=128)
def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


def field(obj: Any, name: str) -> Any:
    """``obj``'s field ``name`` (snake_case): an SDK object's attribute, a dict's key in
    camelCase or snake_case; None when absent."""
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        value = obj.get(_camel(name))
        return obj.get(name) if value is None else value
    return getattr(obj, name, None)


def _enum(value: Any) -> str | None:
    """An enum's name (google-genai's enums are str enums; JSON gives the name)."""
    value = getattr(value, "value", value)
    return value if isinstance(value, str) else None


def _items(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else []


# --- request ------------------------------------------------------------------------------


def map_hosted(
    hosted: tuple[dict[str, Any], ...], traits: Mapping[str, Any]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(the unified hosted tools as google-genai ``Tool`` dicts, the native tools as given)."""
    unified, native = [], []
    for tool in hosted:
        if tool["type"] == "native":
            native.append(tool["tool"])
        else:
            unified.append({traits[tool["type"]].native: _map_options(tool)})
    return unified, native


def _map_options(tool: dict[str, Any]) -> dict[str, Any]:
    """The native tool's fields for the options the row honours (the core refused others):
    Vertex AI's ``GoogleSearch.exclude_domains`` ("List of domains to be excluded from the
    search results", https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1/Tool#googlesearch),
    the Gemini API's ``FileSearch.file_search_store_names`` and ``top_k``
    (https://ai.google.dev/api/caching#FileSearch)."""
    options: dict[str, Any] = {}
    if "blocked_domains" in tool:
        options["exclude_domains"] = list(tool["blocked_domains"])
    if "vector_store_ids" in tool:
        options["file_search_store_names"] = list(tool["vector_store_ids"])
    if "max_num_results" in tool:
        options["top_k"] = tool["max_num_results"]
    return options


# --- the answer ---------------------------------------------------------------------------


def has_hosted(candidate: Any, parts: list[Any]) -> bool:
    """Whether an answer holds anything :class:`Collector` reads (else it is not built)."""
    if field(candidate, "grounding_metadata") or field(candidate, "url_context_metadata"):
        return True
    return any(_is_other(p) for p in parts if not _plain(p))


def _plain(part: Any) -> bool:
    """A text or function call part (thoughts included)."""
    return field(part, "text") is not None or field(part, "function_call") is not None


def _is_other(part: Any) -> bool:
    """A part that is neither text nor a function call: a hosted tool's, or unknown."""
    return bool(_fields(part) - _PLAIN_FIELDS)


def _fields(part: Any) -> set[str]:
    """The snake_case names of the fields a part holds."""
    if isinstance(part, Mapping):
        return {_snake(k) for k, v in part.items() if v is not None}
    set_fields = getattr(part, "model_fields_set", None) or ()
    return {k for k in set_fields if getattr(part, k, None) is not None}


@functools.lru_cache(maxsize=128)
def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


class Collector:
    """One answer's server-side tool parts and grounding, read as they arrive (all at once
    from generate, chunk by chunk from a stream): :meth:`part` returns the calls a part
    completes, :meth:`finish` the rest and the citations once the text is whole."""

    def __init__(self) -> None:
        self.code: list[dict[str, Any]] = []  # executableCode parts waiting for a result
        self.invocations: list[dict[str, Any]] = []  # toolCall parts, in order
        self.parts: list[Part] = []  # the answer's non-thought parts, native JSON
        self.ran = False  # a server-side part was seen
        self.grounding: Any = None
        self.url_context: Any = None

    def part(self, part: Any) -> list[dict[str, Any]]:
        """Logs ``part``; the code_execution call it completes, or an unknown part's call."""
        if field(part, "thought"):
            return []
        self._log(part)
        if _plain(part):
            return []
        kinds = _fields(part) - _PLAIN_FIELDS
        if not kinds:
            return []
        self.ran = True
        if "executable_code" in kinds:
            self.code.append(_code(field(part, "executable_code")))
            return []
        if "code_execution_result" in kinds:
            return [self._result(field(part, "code_execution_result"))]
        if "tool_call" in kinds:
            self.invocations.append(_invocation(field(part, "tool_call")))
            return []
        if "tool_response" in kinds:
            self._respond(field(part, "tool_response"))
            return []
        return [_unknown(part, sorted(kinds)[0])]

    def candidate(self, candidate: Any) -> None:
        """The candidate's grounding and URL context metadata (the last non-empty ones: a
        stream sends empty ones before)."""
        grounding = field(candidate, "grounding_metadata")
        if grounding and (field(grounding, "grounding_chunks") or _queries(grounding)):
            self.grounding = grounding
        url_context = field(candidate, "url_context_metadata")
        if url_context and field(url_context, "url_metadata"):
            self.url_context = url_context

    def finish(self, content: str | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The calls not yet complete (code without a result, the tool invocations, the
        grounding's and URL context's) and the citations over ``content``."""
        calls = [_code_call(code, None) for code in self.code]
        self.code = []
        chunks = _chunks(self.grounding)
        grounded = self._grounded(chunks)  # first: they may give an invocation its output
        fetched = self._fetched()
        calls += [_invocation_call(i) for i in self.invocations] + grounded + fetched
        return calls, _citations(self.grounding, chunks, content or "")

    def provider_parts(self) -> list[Part] | None:
        """The parts kept for the history: when the answer ran a server-side tool."""
        if not (self.ran or self.grounding is not None or self.url_context is not None):
            return None
        return [dict(p) for p in self.parts]

    # -- pieces --

    def _fetched(self) -> list[dict[str, Any]]:
        """The URL context's call, else its URLs as the output of the answer's URL_CONTEXT
        toolCall still without one."""
        if self.url_context is None:
            return []
        call = _url_context_call(self.url_context)
        invoked = [i for i in self.invocations if i["type"] == "web_fetch"]
        if not invoked:
            return [call]
        if invoked[-1]["output"] is None and _readable(invoked[-1]) is None:
            invoked[-1]["output"] = call["output"]
        return []

    def _log(self, part: Any) -> None:
        """The part's native JSON; consecutive text parts are one (a stream splits them),
        signed with the last signature; empty unsigned text is left out."""
        native = part_json(part)
        text = native.get("text")
        if isinstance(text, str) and _text_only(native):
            last = self.parts[-1] if self.parts else None
            if last is not None and _text_only(last):
                last["text"] += text
                if native.get("thoughtSignature"):
                    last["thoughtSignature"] = native["thoughtSignature"]
                return
            if not text and not native.get("thoughtSignature"):
                return
        self.parts.append(native)

    def _result(self, result: Any) -> dict[str, Any]:
        """The code_execution call a codeExecutionResult completes: its code by id, else
        the first waiting."""
        wanted = field(result, "id")
        index = next((i for i, c in enumerate(self.code) if wanted and c["id"] == wanted), 0)
        code = self.code.pop(index) if self.code else {"id": wanted, "code": None}
        return _code_call(code, result)

    def _respond(self, response: Any) -> None:
        wanted = field(response, "id")
        for invocation in self.invocations:
            if invocation["response"] is None and (not wanted or invocation["id"] == wanted):
                invocation["response"] = response
                return
        invocation = _invocation(response)  # a response without its call: kept
        invocation["response"] = response
        self.invocations.append(invocation)

    def _grounded(self, chunks: list[tuple[str, Any]]) -> list[dict[str, Any]]:
        """The grounding's calls: one per kind of source, else its sources as the output
        of the last toolCall of that kind still without one."""
        out = []
        for kind, name, sources in _grounding_calls(self.grounding, chunks):
            invoked = [i for i in self.invocations if i["type"] == kind]
            if invoked:
                if invoked[-1]["output"] is None and _readable(invoked[-1]) is None:
                    invoked[-1]["output"] = sources
                continue
            arguments = {"queries": _queries(self.grounding)} if kind == "web_search" else {}
            out.append(server_call(None, kind, name, arguments, sources))
        return out


def _text_only(native: Part) -> bool:
    """A text part (with its signature at most), which the next text part continues."""
    return "text" in native and (
        len(native) == 1 or (len(native) == 2 and "thoughtSignature" in native)
    )


# -- code execution --


def _code(executable: Any) -> dict[str, Any]:
    return {
        "id": field(executable, "id"),
        "code": field(executable, "code"),
        "language": _enum(field(executable, "language")),
    }


def _code_call(code: dict[str, Any], result: Any) -> dict[str, Any]:
    """A code_execution call: the code and its language; the result's output (stdout, or
    the error), else its outcome when it printed nothing but failed."""
    arguments = {"code": code["code"]}
    if code.get("language"):
        arguments["language"] = code["language"]
    output = field(result, "output") if result is not None else None
    outcome = _enum(field(result, "outcome")) if result is not None else None
    if not output and outcome not in (None, "OUTCOME_OK"):
        output = outcome
    call_id = code["id"] or (field(result, "id") if result is not None else None)
    return server_call(call_id, "code_execution", "code_execution", arguments, output)


# -- toolCall / toolResponse --


def _invocation(call: Any) -> dict[str, Any]:
    tool_type = _enum(field(call, "tool_type")) or "TOOL_TYPE_UNSPECIFIED"
    kind, name = _TOOL_TYPES.get(tool_type, ("other", tool_type.lower()))
    return {
        "id": field(call, "id"),
        "type": kind,
        "name": name,
        "args": field(call, "args"),
        "response": None,
        "output": None,
    }


def _readable(invocation: dict[str, Any]) -> Any:
    """A toolResponse's readable part: its ``output`` text, else its fields (server_call
    writes them as JSON), without the Google Search suggestions' HTML
    (``search_suggestions``, a widget to show,
    https://ai.google.dev/gemini-api/docs/google-search#search-suggestions)."""
    response = field(invocation["response"], "response")
    if not isinstance(response, Mapping):
        return None
    if isinstance(response.get("output"), str):
        return response["output"]
    rest = {k: v for k, v in response.items() if k != "search_suggestions"}
    return rest or None


def _invocation_call(invocation: dict[str, Any]) -> dict[str, Any]:
    output = invocation["output"] or _readable(invocation)
    return server_call(
        invocation["id"], invocation["type"], invocation["name"], invocation["args"], output
    )


def _unknown(part: Any, kind: str) -> dict[str, Any]:
    """A part of a kind Zerda does not know: an ``other`` call named by its field."""
    value = field(part, kind)
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json", by_alias=True, exclude_none=True)
    return server_call(field(value, "id"), "other", kind, value, None)


# -- grounding --


def _queries(grounding: Any) -> list[str]:
    """The Google Search queries (Gemini lists an empty one at times: left out)."""
    return [q for q in _items(field(grounding, "web_search_queries")) if isinstance(q, str) and q]


def _chunks(grounding: Any) -> list[tuple[str, Any]]:
    """(source kind, source) of each grounding chunk, in order: ``web``,
    ``retrieved_context``, ``maps``, else the chunk itself as ``other``."""
    out = []
    for chunk in _items(field(grounding, "grounding_chunks")):
        for kind in ("web", "retrieved_context", "maps", "image"):
            source = field(chunk, kind)
            if source is not None:
                out.append((kind, source))
                break
        else:
            out.append(("other", chunk))
    return out


def _grounding_calls(
    grounding: Any, chunks: list[tuple[str, Any]]
) -> list[tuple[str, str, str | None]]:
    """(type, name, sources) of the calls a grounding stands for: Google Search where it
    searched (web pages cited without a query are URL context's, or another tool's), file
    search where it retrieved, Google Maps where it cites places."""
    calls = []
    if _queries(grounding):
        web = [s for k, s in chunks if k in ("web", "image")]
        calls.append(("web_search", "google_search", _sources(web)))
    retrieved = [s for k, s in chunks if k == "retrieved_context"]
    if retrieved:
        calls.append(("file_search", "file_search", _sources(retrieved)))
    places = [s for k, s in chunks if k == "maps"]
    if places:
        calls.append(("other", "google_maps", _sources(places)))
    return calls


def _sources(sources: list[Any]) -> str | None:
    """The sources, ``title (uri)`` a line (the one that is there when not both)."""
    return "\n".join(_source_line(s) for s in sources) or None


def _source_line(source: Any) -> str:
    title = field(source, "title") or field(source, "document_name")
    uri = field(source, "uri") or field(source, "file_search_store")
    if title and uri:
        return f"{title} ({uri})"
    return str(title or uri or "")


def _citations(grounding: Any, chunks: list[tuple[str, Any]], content: str) -> list[dict[str, Any]]:
    """One citation per (grounding support, chunk it cites), offsets as characters."""
    out = []
    for support in _items(field(grounding, "grounding_supports")):
        segment = field(support, "segment")
        start, end = _span(content, segment)
        for index in _items(field(support, "grounding_chunk_indices")):
            if not isinstance(index, int) or not 0 <= index < len(chunks):
                continue
            source = chunks[index][1]
            title = field(source, "title") or field(source, "document_name")
            cited = citation(field(source, "uri"), title, field(segment, "text"), start, end)
            out.append(cited)
    return out


def _span(content: str, segment: Any) -> tuple[int | None, int | None]:
    """A segment's UTF-8 byte offsets (``startIndex`` absent is 0, as protobuf's JSON leaves
    zeros out) as character offsets into the answer's text. Gemini's offsets drift at
    times (recording pydantic-ai__test_google.test_google_vertex_tool_combination_omits_include_server_side_tool_invocations__i01:
    from its fifth support on, two bytes past the segment's text): where the span does not
    hold the segment's text, the text's occurrence nearest to it is the span."""
    end = field(segment, "end_index")
    if end is None:
        return None, None
    start, stop = char_offsets(content, field(segment, "start_index") or 0, end)
    text = field(segment, "text")
    if not isinstance(text, str) or not text or (start is not None and content[start:stop] == text):
        return start, stop
    found = _nearest(content, text, start or 0)
    return (found, found + len(text)) if found is not None else (start, stop)


def _nearest(content: str, text: str, anchor: int) -> int | None:
    """The start of the occurrence of ``text`` in ``content`` nearest to ``anchor``."""
    best, at = None, content.find(text)
    while at != -1:
        if best is None or abs(at - anchor) < abs(best - anchor):
            best = at
        at = content.find(text, at + 1)
    return best


def _url_context_call(url_context: Any) -> dict[str, Any]:
    urls, lines = [], []
    for entry in _items(field(url_context, "url_metadata")):
        url = field(entry, "retrieved_url")
        status = _enum(field(entry, "url_retrieval_status"))
        urls.append(url)
        lines.append(f"{url} ({status})" if status else str(url))
    return server_call(None, "web_fetch", "url_context", {"urls": urls}, "\n".join(lines) or None)


# --- parts as JSON, and back --------------------------------------------------------------


def part_json(part: Any) -> Part:
    """A part's native JSON (camelCase, the thought signature as standard base64, as the
    API sends it)."""
    if isinstance(part, Mapping):
        return {k: v for k, v in part.items() if v is not None}
    signature = getattr(part, "thought_signature", None)
    if part.text is not None and part.function_call is None and part.thought is None:
        native: Part = {"text": part.text}  # the common part, without a model dump
    else:
        native = part.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(signature, bytes):
        native["thoughtSignature"] = base64.b64encode(signature).decode("ascii")
    return native


def stored_parts(provider_data: Any) -> list[Any] | None:
    """``provider_data["gemini"]["parts"]``, when there."""
    gemini = provider_data.get("gemini") if isinstance(provider_data, Mapping) else None
    parts = gemini.get("parts") if isinstance(gemini, Mapping) else None
    return parts if isinstance(parts, list) and parts else None


def replays(message: dict[str, Any], vertex: bool) -> bool:
    """Whether the turn's kept parts go back as they are: always to the Gemini API; to
    Vertex AI unless they hold the Gemini API's own server-side tool parts, which it does
    not take (then the turn goes as text and function calls, its calls' readable part
    before its text, as to any other provider)."""
    parts = stored_parts(message.get("provider_data"))
    if parts is None:
        return False
    return not vertex or not any(
        isinstance(p, Mapping) and any(k in p for k in _GEMINI_API_ONLY) for p in parts
    )


def replay_parts(message: dict[str, Any], calls: list[Part], vertex: bool) -> list[Part] | None:
    """The model turn's parts as the answer had them: the kept parts in order, its function
    calls (``calls``, built as for any turn) where the answer had them, the text replaced
    by the message's when it was edited; None when the turn keeps no parts or they do not
    go back to this API (:func:`replays`)."""
    stored = stored_parts(message.get("provider_data"))
    if stored is None or not replays(message, vertex):
        return None
    text = message.get("content") or ""
    kept_text = "".join(p.get("text") or "" for p in stored if isinstance(p, Mapping))
    edited = kept_text != text
    pending = iter(calls)
    out: list[Part] = [{"text": text}] if edited and text else []
    for j, part in enumerate(stored):
        if not isinstance(part, Mapping):
            raise InvalidRequestError(f"provider_data gemini parts[{j}] must be a dict (a part)")
        if "functionCall" in part or "function_call" in part:
            out.extend(_next_call(pending))
        elif "text" in part and set(part) <= {"text", "thoughtSignature", "thought_signature"}:
            if not edited:
                out.append(_wire_part(j, part))
        else:
            out.append(_wire_part(j, part))
    out.extend(pending)
    return out


def _next_call(parts: Any) -> list[Part]:
    """The next function call part, if any is left."""
    part = next(parts, None)
    return [part] if part is not None else []


def _wire_part(j: int, part: Mapping[str, Any]) -> Part:
    """A kept part as sent: its thought signature as URL-safe base64 (google-genai sends
    bytes so)."""
    out = dict(part)
    for key in ("thoughtSignature", "thought_signature"):
        if key in out:
            out[key] = _wire_signature(j, out[key])
    for key in ("toolCall", "toolResponse"):
        # google-genai sends these models as they are: snake_case fields (``tool_type``),
        # as the recorded follow-ups show (the API reads both spellings).
        if isinstance(out.get(key), Mapping):
            out[key] = {_snake(k): v for k, v in out[key].items()}
    return out


def _wire_signature(j: int, text: Any) -> str:
    if not isinstance(text, str):
        raise InvalidRequestError(f"provider_data gemini parts[{j}] thoughtSignature must be text")
    try:
        raw = base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        raise InvalidRequestError(
            f"provider_data gemini parts[{j}] thoughtSignature is not base64: {text[:20]!r}"
        ) from None
    return base64.urlsafe_b64encode(raw).decode("ascii")
