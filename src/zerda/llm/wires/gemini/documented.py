"""Gemini through google-genai's documented calls: what an interface does with its fast
path off (``fast_path=False``, ``ZERDA_FAST_PATH=0``, or a google-genai lacking a name of
:data:`zerda.llm.wires.gemini.fastpath.PRIVATE_NAMES`). DESIGN §22.

``client.models.generate_content(model=, contents=, config=)`` and
``generate_content_stream`` (``client.aio.models`` for the async methods) take Zerda's
contents as the REST JSON they are (google-genai's models take the camelCase names, base64
fields as bytes) and a ``GenerateContentConfig`` of Zerda's fields and ``**native`` over
them, and write the same request body the fast path writes, slower.
"""

from __future__ import annotations

from typing import Any

from zerda.llm.errors import InvalidRequestError
from zerda.llm.wires.gemini.sdk import _decoded_content, config_problem


def request(model: str | None, contents: list[dict[str, Any]], fields: dict[str, Any]) -> dict:
    """``generate_content``'s keyword arguments: ``fields`` (GenerateContentConfig fields,
    snake_case) validated as the fast path validates ``**native``: a field the SDK refuses
    is an invalid_request naming it."""
    from google.genai import types

    try:
        config = types.GenerateContentConfig.model_validate(fields)
    except ValueError as exc:  # pydantic's ValidationError
        raise InvalidRequestError(config_problem(exc)) from exc
    return {"model": model, "contents": [_decoded_content(c) for c in contents], "config": config}
