"""A digest of a value that tells apart whatever Python tells apart by type and content.

Memos of work done on the caller's values (a tool's checks, botocore's validation of the
request fields Zerda did not build) are keyed by it. It is the ``marshal`` text (format 2,
which writes no back-references, so equal values always write alike) of a value made of
builtin values of exact types, written with their types: a tuple and a list, ``1``,
``1.0``, ``True`` and ``"1"``, ``0.0`` and ``-0.0`` differ, as values and as keys, and
dicts are written in their order. A value holding anything else (a subclass, a Decimal, an
object, nesting too deep for marshal) has no digest: the work is done again on every call.
marshal writes every buffer (bytes, bytearray, memoryview) as bytes: a memo whose values
may hold buffers must tell them apart itself (JSON holds none). Marshalling costs a fifth
of the JSON text and ``repr`` it replaced.
"""

from __future__ import annotations

import hashlib
import marshal
from typing import Any


def fingerprint(value: Any) -> bytes | None:
    """``value``'s digest (see the module docstring), or None."""
    try:
        text = marshal.dumps(value, 2)
    except ValueError:  # not a builtin value of an exact type, or nested too deep
        return None
    return hashlib.blake2b(text, digest_size=16).digest()


def copy_json(value: Any) -> Any:
    """A deep copy of ``value``, a checked JSON value (dicts, lists, strings, numbers,
    booleans, None of exact types), through the same marshal text (several times cheaper
    than ``copy.deepcopy``)."""
    return marshal.loads(marshal.dumps(value, 2))
