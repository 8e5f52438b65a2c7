"""Groq's wire on MockLLMServer: OpenAI's Chat Completions and Batch API under ``/openai``."""

from __future__ import annotations

import re

from zerda.testing._script import ErrorReply, Raw, RecordedRequest
from zerda.testing._wire import MockWire
from zerda.testing.wires import openai
from zerda.testing.wires.groq.contract import CONTRACT

DOCS = "https://console.groq.com/docs/"


def _unknown_path(provider: str, req: RecordedRequest) -> ErrorReply | Raw:
    return openai.unknown_url(f"{req.method} {req.path}", DOCS, {})


WIRE = MockWire(
    routes=(re.compile(r"/openai/v1/chat/completions"),),
    renderer=f"{__name__}.render",
    validator=f"{__name__}.validate",
    view=openai.WIRE.view,  # Chat Completions bodies, as OpenAI's
    contract=CONTRACT,
    # https://console.groq.com/docs/batch: OpenAI's files and batches API, under /openai.
    batch_paths=re.compile("/openai" + openai.BATCH_PATHS),
    batches=f"{openai.__name__}.batches",
    unknown_path=_unknown_path,
    request_id_headers=("x-request-id",),
)
