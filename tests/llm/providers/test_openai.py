"""OpenAIInterface against MockLLMServer and the real ``openai`` SDK."""

from __future__ import annotations

from tests.llm.providers.openai_like import OpenAILikeContract


class TestOpenAI(OpenAILikeContract):
    provider = "openai"
