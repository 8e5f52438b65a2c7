"""The test data of the OpenAI-compatible rows: what the tests expect of each service beyond
its registry row, written out from the service's own documentation (not read from the row,
so a row that says something else fails).

Adding a ``registry.compatible_row`` row means its row in ``zerda/llm/registry/rows.py`` and
its entry here: tests/llm/test_endpoints.py checks that both name the same services.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Service:
    """``base_url``: the openai SDK client's base URL by default; ``max_tokens``: the field
    ``max_tokens`` travels in; ``reasoning``: the message field the service sends its
    reasoning text in; ``key``: whether it needs an API key (hosted) or not (a local
    server); ``images``: whether it takes image parts (else text only)."""

    base_url: str
    max_tokens: str
    reasoning: str
    key: bool = True
    images: bool = True


SERVICES = {
    "openrouter": Service("https://openrouter.ai/api/v1", "max_tokens", "reasoning"),
    "deepseek": Service(
        "https://api.deepseek.com", "max_tokens", "reasoning_content", images=False
    ),
    "xai": Service("https://api.x.ai/v1", "max_completion_tokens", "reasoning_content"),
    "together": Service("https://api.together.xyz/v1", "max_tokens", "reasoning"),
    "fireworks": Service(
        "https://api.fireworks.ai/inference/v1", "max_tokens", "reasoning_content"
    ),
    "cerebras": Service("https://api.cerebras.ai/v1", "max_completion_tokens", "reasoning"),
    "vllm": Service("http://127.0.0.1:8000/v1", "max_completion_tokens", "reasoning", key=False),
    "lmstudio": Service(
        "http://127.0.0.1:1234/v1", "max_completion_tokens", "reasoning_content", key=False
    ),
}
