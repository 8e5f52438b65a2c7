"""Claude on AWS Bedrock and on Google Vertex AI through the ``anthropic`` SDK's own clients
(docs/providers/anthropic.md#claude-on-bedrock-and-vertex-ai).

``anthropic.AnthropicBedrock`` calls Bedrock's InvokeModel with the Messages API body
(https://docs.anthropic.com/en/api/claude-on-amazon-bedrock); ``anthropic.AnthropicVertex``
calls Vertex AI's ``rawPredict`` / ``streamRawPredict``
(https://docs.anthropic.com/en/api/claude-on-vertex-ai). Requests, results, streams and
errors are the Messages API's, so everything but the client is :class:`AnthropicInterface`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from zerda.llm.base import require_sdk
from zerda.llm.wires.anthropic.interface import AnthropicInterface


class AnthropicBedrockInterface(AnthropicInterface):
    """Claude through ``anthropic.AnthropicBedrock`` (``pip install "zerda-llm[anthropic-bedrock]"``).

    Signs with the AWS credential chain (or ``aws_access_key`` / ``aws_secret_key`` /
    ``aws_session_token`` / ``aws_profile``, or a Bedrock API key as ``api_key``); the
    region is ``aws_region`` (``region`` is accepted too), else ``AWS_REGION``. The model
    is a Bedrock model id (``anthropic.claude-…-v1:0`` or an inference profile).
    """

    provider = "anthropic-bedrock"
    client_class: ClassVar[str] = "AnthropicBedrock"
    async_client_class: ClassVar[str] = "AsyncAnthropicBedrock"

    def __init__(self, model: str | None = None, **kwargs: Any) -> None:
        if "region" in kwargs:  # the name Zerda's bedrock provider takes
            kwargs["aws_region"] = kwargs.pop("region")
        super().__init__(model, **kwargs)
        # The SDK signs with botocore, which only its bedrock extra installs.
        require_sdk("botocore", self.spec.extra, "anthropic[bedrock]")


class AnthropicVertexInterface(AnthropicInterface):
    """Claude through ``anthropic.AnthropicVertex`` (``pip install "zerda-llm[anthropic-vertex]"``).

    Authenticates with Google application default credentials, or ``credentials=`` (a
    ``google.auth`` credentials object), or ``access_token=``; ``region`` (else
    ``CLOUD_ML_REGION``) and ``project_id`` (else ``ANTHROPIC_VERTEX_PROJECT_ID``) say where.
    There is no API key.
    """

    provider = "anthropic-vertex"
    client_class: ClassVar[str] = "AnthropicVertex"
    async_client_class: ClassVar[str] = "AsyncAnthropicVertex"

    def __init__(self, model: str | None = None, **kwargs: Any) -> None:
        super().__init__(model, **kwargs)
        if self.options.get("access_token") is None and self.options.get("credentials") is None:
            # Without a token or credentials the SDK asks google-auth for ADC.
            require_sdk("google.auth", self.spec.extra, "anthropic[vertex]")

    def _client_kwargs(self) -> dict[str, Any]:
        kwargs = super()._client_kwargs()
        kwargs.pop("api_key", None)  # AnthropicVertex takes none: Google credentials sign
        return kwargs
