"""GroqInterface against MockLLMServer and the real ``groq`` SDK."""

from __future__ import annotations

from tests.llm.providers.openai_like import OpenAILikeContract


class TestGroq(OpenAILikeContract):
    provider = "groq"
