"""Encoder for the AWS binary event-stream framing (``application/vnd.amazon.eventstream``)
that Bedrock's ConverseStream answers with and botocore decodes.

One message is::

    total length (uint32) | headers length (uint32) | prelude CRC32 (uint32)
    headers               | payload                 | message CRC32 (uint32)

All integers are big-endian; each CRC32 covers every byte before it. Headers here are all
strings (value type 7): name length (uint8), name, 7, value length (uint16), value.
"""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any

_STRING_TYPE = 7
_PRELUDE_LENGTH = 12  # total length, headers length, prelude CRC
_CRC_LENGTH = 4


def encode_message(headers: dict[str, str], payload: bytes) -> bytes:
    """One event-stream message with string ``headers`` (in the order given)."""
    header_bytes = b"".join(_encode_header(name, value) for name, value in headers.items())
    total = _PRELUDE_LENGTH + len(header_bytes) + len(payload) + _CRC_LENGTH
    prelude = struct.pack(">II", total, len(header_bytes))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + header_bytes + payload
    return message + struct.pack(">I", zlib.crc32(message))


def encode_event(event_type: str, payload: dict[str, Any]) -> bytes:
    """An ``event`` message as Bedrock sends it: JSON payload, headers in AWS's order."""
    headers = {
        ":event-type": event_type,
        ":content-type": "application/json",
        ":message-type": "event",
    }
    return encode_message(headers, _json(payload))


def encode_exception(exception_type: str, message: str) -> bytes:
    """An ``exception`` message (e.g. ``throttlingException``) that botocore raises as an
    ``EventStreamError`` while the stream is being read."""
    headers = {
        ":exception-type": exception_type,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return encode_message(headers, _json({"message": message}))


def _encode_header(name: str, value: str) -> bytes:
    name_bytes = name.encode("utf-8")
    value_bytes = value.encode("utf-8")
    return (
        struct.pack(">B", len(name_bytes))
        + name_bytes
        + struct.pack(">BH", _STRING_TYPE, len(value_bytes))
        + value_bytes
    )


def _json(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
