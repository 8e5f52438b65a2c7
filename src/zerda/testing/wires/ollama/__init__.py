"""Ollama's wire on MockLLMServer: ``/api/chat`` and its OpenAI-compatible ``/v1`` endpoint."""

from __future__ import annotations

import re
from typing import Any

from zerda.testing._script import ErrorReply, Raw, RecordedRequest
from zerda.testing._wire import MockWire
from zerda.testing.wires.ollama.contract import CONTRACT


def _unknown_path(provider: str, req: RecordedRequest) -> ErrorReply | Raw:
    # Ollama's router (gin) answers an unknown route with its plain-text default.
    return Raw(404, b"404 page not found", {"content-type": "text/plain"})


def _client_options(base: str) -> dict[str, Any]:
    return {"base_url": base}


def _sdk_client_kwargs(base: str) -> dict[str, Any]:
    return {"host": base}


WIRE = MockWire(
    routes=(re.compile(r"/api/chat"), re.compile(r"/v1/chat/completions")),
    renderer=f"{__name__}.render",
    validator=f"{__name__}.validate",
    view=f"{__name__}.view",  # how a model reads a request (answer_like_a_model)
    contract=CONTRACT,
    client_options=_client_options,
    sdk_client_kwargs=_sdk_client_kwargs,
    unknown_path=_unknown_path,
)
