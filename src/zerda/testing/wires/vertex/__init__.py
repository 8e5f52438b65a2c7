"""Gemini on Vertex AI on MockLLMServer: a project's and location's publisher model path; it
renders exactly as Gemini's wire (only the routes differ)."""

from __future__ import annotations

import re
from typing import Any

from zerda.testing._wire import MockWire
from zerda.testing.wires import gemini
from zerda.testing.wires.vertex.contract import CONTRACT, credentials


def _options(base: str) -> dict[str, Any]:
    # Credentials holding a fixed token, so the Google SDKs never look for real ADC.
    return {
        "base_url": base,
        "project": "mock-project",
        "location": "us-central1",
        "credentials": credentials("mock-token"),
    }


def _sdk_client_kwargs(base: str) -> dict[str, Any]:
    options = {k: v for k, v in _options(base).items() if k != "base_url"}
    return {"vertexai": True, **options, "http_options": {"base_url": base}}


WIRE = MockWire(
    # https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest
    routes=(
        re.compile(
            r"/v1(beta1)?/projects/[^/]+/locations/[^/]+/publishers/google/models/[^/:]+"
            r":(generateContent|streamGenerateContent)"
        ),
    ),
    renderer=gemini.WIRE.renderer,  # Gemini's bodies, streams and errors
    validator=f"{__name__}.validate",
    view=gemini.WIRE.view,  # Gemini's bodies
    # https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/count-tokens
    count_paths=re.compile(
        r"/v1(beta1)?/projects/[^/]+/locations/[^/]+/publishers/google/models/[^/:]+:countTokens"
    ),
    contract=CONTRACT,
    client_options=_options,
    sdk_client_kwargs=_sdk_client_kwargs,
)
