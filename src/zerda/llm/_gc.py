"""Automatic garbage collection paused while Zerda converts a request, and while its
modules load.

Converting a long history builds tens of thousands of containers (checked copies, the
native body) that stay alive until the call ends. CPython's generational collector runs a
young collection every 700 new containers; the request's objects survive each one, are
promoted, and the growing old generation then triggers full collections that walk every
object of the process (the SDK's modules and models included). At 1,000 tool round trips
that was about half of a call's CPU on Anthropic (40-44 ms per call, 21-23 ms with the
collector paused during the conversion; the raw ``messages.create`` given the same body:
23-31 ms) and a third on OpenAI (33 ms, 21 ms paused).

The conversion is pure CPU work on Zerda's own objects: no I/O, no ``await``, no lock.
The collector is paused only when it is enabled, only for that work, and resumed right
after; garbage made meanwhile is collected by the next collection as usual. (A caller who
disables the collector keeps it disabled: Zerda then never touches it.)

Loading Zerda's modules (``import zerda.llm``, then a wire's modules when an interface is
built) is the same kind of work: what it creates lives as long as the process. Young
collections in between would only walk it and promote it, and each one brings the
process's next full collection nearer: after boto3, which stops just short of one, the
six young collections ``import zerda.llm`` ran pulled a full collection (15-25 ms, mostly
boto3's objects) into building Zerda's client instead of the caller's first call.
"""

from __future__ import annotations

import gc


def pause() -> bool:
    """Pauses automatic collection; True when this call paused it (then :func:`resume`)."""
    if not gc.isenabled():
        return False
    gc.disable()
    return True


def resume(paused: bool) -> None:
    if paused:
        gc.enable()


class paused:  # noqa: N801 - used as a function: ``with _gc.paused():``
    """Automatic collection paused for the block (:func:`pause`, then :func:`resume`).
    A class, not ``contextlib.contextmanager``: ``zerda.llm`` enters it before importing
    anything else, contextlib included."""

    def __enter__(self) -> None:
        self._paused = pause()

    def __exit__(self, *error: object) -> None:
        resume(self._paused)
