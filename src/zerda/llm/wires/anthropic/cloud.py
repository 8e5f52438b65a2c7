"""Claude on AWS Bedrock and on Google Vertex AI through the ``anthropic`` SDK's own clients
(docs/providers/anthropic.md#claude-on-bedrock-and-vertex-ai).

``anthropic.AnthropicBedrock`` calls Bedrock's InvokeModel with the Messages API body
(https://docs.anthropic.com/en/api/claude-on-amazon-bedrock); ``anthropic.AnthropicVertex``
calls Vertex AI's ``rawPredict`` / ``streamRawPredict``
(https://docs.anthropic.com/en/api/claude-on-vertex-ai). Requests, results, streams and
errors are the Messages API's, so everything but the client is :class:`AnthropicInterface`.
"""

from __future__ import annotations

import contextlib
from typing import Any, ClassVar

from zerda.llm.base import require_sdk
from zerda.llm.errors import ZerdaError
from zerda.llm.interface.arguments import check_strings
from zerda.llm.wires.anthropic.interface import AnthropicInterface
from zerda.llm.wires.bedrock import logs as _aws_logs

# The AnthropicBedrock options that hold AWS credentials and settings: strings, or None.
_AWS_OPTIONS = (
    "aws_access_key",
    "aws_secret_key",
    "aws_session_token",
    "aws_profile",
    "aws_region",
)


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
        check_strings(type(self).__name__, {name: kwargs.get(name) for name in _AWS_OPTIONS})
        super().__init__(model, **kwargs)
        # The SDK signs with botocore, which only its bedrock extra installs.
        require_sdk("botocore", self.spec.extra, "anthropic[bedrock]")
        self._watch_secrets()

    def _restore_live(self) -> None:
        super()._restore_live()
        self._watch_secrets()  # in the process that loads the pickle, too

    def _watch_secrets(self) -> None:
        """Its AWS secrets and API key, and the environment's, out of every log record: the
        SDK signs each request with botocore, whose DEBUG records hold the session token
        (wires/bedrock/logs.py scrubs them, whatever credentials the token came from)."""
        given = [self.options.get(name) for name in self.spec.secret_options]
        _aws_logs.watch(self, [*given, self.api_key, *_aws_logs.environment_secrets()])
        _aws_logs.install()

    def _map_error(self, exc: BaseException) -> ZerdaError | None:
        # The signed request an SDK error carries (APIError.request) holds the session token
        # the credential chain gave the SDK, known nowhere else: watched before the error's
        # text is scrubbed (_redact), so that an answer echoing it shows none.
        with contextlib.suppress(Exception):  # none on it (httpx raises RuntimeError)
            _aws_logs.watch_headers(self, exc.request.headers)  # type: ignore[attr-defined]
        return super()._map_error(exc)

    def _redact(self, text: str) -> str:
        return super()._redact(_aws_logs.redact(self, text))

    def _limit_scope(self) -> tuple[str, ...]:
        """The limiter's account (rate_limit=): Bedrock's quotas are per account and
        region (https://docs.aws.amazon.com/bedrock/latest/userguide/quotas.html); the
        access key id and profile (given, else the environment's, as the SDK reads them)
        are hashed."""
        import os

        from zerda.llm._ratelimit import account_digest

        env = os.environ
        # AWS_DEFAULT_REGION: the boto session's region, which the SDK falls back on.
        region = self.options.get("aws_region") or env.get("AWS_REGION")
        region = region or env.get("AWS_DEFAULT_REGION")
        key_id = self.options.get("aws_access_key") or env.get("AWS_ACCESS_KEY_ID")
        profile = self.options.get("aws_profile") or env.get("AWS_PROFILE")
        return str(region), account_digest(key_id, profile)


# The vertex row's names (google-genai's Client: project, location) for AnthropicVertex's
# own (project_id, region), so that both Vertex AI rows take the same options.
_VERTEX_NAMES = {"project": "project_id", "location": "region"}


def _vertex_names(owner: str, kwargs: dict[str, Any]) -> None:
    """``project`` / ``location`` renamed in ``kwargs`` (the constructor's own dict) to
    the SDK's ``project_id`` / ``region``; both names with different values are refused."""
    for name, sdk_name in _VERTEX_NAMES.items():
        if name not in kwargs:
            continue
        value = kwargs.pop(name)
        if kwargs.get(sdk_name, value) != value:
            raise ValueError(
                f"{owner}: {name}= and {sdk_name}= are one setting (Vertex AI's {name}) and "
                f"were given different values; give one of them"
            )
        kwargs[sdk_name] = value


class AnthropicVertexInterface(AnthropicInterface):
    """Claude through ``anthropic.AnthropicVertex`` (``pip install "zerda-llm[anthropic-vertex]"``).

    Authenticates with Google application default credentials, or ``credentials=`` (a
    ``google.auth`` credentials object), or ``access_token=``; ``region`` (else
    ``CLOUD_ML_REGION``) and ``project_id`` (else ``ANTHROPIC_VERTEX_PROJECT_ID``) say where,
    also under the names the vertex row (google-genai) takes: ``location`` and ``project``.
    There is no API key.
    """

    provider = "anthropic-vertex"
    client_class: ClassVar[str] = "AnthropicVertex"
    async_client_class: ClassVar[str] = "AsyncAnthropicVertex"
    # Web search on Vertex AI is sent "with a beta header: anthropic-beta:
    # web-search-2025-03-05" (https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude/web-search;
    # without it: "Input tag 'web_search_20250305' found using 'type' does not match any of
    # the expected tags", https://github.com/ax-llm/ax/pull/457).
    hosted_betas: ClassVar[frozenset[str]] = frozenset({"web_search"})

    def __init__(self, model: str | None = None, **kwargs: Any) -> None:
        _vertex_names(type(self).__name__, kwargs)
        super().__init__(model, **kwargs)
        if self.options.get("access_token") is None and self.options.get("credentials") is None:
            # Without a token or credentials the SDK asks google-auth for ADC.
            require_sdk("google.auth", self.spec.extra, "anthropic[vertex]")

    def _limit_scope(self) -> tuple[str, ...]:
        """The limiter's account (rate_limit=): Vertex AI's quotas are per project and
        region (https://cloud.google.com/vertex-ai/generative-ai/docs/quotas); given, else
        the environment's, as the SDK reads them."""
        import os

        region = self.options.get("region") or os.environ.get("CLOUD_ML_REGION")
        project = self.options.get("project_id") or os.environ.get("ANTHROPIC_VERTEX_PROJECT_ID")
        return str(region), str(project)

    def _client_kwargs(self) -> dict[str, Any]:
        kwargs = super()._client_kwargs()
        kwargs.pop("api_key", None)  # AnthropicVertex takes none: Google credentials sign
        return kwargs
