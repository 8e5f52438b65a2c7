"""Content parts: images, documents, audio, provider-hosted files and cache points.

Parts are plain JSON dicts, so a history holding them stays serialisable:

    {"type": "text", "text": "..."}
    {"type": "image", "data": "<base64>", "media_type": "image/png"}   # or "url": "https://..."
    {"type": "document", "data": "<base64>", "media_type": "application/pdf", "name": "a.pdf"}
    {"type": "audio", "data": "<base64>", "media_type": "audio/wav"}
    {"type": "file", "uri": "gs://b/x.pdf" | "s3://b/x.png" | "file-abc123", "media_type": "..."}
    {"type": "cache_point"}

This module holds the helpers that build them (:func:`image`, :func:`document`,
:func:`audio`), the provider-neutral checks (:func:`check_parts`), the check against what a
provider's registry row accepts (:func:`check_media`) and the one place where media a
provider's tool messages cannot carry are moved to a user message (:func:`move_tool_media`).
Each function returns new objects; the caller's parts are never changed.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Iterable
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, TypeVar, cast

from zerda.llm._traits import PART_TYPES, Media
from zerda.llm.errors import InvalidRequestError

if TYPE_CHECKING:
    from zerda.llm.types import AudioPart, DocumentPart, FilePart, ImagePart

MEDIA_PARTS = ("image", "document", "audio", "file")
_PLAIN = ("text", "cache_point")
# Standard base64 alphabet with padding, as every API here (and data URIs) takes it.
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")
_URL_SCHEMES = ("http://", "https://")
T = TypeVar("T")

# --- sniffing ------------------------------------------------------------------------------

# (offset, magic bytes, media type): the signatures of the formats the providers take.
_MAGIC: tuple[tuple[int, bytes, str], ...] = (
    (0, b"\x89PNG\r\n\x1a\n", "image/png"),
    (0, b"\xff\xd8\xff", "image/jpeg"),
    (0, b"GIF87a", "image/gif"),
    (0, b"GIF89a", "image/gif"),
    (0, b"%PDF-", "application/pdf"),
    (0, b"ID3", "audio/mpeg"),
    (0, b"fLaC", "audio/flac"),
    (0, b"OggS", "audio/ogg"),
    (0, b"BM", "image/bmp"),
    (0, b"II*\x00", "image/tiff"),
    (0, b"MM\x00*", "image/tiff"),
)
_RIFF = {b"WEBP": "image/webp", b"WAVE": "audio/wav"}
_FTYP = {b"heic": "image/heic", b"heix": "image/heic", b"M4A ": "audio/mp4", b"mif1": "image/heif"}


def sniff(head: bytes) -> str | None:
    """The media type the first bytes of a file show (magic numbers), or None."""
    for offset, magic, media_type in _MAGIC:
        if head[offset : offset + len(magic)] == magic:
            return media_type
    if head[:4] == b"RIFF" and head[8:12] in _RIFF:
        return _RIFF[head[8:12]]
    if head[4:8] == b"ftyp":
        return _FTYP.get(head[8:12], "video/mp4")
    if len(head) > 1 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0:  # an MPEG audio frame
        return "audio/mpeg"
    return None


def _guess_from_name(name: str) -> str | None:
    """The media type a file name's extension suggests (the stdlib ``mimetypes`` table,
    with the audio spellings the APIs use)."""
    import mimetypes  # only when a name must be read: it loads the system's type tables

    guessed, _ = mimetypes.guess_type(name, strict=False)
    return {"audio/x-wav": "audio/wav", "audio/x-flac": "audio/flac"}.get(guessed or "", guessed)


def _sniff_base64(data: str) -> str | None:
    return sniff(base64.b64decode(data[:32]))  # 32 characters: 24 bytes, enough for any magic


# --- helpers -------------------------------------------------------------------------------


# What the helpers take: the bytes, a path, or a URL / provider URI.
Source = bytes | bytearray | memoryview | str | os.PathLike[str]


def image(src: Source, media_type: str | None = None) -> ImagePart | FilePart:
    """An image part from bytes, a path, an ``http(s)://`` URL (fetched by the provider)
    or a ``gs://`` / ``s3://`` URI (a ``file`` part)."""
    return cast("ImagePart | FilePart", _part("image", src, media_type))


def document(
    src: Source, media_type: str | None = None, name: str | None = None
) -> DocumentPart | FilePart:
    """A document part (PDF, text...) from bytes, a path, a URL or a ``gs://`` / ``s3://``
    URI; ``name`` defaults to the file's name."""
    part = _part("document", src, media_type)
    if name is None and not isinstance(src, (bytes, bytearray, memoryview)):
        name = PurePath(os.fspath(src)).name or None
    if name and part["type"] == "document":
        part["name"] = name
    return cast("DocumentPart | FilePart", part)


def audio(src: Source, media_type: str | None = None) -> AudioPart | FilePart:
    """An audio part (wav, mp3...) from bytes, a path, a URL or a ``gs://`` / ``s3://`` URI."""
    return cast("AudioPart | FilePart", _part("audio", src, media_type))


def _part(kind: str, src: Any, media_type: str | None) -> dict[str, Any]:
    if isinstance(src, (bytes, bytearray, memoryview)):
        return _inline(kind, bytes(src), media_type, None)
    if not isinstance(src, (str, os.PathLike)):
        raise TypeError(f"{kind}() takes bytes, a path or a URL, not {type(src).__name__}")
    text = os.fspath(src)
    if isinstance(src, str) and src.startswith(_URL_SCHEMES):
        part = {"type": kind, "url": src}
        guessed = media_type or _guess_from_name(src.split("?", 1)[0])
        return {**part, "media_type": guessed} if guessed else part
    if isinstance(src, str) and src.startswith(("gs://", "s3://")):
        guessed = media_type or _guess_from_name(src)
        return {"type": "file", "uri": src, **({"media_type": guessed} if guessed else {})}
    with open(text, "rb") as f:
        raw = f.read()
    return _inline(kind, raw, media_type, text)


def _inline(kind: str, raw: bytes, media_type: str | None, path: str | None) -> dict[str, Any]:
    if not raw:
        raise ValueError(f"{kind}(): the {'file ' + repr(path) if path else 'data'} is empty")
    found = media_type or sniff(raw[:32]) or (_guess_from_name(path) if path else None)
    if not found:
        raise ValueError(
            f"{kind}(): cannot tell the media type of {path or 'these bytes'}: pass media_type="
        )
    return {"type": kind, "data": encode(raw), "media_type": found}


class Base64Text(str):
    """Base64 text that remembers the bytes it encodes (``raw``), so that the SDKs that take
    bytes (boto3, google-genai) get the caller's own bytes back instead of a decoded copy: an
    8 MiB image then costs one encoding and no second copy. It is a ``str`` in every other
    respect (JSON, equality, hashing), so histories stay plain data."""

    raw: bytes


class DataURL:
    """A part's ``data:`` URL (``data:<media type>;base64,<text>``), as the OpenAI-shaped
    APIs take it, kept as its two pieces: the head and the part's own base64 text. The URL
    is never built whole on the fast paths: :mod:`zerda.llm._body_json` writes the text
    straight into the request's bytes (an 8 MiB image then costs no 11 MiB copy of its
    text). ``str()`` builds it for what needs a string (an SDK's documented call, a batch
    file: :func:`with_urls`); it equals that string."""

    __slots__ = ("data", "head")

    def __init__(self, media_type: str, data: str) -> None:
        self.head = f"data:{media_type};base64,"
        self.data = data

    def __str__(self) -> str:
        return self.head + self.data

    def __len__(self) -> int:
        return len(self.head) + len(self.data)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DataURL):
            return self.head == other.head and self.data == other.data
        if isinstance(other, str):  # compared in place: no URL built
            head = self.head
            return len(other) == len(self) and other.startswith(head) and other.endswith(self.data)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(str(self))

    def __repr__(self) -> str:
        return f"DataURL({self.head!r} + {len(self.data)} characters)"


def with_urls(value: T) -> T:
    """``value`` (a request's keyword arguments, mapped fresh for this call) with every
    :class:`DataURL` in its dicts and lists made the string it stands for, in place, for
    what takes only JSON data (an SDK's documented call, a batch file, a count). Only the
    dicts and lists holding a DataURL change, and Zerda's mapping made those; each
    container is visited once (a caller's native value may contain itself)."""
    stack: list[Any] = [value]
    seen: set[int] = set()
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        # Replacing a value in place while iterating is safe: no key is added or removed.
        for key, child in item.items() if isinstance(item, dict) else enumerate(item):
            kind = type(child)
            if kind is str:  # most leaves: one type check, then on
                continue
            if kind is DataURL:
                item[key] = str(child)
            elif isinstance(child, (dict, list)):
                stack.append(child)
    return value


def encode(raw: bytes | bytearray | memoryview) -> Base64Text:
    """The one base64 encoding of a payload: histories hold the text, and every provider's
    mapping reuses it (or its bytes)."""
    data = bytes(raw)  # no copy for bytes
    # decode(): UTF-8's ASCII fast path, quicker than the "ascii" codec on 11 MiB of text.
    text = Base64Text(base64.b64encode(data).decode())
    text.raw = data
    return text


# --- provider-neutral checks -----------------------------------------------------------------


def is_parts(content: Any) -> bool:
    """Whether tool output is a list of parts: a non-empty list whose every item is a dict
    whose ``type`` is a part type (any other list or dict is JSON data)."""
    return (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(p, dict) and p.get("type") in PART_TYPES for p in content)
    )


def _fail(where: str, problem: str) -> InvalidRequestError:
    """``messages[2].content[1].data: is empty`` (a problem naming a field starts with '.')."""
    return InvalidRequestError(
        f"{where}{problem}" if problem.startswith(".") else f"{where}: {problem}"
    )


def check_parts(where: str, content: Any, *, allowed: Iterable[str] = PART_TYPES) -> list[Any]:
    """Checked copies of the parts of one message's ``content`` (``where`` names it, e.g.
    ``messages[2].content``): bytes become base64 text, a ``data:`` URL becomes data, a
    missing media type is sniffed. Raises :class:`InvalidRequestError` naming the part and
    field at the first problem."""
    if not isinstance(content, list) or not content:
        raise _fail(where, "must be a string or a non-empty list of parts")
    allowed = tuple(allowed)
    return [_check_part(f"{where}[{j}]", p, allowed) for j, p in enumerate(content)]


_TOOL_RESULT_HINT = (
    "; Zerda's history holds a tool's output as a message {'role': 'tool', 'tool_call_id', "
    "'content'}: build it with zerda.llm.tool_result(call, output)"
)
_TOOL_USE_HINT = (
    "; Zerda's assistant messages hold tool calls in 'tool_calls' ({'id', 'name', "
    "'arguments'}): append result['message'] as generate returned it"
)
# Blocks of the providers' own formats, met in histories written for an SDK: what to write
# instead (OpenAI Chat content parts, Anthropic content blocks, Responses input parts).
_FOREIGN_PARTS = {
    "image_url": "; that is OpenAI's shape: use zerda.llm.image(url) or {'type': 'image', 'url': ...}",
    "input_image": "; that is OpenAI's shape: use zerda.llm.image(url) or {'type': 'image', 'url': ...}",
    "input_audio": "; that is OpenAI's shape: use zerda.llm.audio(path_or_bytes)",
    "input_text": "; that is OpenAI's shape: use {'type': 'text', 'text': ...}",
    "tool_result": _TOOL_RESULT_HINT,
    "function_call_output": _TOOL_RESULT_HINT,
    "tool_use": _TOOL_USE_HINT,
    "function_call": _TOOL_USE_HINT,
}


def _check_part(where: str, part: Any, allowed: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(part, dict):
        raise _fail(where, f"a part must be a dict with a 'type', not {type(part).__name__}")
    kind = part.get("type")
    if kind not in PART_TYPES:
        raise _fail(
            where,
            f".type: unknown part type {kind!r} (part types: {', '.join(PART_TYPES)})"
            + _FOREIGN_PARTS.get(str(kind), ""),
        )
    if kind not in allowed:
        raise _fail(
            where, f".type: {kind!r} parts are not accepted here (only {', '.join(allowed)})"
        )
    if kind == "text":
        if not isinstance(part.get("text"), str):
            raise _fail(where, ".text: a text part needs 'text' (a string)")
        return {"type": "text", "text": part["text"]}
    if kind == "cache_point":
        return {"type": "cache_point"}
    if kind == "file":
        return _check_file(where, part)
    return _check_media_part(where, kind, part)


def _check_file(where: str, part: dict[str, Any]) -> dict[str, Any]:
    uri = part.get("uri")
    if not isinstance(uri, str) or not uri:
        raise _fail(where, ".uri: a file part needs 'uri' (gs://, s3://, a file id or URI)")
    out = {"type": "file", "uri": uri}
    media_type = _media_type_field(where, part) or _guess_from_name(uri)
    return {**out, "media_type": media_type} if media_type else out


def _media_type_field(where: str, part: dict[str, Any]) -> str | None:
    media_type = part.get("media_type")
    if media_type is not None and (not isinstance(media_type, str) or "/" not in media_type):
        raise _fail(where, f".media_type: {media_type!r} is not a media type such as 'image/png'")
    return media_type


def _check_media_part(where: str, kind: str, part: dict[str, Any]) -> dict[str, Any]:
    data, url = part.get("data"), part.get("url")
    if isinstance(url, str) and url.startswith("data:") and data is None:
        data, media_type = _split_data_url(where, url)
        part = {**part, "media_type": part.get("media_type") or media_type}
        url = None
    if (data is None) == (url is None):
        article = "a" if kind == "document" else "an"
        # Anthropic's blocks carry a 'source': {'type': 'base64', 'media_type', 'data'}
        anthropic = (
            f"; that is Anthropic's shape: use zerda.llm.{kind}(...)" if "source" in part else ""
        )
        raise _fail(
            where,
            f"{article} {kind} part needs either 'data' (base64 or bytes) or 'url'{anthropic}",
        )
    out: dict[str, Any] = {"type": kind}
    media_type = _media_type_field(where, part)
    if url is not None:
        if not isinstance(url, str) or not url.startswith(_URL_SCHEMES):
            raise _fail(where, f".url: {url!r} is not an http(s) URL")
        out["url"] = url
        media_type = media_type or _guess_from_name(url.split("?", 1)[0])
    else:
        out["data"] = _check_data(where, data)
        media_type = media_type or _sniff_base64(out["data"])
        if not media_type:
            raise _fail(where, ".media_type: missing, and the data's first bytes do not show it")
    if media_type:
        out["media_type"] = media_type
    if kind == "document" and part.get("name") is not None:
        if not isinstance(part["name"], str):
            raise _fail(where, ".name: must be a string")
        out["name"] = part["name"]
    return out


def _check_data(where: str, data: Any) -> str:
    if isinstance(data, (bytes, bytearray, memoryview)):
        if not data:
            raise _fail(where, ".data: is empty")
        return encode(data)
    if not isinstance(data, str):
        raise _fail(where, f".data: must be base64 text or bytes, not {type(data).__name__}")
    if not data:
        raise _fail(where, ".data: is empty")
    if isinstance(getattr(data, "raw", None), bytes):
        return data  # Zerda's own encoding (encode()): base64 by construction, no rescan
    # A regular expression, not a trial decode: checking an 8 MiB image costs no copy of it.
    if len(data) % 4 or not _BASE64.fullmatch(data):
        raise _fail(where, ".data: is not base64 (standard alphabet, padded, no line breaks)")
    return data


def _split_data_url(where: str, url: str) -> tuple[str, str | None]:
    head, sep, data = url.partition(",")
    if not sep or not head.endswith(";base64"):
        raise _fail(where, ".url: a data: URL must be base64 (data:<type>;base64,<data>)")
    return data, head[5:-7] or None


# --- what a provider accepts -------------------------------------------------------------------


def uri_scheme(uri: str) -> str:
    """The kind of a file part's URI, as registry rows name them: ``gs``, ``s3``, ``file-id``
    (OpenAI file ids), ``files-api`` (Gemini Files API URIs), else the URI's scheme."""
    if uri.startswith("gs://"):
        return "gs"
    if uri.startswith("s3://"):
        return "s3"
    if uri.startswith("file-"):
        return "file-id"
    if uri.startswith(("https://generativelanguage.googleapis.com/", "files/")):
        return "files-api"
    return uri.partition(":")[0]


def media_problem(media: Media, part: dict[str, Any]) -> str | None:
    """Why a place with ``media`` cannot take ``part`` (the field and its value), or None."""
    kind = part["type"]
    if kind in _PLAIN:
        return None
    if kind not in media.parts:
        return f".type: {kind} parts"
    if "url" in part and kind not in media.urls:
        return f".url: {kind} URLs (it fetches none: send the bytes as 'data')"
    if kind == "file" and uri_scheme(part["uri"]) not in media.uris:
        return f".uri: {uri_scheme(part['uri'])!r} file URIs"
    accepted = media.media_types.get(_media_kind(part))
    media_type = part.get("media_type")
    if media_type and accepted is not None and "*" not in accepted and media_type not in accepted:
        return f".media_type: {media_type}"
    return None


def _media_kind(part: dict[str, Any]) -> str:
    """The media_types key a part is checked under: a file part by what it holds."""
    if part["type"] != "file":
        return str(part["type"])
    major = (part.get("media_type") or "").partition("/")[0]
    return {"image": "image", "audio": "audio"}.get(major, "document")


def describe(media: Media) -> str:
    """What a place accepts, in words for an error message."""
    if not media.parts:
        return "text only"
    kinds = []
    for kind in sorted(media.parts):
        details = list(media.media_types.get(kind, ()))
        if kind in media.urls:
            details.append("or a URL")
        if kind == "file":
            details = [f"URIs: {', '.join(sorted(media.uris))}"]
        kinds.append(f"{kind} ({', '.join(details)})" if details else kind)
    return "text, " + "; ".join(kinds)


def check_media(
    messages: list[dict[str, Any]], provider: str, user: Media, tool_results: Media
) -> None:
    """Refuses, before anything is sent, a part the provider cannot take: in user messages
    as ``user`` (the row's ``traits.user``) says; in tool messages as ``tool_results`` says,
    or else as a user message takes it (where :func:`move_tool_media` sends it)."""
    for i, message in enumerate(messages):
        content = message.get("content")
        if message["role"] == "user" and isinstance(content, list):
            for j, part in enumerate(content):
                _refuse_if(media_problem(user, part), i, j, provider, "user messages", user)
        elif message["role"] == "tool" and isinstance(content, list) and is_parts(content):
            for j, part in enumerate(content):
                if media_problem(tool_results, part) is None:
                    continue
                where = "tool results (nor in a user message after them)"
                _refuse_if(media_problem(user, part), i, j, provider, where, user)


def _refuse_if(
    problem: str | None, i: int, j: int, provider: str, place: str, media: Media
) -> None:
    if problem is None:
        return
    field, _, value = problem.partition(": ")
    raise InvalidRequestError(
        f"messages[{i}].content[{j}]{field}: {provider} does not take {value} in {place}; "
        f"it accepts {describe(media)}",
        provider=provider,
        capability=True,  # another row may take it: a fallback moves on (errors.py)
    )


# --- media from tools, where tool messages cannot carry them ---------------------------------


def _media_note(moved: list[dict[str, Any]]) -> str:
    kinds = ", ".join(dict.fromkeys(p["type"] for p in moved))
    return f"[{kinds}: sent in the next user message]"


def _split_result(message: dict[str, Any], media: Media) -> tuple[dict[str, Any], list[Any]]:
    """A tool message with the parts its place cannot carry taken out (replaced by a note),
    and those parts."""
    content = message["content"]
    if not is_parts(content):
        return message, []
    kept = [p for p in content if media_problem(media, p) is None]
    moved = [p for p in content if media_problem(media, p) is not None]
    if not moved:
        return message, []
    note = {"type": "text", "text": _media_note(moved)}
    if any(p["type"] in MEDIA_PARTS for p in kept):
        return {**message, "content": [*kept, note]}, moved
    text = "\n".join([*(p["text"] for p in kept if p["type"] == "text"), note["text"]])
    return {**message, "content": text}, moved


def _carrier(moved: list[tuple[dict[str, Any], list[Any]]]) -> dict[str, Any]:
    """The user message holding the media of one turn's tool results, each call's media
    after a line saying which call returned it."""
    content: list[dict[str, Any]] = []
    for result, parts in moved:
        call = f"{result['name']!r}" + (
            f" (id {result['tool_call_id']})" if result["tool_call_id"] else ""
        )
        content.append({"type": "text", "text": f"The tool call {call} returned:"})
        content.extend(parts)
    return {"role": "user", "content": content}


def move_tool_media(messages: list[dict[str, Any]], media: Media) -> list[dict[str, Any]]:
    """Copies of ``messages`` where the parts of tool results that tool messages cannot carry
    (``media``: the row's ``tool_results``) travel in ONE user message right after that
    turn's tool messages, each call's media introduced by a line naming the call; the tool
    message keeps its text and says where its media went. Used by every provider whose tool
    messages take no media (OpenAI Chat, Groq, Mistral, Ollama), and for single parts a
    provider's tool results cannot take."""
    out: list[dict[str, Any]] = []
    pending: list[tuple[dict[str, Any], list[Any]]] = []
    for message in messages:
        if message["role"] != "tool" and pending:
            out.append(_carrier(pending))
            pending = []
        if message["role"] == "tool":
            result, moved = _split_result(message, media)
            out.append(result)
            if moved:
                pending.append((result, moved))
        else:
            out.append(message)
    if pending:
        out.append(_carrier(pending))
    return out


def drop_cache_points(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies of ``messages`` without cache points, for providers that cache automatically
    (a message left with only text parts keeps them as a list)."""
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list) and any(
            isinstance(p, dict) and p.get("type") == "cache_point" for p in content
        ):
            kept = [p for p in content if p.get("type") != "cache_point"]
            message = {**message, "content": kept or ""}
        out.append(message)
    return out


def text_of(content: Any) -> str:
    """The text parts of a content list joined with newlines (a string stays itself)."""
    if isinstance(content, str):
        return content
    return "\n".join(p["text"] for p in content if p.get("type") == "text")


def b64decode(data: str) -> bytes:
    """The bytes of checked base64 data (for SDKs that take bytes: boto3, google-genai):
    the caller's own bytes when Zerda encoded them, else decoded."""
    raw = getattr(data, "raw", None)
    return raw if isinstance(raw, bytes) else base64.b64decode(data)
