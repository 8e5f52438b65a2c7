"""Bedrock's Converse wire on MockLLMServer: converse / converse-stream, the batch inference
control plane and the S3 calls it needs."""

from __future__ import annotations

import re
from typing import Any

from zerda.testing._wire import MockWire
from zerda.testing.wires.bedrock.contract import CONTRACT


def _client_options(base: str) -> dict[str, Any]:
    return {
        "base_url": base,
        "region": "us-east-1",
        "aws_access_key_id": "test",
        "aws_secret_access_key": "test",
        # llm.batch's control plane and S3 (batches.py).
        "endpoint_urls": {"bedrock": base, "s3": f"{base}/s3"},
    }


def _sdk_client_kwargs(base: str) -> dict[str, Any]:
    return {
        "service_name": "bedrock-runtime",
        "endpoint_url": base,
        "region_name": "us-east-1",
        "aws_access_key_id": "test",
        "aws_secret_access_key": "test",
    }


WIRE = MockWire(
    routes=(re.compile(r"/model/[^/]+/converse(-stream)?"),),
    # https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_CountTokens.html
    count_paths=re.compile(r"/model/[^/]+/count-tokens"),
    renderer=f"{__name__}.render",
    validator=f"{__name__}.validate",
    view=f"{__name__}.view",  # how a model reads a request (answer_like_a_model)
    contract=CONTRACT,
    client_options=_client_options,
    sdk_client_kwargs=_sdk_client_kwargs,
    batch_paths=re.compile(r"/model-invocation-job(/[^/]+(/stop)?)?|/s3/[^/]+(/.*)?"),
    batches=f"{__name__}.batches",
    # Converse carries its tools in toolConfig.tools (API_runtime_ToolConfiguration.html).
    tools_field="toolConfig",
)
