"""An SDK's import and client build run at the start of a fresh frame-stack chunk.

CPython 3.11 and later keep a thread's Python frames in a stack of chunks (16 KiB each,
``Python/pystate.c``): a call that does not fit in the current chunk maps a new one
(``mmap``), and the return of the first frame in it unmaps it (``munmap``) at once. Code
that recurses back and forth across a chunk's end (an import system loading a package
tree, a model library building its classes) maps and unmaps a chunk, and faults its pages
in, at every crossing. Where the crossings fall depends only on how deep the stack
already is: ``import groq; groq.Groq()`` crosses once called from a function at a module's
top level, 84 times from the top level itself, 437 times 20 calls deeper and 1,204 times 30
calls deeper (5% more CPU than once: about 15 µs a crossing). An SDK imported and its client
built by Zerda run below the caller's frames and Zerda's own: Groq's crossed 232 times.

:func:`in_fresh_chunk` calls a function from a frame too large for what is left of the
current chunk (its code object reserves ``_SLOTS`` value-stack slots, about 33 KiB), so
CPython maps a chunk for it alone (64 KiB: it doubles 16 KiB until the frame fits), and the
function runs with about 31 KiB of room before that chunk's end, more than any SDK's import
and client build used (no crossing left on any row's SDK). The chunk lives for that call
only; the frame's reserved slots are never written, so their pages are never touched.
Nothing depends on it for correctness: a larger value stack than the code needs is only
unused space, and on an interpreter without frame chunks (CPython 3.10, others) the
function is a plain call (docs/decisions.md, "An SDK is imported and its client built in a
fresh stack chunk"). It runs once per SDK import and client build, never per call: a call
through it maps and unmaps its chunk.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

# Value-stack slots reserved by in_fresh_chunk's frame: 8 bytes each, about two 16 KiB
# chunks, so the frame never fits in the current chunk, and its own (64 KiB: CPython doubles
# the size until the frame fits) keeps about 31 KiB for the calls it makes. With 2,100 slots
# (16 KiB of room) Groq's import still crossed its chunk's end 444 times.
_SLOTS = 4200


def in_fresh_chunk(function: Callable[..., T], *args: Any) -> T:
    """``function(*args)``, called from a frame at the start of a fresh stack chunk."""
    return function(*args)


def _reserve(slots: int) -> None:
    code = in_fresh_chunk.__code__
    in_fresh_chunk.__code__ = code.replace(co_stacksize=code.co_stacksize + slots)


if sys.implementation.name == "cpython" and sys.version_info >= (3, 11):
    _reserve(_SLOTS)
