"""What every benchmark sends and receives: the models, the conversation, the tools and the
response the mock server answers with, in Zerda's unified form.

The raw SDK side (``bench_raw``) sends the same conversation written by hand in each
provider's native form, so both sides ask the server for the same thing.
"""

from __future__ import annotations

import copy
from typing import Any

PROVIDERS = ("openai", "groq", "mistral", "ollama", "anthropic", "bedrock", "gemini")

MODELS = {
    "openai": "gpt-4o-mini",
    "groq": "llama-3.3-70b-versatile",
    "mistral": "mistral-large-latest",
    "ollama": "llama3.2",
    "anthropic": "claude-haiku-4-5",  # not on the SDK's deprecation list: no warning per call
    "bedrock": "amazon.nova-lite-v1:0",
    "gemini": "gemini-2.5-flash",
}

MAX_TOKENS = 256
SYSTEM = "You are a weather assistant. Use the tools to answer."
QUESTION = "What is the weather in Paris, and should I take an umbrella?"
# Valid everywhere as it is (Mistral's 9 alphanumerics included), so no side maps ids.
CALL_ID = "a1b2c3d4e"
CALL_ARGS: dict[str, Any] = {"city": "Paris", "unit": "celsius"}
TOOL_OUTPUT: dict[str, Any] = {"temperature": 18, "conditions": "light rain"}

WEATHER_TOOL: dict[str, Any] = {
    "name": "get_weather",
    "description": "Current weather for a city.",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name, e.g. Paris"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
    },
}
FORECAST_TOOL: dict[str, Any] = {
    "name": "get_forecast",
    "description": "Daily forecast for a city.",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer", "minimum": 1, "maximum": 10},
        },
        "required": ["city", "days"],
    },
}
TOOLS = [WEATHER_TOOL, FORECAST_TOOL]

# One tool round trip already in the history: the request converts every message kind.
MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": QUESTION},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": CALL_ID, "name": "get_weather", "arguments": CALL_ARGS}],
    },
    {
        "role": "tool",
        "tool_call_id": CALL_ID,
        "name": "get_weather",
        "content": TOOL_OUTPUT,
        "is_error": False,
    },
]

# What the server answers every request with (set_default): text and one tool call.
# fragments only shapes streams: the text and the arguments arrive in 8 pieces each.
RESPONSE: dict[str, Any] = {
    "text": "Let me also check the forecast for the next days.",
    "tool_calls": [{"name": "get_forecast", "arguments": {"city": "Paris", "days": 3}}],
    "fragments": 8,
}


def zerda_kwargs() -> dict[str, Any]:
    """generate's arguments, fresh copies each time (Zerda never mutates them anyway)."""
    return {"system": SYSTEM, "tools": copy.deepcopy(TOOLS), "max_tokens": MAX_TOKENS}


# --- conversion benchmark inputs ------------------------------------------------------


def many_tools(n: int) -> list[dict[str, Any]]:
    """n distinct unified tools with a realistic, nested schema."""
    tools = []
    for i in range(n):
        schema = {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": f"query for tool {i}"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                "filters": {
                    "type": "object",
                    "properties": {
                        "tags": {"type": "array", "items": {"type": "string"}},
                        "since": {"type": "string", "format": "date"},
                    },
                },
            },
            "required": ["query"],
        }
        tools.append(
            {"name": f"tool_{i}", "description": f"Tool number {i}.", "parameters": schema}
        )
    return tools


def long_conversation(n: int) -> list[dict[str, Any]]:
    """A system prompt, tool-calling turns (user, assistant with two parallel calls, two
    tool results, assistant text), then plain turns so that exactly ``n`` messages end on
    a user message. Ids are valid for every provider."""
    turns = (n - 2) // 5
    if (n - 1 - 5 * turns) % 2 == 0:
        turns -= 1  # the plain tail (user, assistant, ..., user) has an odd length
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    for turn in range(turns):
        a, b = f"c{turn:04d}aaaa", f"c{turn:04d}bbbb"
        calls = [
            {"id": a, "name": "get_weather", "arguments": {"city": f"City {turn}"}},
            {"id": b, "name": "get_forecast", "arguments": {"city": f"City {turn}", "days": 3}},
        ]
        messages += [
            {"role": "user", "content": f"Question {turn}: how is the weather?"},
            {"role": "assistant", "content": "Checking.", "tool_calls": calls},
            {"role": "tool", "tool_call_id": a, "name": "get_weather", "content": TOOL_OUTPUT},
            {"role": "tool", "tool_call_id": b, "name": "get_forecast", "content": "3 days of sun"},
            {"role": "assistant", "content": f"Answer {turn}: it is fine."},
        ]
    while len(messages) < n:
        role = "user" if (n - len(messages)) % 2 else "assistant"
        messages.append({"role": role, "content": f"Small talk {len(messages)}."})
    return messages
