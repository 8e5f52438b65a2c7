"""One body for a sync method and its async twin.

A body is a generator that does the work and yields, instead of making them, the calls that
differ between the twins: a step ``(target, name, args, kwargs)`` asks for
``target.<name>(*args, **kwargs)``. :func:`drive` makes it as it is; :func:`drive_async` awaits
``target.<name>_async(...)``, the twin every such call has (``_call`` / ``_call_async``,
``generate`` / ``generate_async``...). The reply is sent back into the body; an exception
the call raised is thrown into it at the same place, so the body's ``try`` sees what an
inline call would have raised. The body's return value is the driver's.

Nothing else differs between the twins, so nothing else is written twice (DESIGN.md §22's
structure round; STYLE.md, "Third round").
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from typing import Any, TypeVar

__all__ = ["NO_KWARGS", "Body", "Step", "drive", "drive_async"]

T = TypeVar("T")
Step = tuple[Any, str, tuple[Any, ...], Mapping[str, Any]]
Body = Generator[Step, Any, T]
# The kwargs of a step that has none; never mutated (``**`` only reads it).
NO_KWARGS: Mapping[str, Any] = {}


def drive(body: Body[T]) -> T:
    """Runs ``body``, making each call it yields."""
    reply: Any = None
    failure: BaseException | None = None
    while True:
        try:
            target, name, args, kwargs = (
                body.send(reply) if failure is None else body.throw(failure)
            )
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        try:
            reply, failure = getattr(target, name)(*args, **kwargs), None
        except BaseException as exc:  # cancelled or interrupted too: the body's try decides
            reply, failure = None, exc


async def drive_async(body: Body[T]) -> T:
    """Runs ``body``, awaiting the async twin of each call it yields."""
    resume = body.send  # body.throw once a call has raised
    reply: Any = None
    while True:
        try:
            target, name, args, kwargs = resume(reply)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        call = getattr(target, name + "_async")
        try:
            reply, resume = await call(*args, **kwargs), body.send
        except BaseException as exc:
            reply, resume = exc, body.throw
