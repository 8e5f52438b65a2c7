"""Bedrock's counting endpoint: ``CountTokens``
(https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_CountTokens.html,
``POST /model/{modelId}/count-tokens``) through boto3's documented
``bedrock-runtime`` ``count_tokens``, with the Converse request ``generate`` would send as
its ``input.converse``.

``ConverseTokensRequest`` carries ``messages``, ``system``, ``toolConfig`` and
``additionalModelRequestFields`` (API_runtime_ConverseTokensRequest.html); the generation
settings (``inferenceConfig``, ``outputConfig``) are not counted. A botocore without the
operation (the floor, 1.37.24, has none) counts by the estimate. Only the models the
endpoint supports are counted (Claude models, at the time of writing); another model's
``ValidationException`` is the call's error, as generate reports it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from zerda.llm._timeout import split_timeout
from zerda.llm.interface.counting import TokenCounter, count_of

_COUNTED = ("messages", "system", "toolConfig", "additionalModelRequestFields")


class CountTokensCounter(TokenCounter):
    """``client.count_tokens(modelId=, input={"converse": ...})`` -> ``inputTokens``."""

    def available(self) -> bool:
        return hasattr(self.llm.client, "count_tokens")

    def arguments(self, native: dict[str, Any]) -> dict[str, Any] | None:
        native, _ = split_timeout(native)  # count_tokens() takes no per-call timeout
        converse = {k: native[k] for k in _COUNTED if k in native}
        return {"modelId": native["modelId"], "input": {"converse": converse}}

    def method(self, client: Any) -> Callable[..., Any]:
        return client.count_tokens  # type: ignore[no-any-return]

    async def count_async(self, arguments: dict[str, Any]) -> Any:
        """boto3 has no async client: the call runs in the interface's thread pool, as
        ``generate_async``'s does, one attempt per pool job."""
        import asyncio  # loaded by now: this runs on an event loop

        loop = asyncio.get_running_loop()
        llm: Any = self.llm
        send = functools.partial(self.method(llm.client), **arguments)
        return await llm._retrying_async(lambda: loop.run_in_executor(llm._pool, send))

    def tokens(self, raw: Any) -> int:
        value = raw.get("inputTokens") if isinstance(raw, dict) else None
        return count_of(self.llm.provider, value, "inputTokens")
