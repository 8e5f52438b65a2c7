"""A call's ``timeout=``: checked, and taken out of the SDK call's arguments.

Its own module, apart from :mod:`zerda.llm._request`: building an interface checks its
``timeout`` option, and the wires that send a timeout beside the SDK call (Ollama's body,
Bedrock's Converse) take it out on every call, neither of which needs the request checks
(docs/decisions.md, "Building an interface loads only what building needs").
"""

from __future__ import annotations

import math
from typing import Any

from zerda.llm.errors import InvalidRequestError


def timeout_problem(value: Any) -> str | None:
    """Why ``value`` is not a timeout in seconds (a positive number); None when it is."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"must be a number of seconds, not {type(value).__name__}"
    if math.isnan(value) or value <= 0:
        return f"must be a positive number of seconds, not {value!r}"
    return None


def check_timeout(value: Any) -> float | None:
    """A per-call ``timeout=``: seconds, or None for the interface's own."""
    problem = timeout_problem(value)
    if problem:
        raise InvalidRequestError(f"timeout {problem}")
    return None if value is None else float(value)


def split_timeout(kwargs: dict[str, Any]) -> tuple[dict[str, Any], float | None]:
    """(the call's arguments, its timeout) for SDK calls that take no ``timeout=`` of their
    own (Ollama's body, Bedrock's Converse): ``_build_request`` put it under ``timeout``."""
    if "timeout" not in kwargs:
        return kwargs, None
    rest = dict(kwargs)
    return rest, rest.pop("timeout")
