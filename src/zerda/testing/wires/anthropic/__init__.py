"""Anthropic's Messages wire on MockLLMServer: ``/v1/messages``, ``/v1/messages/count_tokens``,
Message Batches, its error bodies and ``request-id``."""

from __future__ import annotations

import re

from zerda.testing import _ids
from zerda.testing._script import ErrorReply, Raw, RecordedRequest
from zerda.testing._wire import MockWire
from zerda.testing.wires.anthropic.contract import CONTRACT


def _unknown_path(provider: str, req: RecordedRequest) -> ErrorReply | Raw:
    # errors page, 404 not_found_error (https://docs.anthropic.com/en/api/errors); body
    # quoted in https://github.com/danielmiessler/Fabric/issues/1140.
    return ErrorReply(404, "Not Found", "not_found_error")


def _request_id() -> str:
    return _ids.message_id("req_011C")


WIRE = MockWire(
    routes=(re.compile(r"/v1/messages"),),
    renderer=f"{__name__}.render",
    validator=f"{__name__}.validate",
    view=f"{__name__}.view",  # how a model reads a request (answer_like_a_model)
    contract=CONTRACT,
    batch_paths=re.compile(r"/v1/messages/batches(/[^/]+(/results|/cancel)?)?"),
    batches=f"{__name__}.batches",
    # https://docs.anthropic.com/en/api/messages-count-tokens
    count_paths=re.compile(r"/v1/messages/count_tokens"),
    unknown_path=_unknown_path,
    # https://docs.anthropic.com/en/api/errors#request-id
    request_id_headers=("request-id",),
    request_id=_request_id,
)
