"""MistralInterface against MockLLMServer and the real ``mistralai`` SDK."""

from __future__ import annotations

from tests.llm.providers.openai_like import OpenAILikeContract


class TestMistral(OpenAILikeContract):
    provider = "mistral"
