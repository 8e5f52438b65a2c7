"""Tool output every provider takes (issue 34 item 7): :func:`sendable_parts`.

A tool's output is sent back to the model in the next request, where a provider refuses the
whole history for one part it cannot take: an SVG image, a binary attachment, an image whose
data is not base64 (or not the image its media type says). Zerda checks media before sending
(:func:`zerda.llm.parts.check_media`), so such a part would end the tool loop. This module
turns each such part into a text part the model can read, so the loop goes on:

- text-like data (``image/svg+xml``, ``text/*``, JSON, XML...) becomes its text: the model
  reads an SVG's XML;
- a PNG, JPEG, GIF or WebP image, or a PDF document, is kept when its bytes are that format
  (a wrong media type is corrected from the bytes): these are the media every media-capable
  provider takes from tools (OpenAI, Anthropic, Bedrock, Gemini: the ``tool_results`` and
  ``user`` media of their registry rows);
- anything else (a binary blob, audio, another image format, data that is not base64, a URL
  or a provider file the provider may not fetch) becomes a note naming its media type and
  size.

Provider-neutral (the core, docs/architecture.md): it reads no registry row. Pure: the
caller's content is never changed.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from zerda.llm.parts import _BASE64, encode, is_parts, sniff

__all__ = ["sendable_parts"]

# The media types every media-capable provider takes in a tool's output, directly or in the
# user message that carries tool media (OpenAI Chat, Groq, Mistral, Ollama): the images of
# https://platform.openai.com/docs/guides/images-vision, https://docs.anthropic.com/en/docs/
# build-with-claude/vision, the Bedrock Converse ImageBlock formats; PDF documents
# (https://docs.anthropic.com/en/docs/build-with-claude/pdf-support, Converse DocumentBlock).
KEPT = {
    "image": ("image/png", "image/jpeg", "image/gif", "image/webp"),
    "document": ("application/pdf",),
}
_TEXT_TYPES = frozenset(
    {
        "image/svg+xml",
        "application/json",
        "application/xml",
        "application/javascript",
        "application/x-yaml",
        "application/yaml",
        "application/x-sh",
        "application/sql",
        "application/toml",
    }
)
_HEAD = 32  # base64 characters: 24 bytes, enough for every signature parts.sniff knows


def sendable_parts(content: Any) -> Any:
    """``content`` (tool message content) with every part a provider may refuse replaced by a
    text part (see the module docstring); text, a dict or a list that is JSON data come back
    as they are."""
    if not is_parts(content):
        return content
    return [_sendable(part) for part in content]


def _sendable(part: dict[str, Any]) -> dict[str, Any]:
    kind = part["type"]
    if kind == "cache_point":
        return part
    if kind == "text":
        text = part.get("text")
        return part if isinstance(text, str) else {"type": "text", "text": str(text)}
    if "data" not in part:
        return _note(_where_fetched(part), "only inline data is sent to the model")
    return _inline(kind, part)


def _inline(kind: str, part: dict[str, Any]) -> dict[str, Any]:
    """A media part with ``data``: kept, as text, or a note."""
    media_type = part.get("media_type") if isinstance(part.get("media_type"), str) else None
    data = _canonical(part["data"])
    if not data:
        problem = "is empty" if data == "" else "is not base64"
        return _note(f"{kind} ({media_type or 'no media type'})", f"its data {problem}")
    found = sniff(_head(data))
    if found is None and (media_type is None or _is_text_type(media_type)):
        text = _as_text(data)
        if text is not None:
            return {"type": "text", "text": text}
    kept = _kept_kind(found)
    if kept is not None and found is not None:
        return _kept(kept, part, data, found)
    what = f"{kind} ({media_type or found or 'no media type'}, {_size(data):,} bytes)"
    return _note(what, _why(kind, media_type, found))


def _kept_kind(found: str | None) -> str | None:
    """The part type data of the media type its bytes show travels as, when every provider
    takes it (a PNG given as a document, a PDF as an octet-stream resource: by their bytes)."""
    return next((kind for kind, types in KEPT.items() if found in types), None)


def _kept(kind: str, part: dict[str, Any], data: str, media_type: str) -> dict[str, Any]:
    out = {"type": kind, "data": data, "media_type": media_type}  # the type its bytes show
    if kind == "document" and part["type"] == "document" and isinstance(part.get("name"), str):
        out["name"] = part["name"]
    return out


def _why(kind: str, media_type: str | None, found: str | None) -> str:
    if kind in KEPT and media_type in KEPT[kind]:
        return f"its bytes are not a {media_type.partition('/')[2].upper()} file"
    accepted = "PNG, JPEG, GIF and WebP images and PDF documents"
    shown = f"; its bytes are {found}" if found and found != media_type else ""
    return f"models take {accepted} from tools{shown}"


def _canonical(data: Any) -> str | None:
    """``data`` as standard padded base64 text (bytes encoded, line breaks and URL-safe
    characters repaired), or None when it is not base64 at all."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        return encode(data)
    if not isinstance(data, str):
        return None
    if isinstance(getattr(data, "raw", None), bytes) or (
        len(data) % 4 == 0 and _BASE64.fullmatch(data)
    ):
        return data  # already what every provider takes: no copy of a large image
    text = "".join(data.split()).translate(str.maketrans("-_", "+/"))  # MIME lines, URL-safe
    try:
        return encode(base64.b64decode(text + "=" * (-len(text) % 4), validate=True))
    except (binascii.Error, ValueError):
        return None


def _head(data: str) -> bytes:
    return base64.b64decode(data[:_HEAD])


def _size(data: str) -> int:
    return len(data) // 4 * 3 - (len(data) - len(data.rstrip("=")))


def _is_text_type(media_type: str) -> bool:
    base = media_type.partition(";")[0].strip().lower()
    return base.startswith("text/") or base in _TEXT_TYPES or base.endswith(("+xml", "+json"))


def _as_text(data: str) -> str | None:
    """The data as UTF-8 text, or None when it is not text (binary bytes, NUL characters)."""
    try:
        text = base64.b64decode(data).decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if "\x00" in text else text


def _where_fetched(part: dict[str, Any]) -> str:
    """A URL or provider-file part, named by where it is."""
    where = part.get("url") or part.get("uri")
    media_type = part.get("media_type")
    return f"{part['type']} at {where}" + (f" ({media_type})" if media_type else "")


def _note(what: str, why: str) -> dict[str, Any]:
    return {"type": "text", "text": f"[{what} not sent: {why}]"}
