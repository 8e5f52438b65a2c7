"""OpenAI's wire on MockLLMServer: Chat Completions and Responses under ``/v1``, the files and
batches APIs, OpenAI's error bodies and ``x-request-id``."""

from __future__ import annotations

import re
from typing import Any

from zerda.testing._script import ErrorReply, Raw, RecordedRequest
from zerda.testing._wire import MockWire
from zerda.testing.wires.openai.contract import CONTRACT

# The files and batches APIs' paths (Groq serves them under its own prefix).
BATCH_PATHS = r"/v1/(files(/[^/]+(/content)?)?|batches(/[^/]+(/cancel)?)?)"
DOCS = "https://platform.openai.com/docs/api-reference/."


def unknown_url(where: str, docs: str, fields: dict[str, Any]) -> ErrorReply:
    """The 404 OpenAI (and Groq) answer a path they do not serve, naming their docs.
    Quoted in https://github.com/InternLM/MindSearch/issues/150 (OpenAI) and
    https://github.com/TAGonSoft/groq-dart/issues/15 (Groq, no param)."""
    message = (
        f"Unknown request URL: {where}. Please check the URL for typos, or see the docs at {docs}"
    )
    return ErrorReply(
        404, message, "invalid_request_error", fields={**fields, "code": "unknown_url"}
    )


def _unknown_path(provider: str, req: RecordedRequest) -> ErrorReply | Raw:
    where = f"{req.method} {req.path}"
    if req.path.startswith("/v1/"):
        # Quoted in https://github.com/langmanus/langmanus/issues/79 (2025).
        null: dict[str, Any] = {"param": None, "code": None}
        return ErrorReply(404, f"Invalid URL ({where})", "invalid_request_error", fields=null)
    return unknown_url(where, DOCS, {"param": None})


WIRE = MockWire(
    routes=(re.compile(r"/v1/chat/completions"), re.compile(r"/v1/responses")),
    renderer=f"{__name__}.render",
    validator=f"{__name__}.validate",
    view=f"{__name__}.view",  # how a model reads a request (answer_like_a_model)
    contract=CONTRACT,
    # The SDK appends /chat/completions (or /responses) to a base URL that ends in /v1.
    base_path="/v1",
    batch_paths=re.compile(BATCH_PATHS),
    batches=f"{__name__}.batches",
    unknown_path=_unknown_path,
    # https://platform.openai.com/docs/api-reference/debugging-requests
    request_id_headers=("x-request-id",),
)
