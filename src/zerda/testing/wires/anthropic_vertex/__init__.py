"""Claude on Vertex AI on MockLLMServer: rawPredict / streamRawPredict; it renders exactly as
Anthropic's Messages wire (only the routes differ)."""

from __future__ import annotations

import re
from typing import Any

from zerda.testing._wire import MockWire
from zerda.testing.wires import anthropic
from zerda.testing.wires.anthropic_vertex.contract import CONTRACT


def _options(base: str) -> dict[str, Any]:
    return {
        "base_url": base,
        "region": "us-east5",
        "project_id": "mock-project",
        "access_token": "mock-token",
    }


WIRE = MockWire(
    # https://docs.anthropic.com/en/api/claude-on-vertex-ai
    routes=(
        re.compile(
            r"(/v1)?/projects/[^/]+/locations/[^/]+/publishers/anthropic/models/[^/:]+"
            r":(rawPredict|streamRawPredict)"
        ),
    ),
    renderer=anthropic.WIRE.renderer,  # the Messages API's bodies, streams and errors
    validator=f"{__name__}.validate",
    view=anthropic.WIRE.view,  # the Messages API's bodies
    # Token counting: one publisher path for every model, the model in the body
    # (the SDK's AnthropicVertex routes /v1/messages/count_tokens there).
    count_paths=re.compile(
        r"(/v1)?/projects/[^/]+/locations/[^/]+/publishers/anthropic/models/count-tokens:rawPredict"
    ),
    contract=CONTRACT,
    client_options=_options,
    sdk_client_kwargs=_options,
)
