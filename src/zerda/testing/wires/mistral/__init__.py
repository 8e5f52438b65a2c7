"""Mistral's wire on MockLLMServer: Chat Completions, its files and batch jobs APIs, and its
gateway's request-id headers."""

from __future__ import annotations

import re
import uuid

from zerda.testing._wire import MockWire
from zerda.testing.wires import openai
from zerda.testing.wires.mistral.contract import CONTRACT


def _request_id() -> str:
    return str(uuid.uuid4())


def _sdk_client_kwargs(base: str) -> dict[str, str]:
    return {"server_url": base, "api_key": "test-key"}


WIRE = MockWire(
    routes=(re.compile(r"/v1/chat/completions"),),
    renderer=f"{__name__}.render",
    validator=f"{__name__}.validate",
    view=openai.WIRE.view,  # Chat Completions bodies (its "any" read as "required")
    contract=CONTRACT,
    sdk_client_kwargs=_sdk_client_kwargs,
    batch_paths=re.compile(r"/v1/(files(/[^/]+(/content)?)?|batch/jobs(/[^/]+(/cancel)?)?)"),
    batches=f"{__name__}.batches",
    # The gateway's x-kong-request-id and mistral-correlation-id, one value.
    request_id_headers=("mistral-correlation-id", "x-kong-request-id"),
    request_id=_request_id,
)
