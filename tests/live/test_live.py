"""Optional live calls to the real providers: each runs only when its key is in the
environment (and is skipped otherwise), so CI and offline runs never reach the network.

    OPENAI_API_KEY=... .venv/bin/pytest tests/live -m live
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from zerda.llm import create_interface, tool_result

pytestmark = pytest.mark.live

# provider -> (environment variables of which one must be set, a small current model)
LIVE = {
    "openai": (("OPENAI_API_KEY",), "gpt-4o-mini"),
    "groq": (("GROQ_API_KEY",), "llama-3.3-70b-versatile"),
    "mistral": (("MISTRAL_API_KEY",), "mistral-small-latest"),
    "ollama": (("ZERDA_LIVE_OLLAMA",), os.environ.get("ZERDA_LIVE_OLLAMA", "llama3.1")),
    "anthropic": (("ANTHROPIC_API_KEY",), "claude-haiku-4-5"),
    "bedrock": (("ZERDA_LIVE_BEDROCK_MODEL",), os.environ.get("ZERDA_LIVE_BEDROCK_MODEL", "")),
    "gemini": (("GEMINI_API_KEY", "GOOGLE_API_KEY"), "gemini-2.5-flash"),
}


def get_weather(city: str) -> dict[str, Any]:
    """Current weather for a city.

    Args:
        city: The city name.
    """
    return {"city": city, "temp_c": 18, "sky": "clear"}


@pytest.mark.parametrize("provider", list(LIVE))
def test_a_real_tool_round_trip(provider: str) -> None:
    keys, model = LIVE[provider]
    if not any(os.environ.get(k) for k in keys):
        pytest.skip(f"set {' or '.join(keys)} to run the live {provider} test")
    llm = create_interface(provider, model=model)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "What's the weather in Paris?"}]
    first = llm.generate(messages, tools=[get_weather], tool_choice="get_weather", max_tokens=300)
    assert first["stop_reason"] == "tool_use", first.get("error")
    assert first["tool_calls"][0]["name"] == "get_weather"
    messages.append(first["message"])
    messages += [tool_result(c, get_weather(**c["arguments"])) for c in first["tool_calls"]]
    final = llm.generate(messages, tools=[get_weather], max_tokens=300)
    assert final["stop_reason"] == "end_turn", final.get("error")
    assert final["content"]
