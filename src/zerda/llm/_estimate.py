"""Input tokens a request may use, estimated before it is sent, from Zerda's unified history
(DESIGN.md §4 and §4a): the rate limiter reserves them (docs/scale.md, "Rate limits") and
``count_tokens`` falls back on them where a provider has no counting endpoint.

Text counts about four characters a token (every provider's rule of thumb). Media count as
the providers document, never as the characters of their base64: an image by its pixel size,
read from the first bytes of its PNG, JPEG, GIF, WebP or BMP header (only the few base64
characters that hold them are decoded, so the estimate stays linear and cheap however large
the image); a PDF by its pages; audio by its seconds. No provider is named here: where their
counts differ the largest is taken, since an estimate that errs low lets a limiter send more
than the provider allows (the provider's reported usage corrects it after the call).
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

__all__ = ["estimate_input_tokens"]

CHARS_PER_TOKEN = 4
# Role and framing tokens around each message (OpenAI's cookbook counts 3 or 4 a message).
MESSAGE_OVERHEAD = 4

# What a medium counts when its size cannot be known before sending (a URL, a provider file
# or an unreadable header): a conservative fixed number of tokens.
# An image: Anthropic's ceiling for one image (~1,600 tokens, see _image_tokens), above
# OpenAI's 765-1,105 for a high-detail photo.
UNKNOWN_IMAGE = 1_600
# A document: two PDF pages at Anthropic's low estimate of 1,500 a page (see _pdf_tokens).
UNKNOWN_DOCUMENT = 3_000
# Audio: one minute at Gemini's 32 tokens a second (see AUDIO_TOKENS_PER_SECOND).
UNKNOWN_AUDIO = 1_920
# Video (a file part only): one minute at Gemini's 263 tokens a second
# (https://ai.google.dev/gemini-api/docs/tokens#multimodal-tokens).
UNKNOWN_VIDEO = 15_780

# Gemini: "audio is 32 tokens per second" (https://ai.google.dev/gemini-api/docs/tokens and
# https://ai.google.dev/gemini-api/docs/audio); OpenAI counts user audio at one token per
# 100 ms (https://platform.openai.com/docs/guides/realtime-costs), fewer; Anthropic takes no
# audio. The larger rate is kept.
AUDIO_TOKENS_PER_SECOND = 32
# Compressed audio (mp3, ogg, flac, m4a...) whose length no header states cheaply: its size
# at 64 kbit/s, a low speech bitrate, so the seconds err high rather than low.
AUDIO_BYTES_PER_SECOND = 8_000

# PDFs: Anthropic counts each page's text and an image of it, "typically 1,500-3,000 tokens
# per page" (https://docs.anthropic.com/en/docs/build-with-claude/pdf-support); Gemini 258 a
# page (https://ai.google.dev/gemini-api/docs/document-processing); OpenAI, like Anthropic,
# a page's text and its image (https://platform.openai.com/docs/guides/pdf-files). Counting
# pages means parsing the file (page trees often sit in compressed object streams), so the
# pages are estimated from the size: about 50 kB a page, between a text page and a scan.
PDF_TOKENS_PER_PAGE = 1_500
PDF_BYTES_PER_PAGE = 50_000

_MEDIA_KINDS = frozenset({"image", "document", "audio", "file"})
_PART_KINDS = _MEDIA_KINDS | {"text", "cache_point"}
# JPEG markers that are no frame header though they are in 0xC0-0xCF: DHT, JPG, DAC.
_JPEG_NOT_SOF = frozenset({0xC4, 0xC8, 0xCC})
_JPEG_MAX_SEGMENTS = 64  # APPn/COM segments before the frame header; more: unknown size


def estimate_input_tokens(
    messages: Sequence[Mapping[str, Any]],
    *,
    tools: Sequence[Mapping[str, Any]] | None = None,
    system: str | None = None,
) -> int:
    """The input tokens of ``messages`` (the unified history), ``tools`` (unified tool
    definitions) and ``system``, estimated without sending anything. Never raises on what
    a history holds (a message containing itself, data nested thousands deep, a corrupt
    image): what cannot be read counts as text or as a fixed amount."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        messages = [messages]  # type: ignore[list-item]  # a bare prompt, as generate takes
    chars = (_json_chars(system) if system else 0) + (_json_chars(tools) if tools else 0)
    media = 0
    for message in messages:
        text, tokens = _message_size(message)
        chars += text
        media += tokens + MESSAGE_OVERHEAD
    return -(-chars // CHARS_PER_TOKEN) + media


def _message_size(message: Any) -> tuple[int, int]:
    """(characters of text, tokens of media) of one message."""
    if not isinstance(message, Mapping):
        return _json_chars(message), 0
    chars, media = 0, 0
    for key, value in message.items():
        chars += len(str(key))
        if key == "content" and _is_parts(value):
            text, tokens = _parts_size(value)
            chars, media = chars + text, media + tokens
        else:
            chars += _json_chars(value)
    return chars, media


def _is_parts(content: Any) -> bool:
    """A list of content parts (DESIGN.md §4a): any other list or dict is JSON data, sent
    as text."""
    return (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(p, Mapping) and _kind(p) in _PART_KINDS for p in content)
    )


def _kind(part: Mapping[str, Any]) -> str:
    kind = part.get("type")
    return kind if isinstance(kind, str) else ""


def _parts_size(parts: list[Mapping[str, Any]]) -> tuple[int, int]:
    chars, media = 0, 0
    for part in parts:
        kind = _kind(part)
        if kind == "text":
            chars += _json_chars(part.get("text"))
        elif kind in _MEDIA_KINDS:
            media += _media_tokens(part)
    return chars, media


# --- media ---------------------------------------------------------------------------------


def _media_tokens(part: Mapping[str, Any]) -> int:
    """The tokens of one image, document, audio or file part."""
    kind = _kind(part)
    media_type = part.get("media_type")
    media_type = media_type.lower() if isinstance(media_type, str) else ""
    payload = _Payload.of(part)
    if kind == "image":
        return _image_part_tokens(payload)
    if kind == "document":
        return _document_tokens(payload, media_type)
    if kind == "audio":
        return _audio_tokens(payload)
    return _file_tokens(media_type)


def _image_part_tokens(payload: _Payload | None) -> int:
    size = _image_size(payload) if payload is not None else None
    return _image_tokens(*size) if size is not None else UNKNOWN_IMAGE


def _document_tokens(payload: _Payload | None, media_type: str) -> int:
    if payload is None:
        return UNKNOWN_DOCUMENT
    if media_type == "application/pdf" or payload.read(0, 5) == b"%PDF-":
        return _pdf_tokens(payload.size)
    # A text document (plain text, CSV, HTML, Markdown): the providers read its text.
    return -(-payload.size // CHARS_PER_TOKEN)


def _audio_tokens(payload: _Payload | None) -> int:
    if payload is None:
        return UNKNOWN_AUDIO
    seconds = _wav_seconds(payload)
    if seconds is None:
        seconds = payload.size / AUDIO_BYTES_PER_SECOND
    return max(1, math.ceil(seconds * AUDIO_TOKENS_PER_SECOND))


def _file_tokens(media_type: str) -> int:
    """A provider-hosted file (``gs://``, ``s3://``, a file id): its size is unknown here."""
    if media_type.startswith("image/"):
        return UNKNOWN_IMAGE
    if media_type.startswith("audio/"):
        return UNKNOWN_AUDIO
    if media_type.startswith("video/"):
        return UNKNOWN_VIDEO
    return UNKNOWN_DOCUMENT


def _pdf_tokens(size: int) -> int:
    return max(1, math.ceil(size / PDF_BYTES_PER_PAGE)) * PDF_TOKENS_PER_PAGE


def _image_tokens(width: int, height: int) -> int:
    """The most any provider documents for one ``width`` x ``height`` image."""
    return max(
        _anthropic_image(width, height),
        _openai_image(width, height),
        _gemini_image(width, height),
    )


def _anthropic_image(width: int, height: int) -> int:
    # "tokens = (width px * height px)/750"; an image whose long edge is over 1568 px, or
    # that is over ~1,600 tokens, is first scaled down to fit both.
    # https://docs.anthropic.com/en/docs/build-with-claude/vision#evaluate-image-size
    scale = min(1.0, 1568 / max(width, height))
    return min(1_600, math.ceil(width * scale * height * scale / 750))


def _openai_image(width: int, height: int) -> int:
    # High detail: scaled to fit a 2048 px square, then so that its short side is at most
    # 768 px; 170 tokens per 512 px tile, plus 85.
    # https://platform.openai.com/docs/guides/images-vision#calculating-costs
    fit = min(1.0, 2048 / max(width, height))
    scale = fit * min(1.0, 768 / (min(width, height) * fit))
    tiles = math.ceil(width * scale / 512) * math.ceil(height * scale / 512)
    return 85 + 170 * tiles


def _gemini_image(width: int, height: int) -> int:
    # "image inputs with both dimensions <=384 pixels are counted as 258 tokens. Images
    # larger in one or both dimensions are cropped and scaled as needed into tiles of
    # 768x768 pixels, each counted as 258 tokens."
    # https://ai.google.dev/gemini-api/docs/tokens#multimodal-tokens
    if width <= 384 and height <= 384:
        return 258
    return math.ceil(width / 768) * math.ceil(height / 768) * 258


# --- reading a few bytes of a payload -------------------------------------------------------


class _Payload:
    """A part's inline data, bytes or base64 text, read a few bytes at a time: base64 maps
    every 3 bytes to 4 characters, so bytes ``[at, at + n)`` are decoded from the ~4n/3
    characters that hold them and nothing else."""

    __slots__ = ("_raw", "_text", "size")

    def __init__(self, raw: bytes | None, text: str | None) -> None:
        self._raw, self._text = raw, text
        if raw is not None:
            self.size = len(raw)
        else:
            assert text is not None
            self.size = len(text) * 3 // 4 - (len(text) - len(text.rstrip("=")))

    @classmethod
    def of(cls, part: Mapping[str, Any]) -> _Payload | None:
        """The inline data of ``part`` (``data``, or a ``data:`` URL); None for a URL or a
        provider file, whose bytes are not here."""
        data = part.get("data")
        if data is None:
            url = part.get("url")
            data = url if isinstance(url, str) and url.startswith("data:") else None
        if isinstance(data, (bytes, bytearray, memoryview)):
            return cls(bytes(data), None)
        if not isinstance(data, str):
            return None
        raw = getattr(data, "raw", None)  # parts.Base64Text keeps the bytes it encodes
        if isinstance(raw, bytes):
            return cls(raw, None)
        if data.startswith("data:"):
            data = data.partition(",")[2]
        return cls(None, data)

    def read(self, at: int, n: int) -> bytes:
        """Bytes ``[at, at + n)`` (fewer at the end; empty where the base64 is broken)."""
        if at < 0 or n <= 0:
            return b""
        if self._raw is not None:
            return self._raw[at : at + n]
        assert self._text is not None
        first, last = at // 3, -(-(at + n) // 3)
        chunk = self._text[first * 4 : last * 4].rstrip("=")
        chunk += "=" * (-len(chunk) % 4)
        try:
            decoded = base64.b64decode(chunk)
        except (binascii.Error, ValueError):
            return b""
        skip = at - first * 3
        return decoded[skip : skip + n]


def _image_size(payload: _Payload) -> tuple[int, int] | None:
    """(width, height) from the image's header, or None for a format or header not read."""
    head = payload.read(0, 30)
    size: tuple[int, int] | None = None
    if head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR":
        size = _be(head, 16, 4), _be(head, 20, 4)
    elif head[:6] in (b"GIF87a", b"GIF89a"):
        size = _le(head, 6, 2), _le(head, 8, 2)
    elif head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        size = _webp_size(head)
    elif head[:2] == b"BM" and len(head) >= 26:
        size = _le(head, 18, 4), abs(int.from_bytes(head[22:26], "little", signed=True))
    elif head[:3] == b"\xff\xd8\xff":
        size = _jpeg_size(payload)
    if size is None or size[0] <= 0 or size[1] <= 0:
        return None
    return size


def _webp_size(head: bytes) -> tuple[int, int] | None:
    # The three WebP bitstreams' headers:
    # https://developers.google.com/speed/webp/docs/riff_container
    chunk = head[12:16]
    if chunk == b"VP8X" and len(head) >= 30:
        return _le(head, 24, 3) + 1, _le(head, 27, 3) + 1
    if chunk == b"VP8L" and len(head) >= 25:
        bits = _le(head, 21, 4)
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 " and len(head) >= 30:
        return _le(head, 26, 2) & 0x3FFF, _le(head, 28, 2) & 0x3FFF
    return None


def _jpeg_size(payload: _Payload) -> tuple[int, int] | None:
    """From the frame header (SOFn), found by hopping from segment to segment: an EXIF
    block with its thumbnail is skipped by its length, never decoded."""
    for at, marker in _jpeg_segments(payload):
        if 0xC0 <= marker <= 0xCF and marker not in _JPEG_NOT_SOF:
            frame = payload.read(at + 5, 4)  # after marker, length and sample precision
            if len(frame) < 4:
                return None
            return _be(frame, 2, 2), _be(frame, 0, 2)
    return None


def _jpeg_segments(payload: _Payload) -> Iterator[tuple[int, int]]:
    """(offset, marker) of the segments before the image data, at most a bounded number."""
    at = 2
    for _ in range(_JPEG_MAX_SEGMENTS):
        head = payload.read(at, 4)
        if len(head) < 4 or head[0] != 0xFF:
            return
        marker = head[1]
        if marker == 0xFF:  # a fill byte before the marker
            at += 1
            continue
        if marker in (0xD9, 0xDA):  # end of image, start of scan: no frame header before
            return
        yield at, marker
        at += 2 if 0xD0 <= marker <= 0xD7 or marker == 0x01 else 2 + _be(head, 2, 2)


def _wav_seconds(payload: _Payload) -> float | None:
    """A WAV file's seconds: its size over the byte rate its ``fmt `` chunk states
    (http://soundfile.sapp.org/doc/WaveFormat/); None for another format."""
    head = payload.read(0, 12)
    if head[:4] != b"RIFF" or head[8:12] != b"WAVE":
        return None
    at = 12
    for _ in range(16):  # the fmt chunk comes first in practice; a few others may precede
        chunk = payload.read(at, 16)
        if len(chunk) < 8:
            return None
        if chunk[:4] == b"fmt " and len(chunk) >= 16:
            rate = _le(payload.read(at + 16, 4), 0, 4)
            return payload.size / rate if rate > 0 else None
        at += 8 + _le(chunk, 4, 4) + (_le(chunk, 4, 4) & 1)
    return None


def _be(data: bytes, at: int, n: int) -> int:
    return int.from_bytes(data[at : at + n], "big")


def _le(data: bytes, at: int, n: int) -> int:
    return int.from_bytes(data[at : at + n], "little")


# --- text ----------------------------------------------------------------------------------


def _json_chars(value: Any) -> int:
    """About the characters ``value`` takes as JSON, walked without recursion and each
    container once (a history may nest thousands deep or contain itself)."""
    chars = 0
    stack = [value]
    seen: set[int] = set()
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            chars += len(item) + 2
        elif isinstance(item, (Mapping, list, tuple)):
            if id(item) in seen:
                continue
            seen.add(id(item))
            if isinstance(item, Mapping):
                chars += 2 + sum(len(str(k)) + 4 for k in item)
                stack.extend(item.values())
            else:
                chars += 2 + len(item)
                stack.extend(item)
        elif isinstance(item, (bytes, bytearray, memoryview)):
            chars += -(-len(item) // 3) * 4  # sent as base64 where JSON carries it
        elif item is None or isinstance(item, bool):
            chars += 5
        elif isinstance(item, int):
            chars += item.bit_length() * 3 // 10 + 2  # its digits, without printing it
        elif isinstance(item, float):
            chars += len(repr(item))
        else:
            chars += 16  # an object the SDK serialises itself: a small guess
    return chars
