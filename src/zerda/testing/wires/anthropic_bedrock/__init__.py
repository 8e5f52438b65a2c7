"""Claude on Bedrock (InvokeModel) on MockLLMServer: the Messages API's bodies inside
Bedrock's transport and errors (``render.py``)."""

from __future__ import annotations

import re
from typing import Any

from zerda.testing._wire import MockWire
from zerda.testing.wires import anthropic
from zerda.testing.wires.anthropic_bedrock.contract import CONTRACT


def _options(base: str) -> dict[str, Any]:
    return {
        "base_url": base,
        "aws_region": "us-east-1",
        "aws_access_key": "test",
        "aws_secret_key": "test",
    }


WIRE = MockWire(
    # https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModel.html
    routes=(re.compile(r"/model/[^/]+/invoke(-with-response-stream)?"),),
    renderer=f"{__name__}.render",
    validator=f"{__name__}.validate",
    view=anthropic.WIRE.view,  # the Messages API's bodies inside InvokeModel
    contract=CONTRACT,
    client_options=_options,
    sdk_client_kwargs=_options,
)
