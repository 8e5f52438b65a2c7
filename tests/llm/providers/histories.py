"""Unified conversations as each provider's generate() returns them, so every
provider's tests can check that a history started elsewhere continues on it.

Each history: user question, an assistant turn with two parallel tool calls (ids in the
producing provider's own style, or None), the two tool results (one dict output, one text),
the assistant's answer, and a follow-up user turn.
"""

from __future__ import annotations

from typing import Any

TOOLS = [
    {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name"}},
            "required": ["city"],
        },
    },
    {
        "name": "get_time",
        "description": "Local time in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
]

# (first call id, second call id, provider_data) in each provider's style.
_STYLE: dict[str, tuple[str | None, str | None, dict[str, Any] | None]] = {
    "openai": ("call_a1B2c3D4e5F6g7H8i9J0k1L2", "call_m3N4o5P6q7R8s9T0u1V2w3X4", None),
    "groq": ("call_9x8y7z6w5v4u3t2s1r0q9p8o", "call_n7m6l5k4j3i2h1g0f9e8d7c6", None),
    "mistral": ("Ab3dE6gH9", "Zy1xW4vU7", None),
    "ollama": (None, None, None),
    "anthropic": ("toolu_01A09q90qw90lq917835lq9", "toolu_01B18r81rx81mr826724mr8", None),
    "bedrock": ("tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "tooluse_pQ2hS9d3Tq6yUe8Wn1Xc4B", None),
    "gemini": (None, None, {"gemini": {"thought_signatures": ["c2lnLW9uZQ==", None]}}),
    "openai-responses": (
        "call_Q1w2E3r4T5y6U7i8O9p0A1s2",
        "call_D3f4G5h6J7k8L9z0X1c2V3b4",
        {
            "openai-responses": {
                "items": [
                    {
                        "type": "reasoning",
                        "id": "rs_0a1b2c3d4e5f60718293a4b5c6d7e8f9",
                        "summary": [{"type": "summary_text", "text": "Two lookups."}],
                        "encrypted_content": "gAAAAABoSECRETREASONING==",
                    },
                    {
                        "type": "function_call",
                        "id": "fc_0a1b2c3d4e5f6071",
                        "call_id": "call_Q1w2E3r4T5y6U7i8O9p0A1s2",
                    },
                    {
                        "type": "function_call",
                        "id": "fc_8293a4b5c6d7e8f9",
                        "call_id": "call_D3f4G5h6J7k8L9z0X1c2V3b4",
                    },
                ]
            }
        },
    ),
}

PRODUCERS = tuple(_STYLE)


def history_from(provider: str) -> list[dict[str, Any]]:
    """The conversation as ``provider`` produced it (fresh objects on every call)."""
    first, second, provider_data = _STYLE[provider]
    assistant: dict[str, Any] = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": first, "name": "get_weather", "arguments": {"city": "Paris"}},
            {"id": second, "name": "get_time", "arguments": {"city": "Paris"}},
        ],
    }
    if provider_data:
        assistant["provider_data"] = provider_data
    return [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Weather and time in Paris?"},
        assistant,
        {
            "role": "tool",
            "tool_call_id": first,
            "name": "get_weather",
            "content": {"temp_c": 18, "sky": "clear"},
        },
        {"role": "tool", "tool_call_id": second, "name": "get_time", "content": "14:05"},
        {"role": "assistant", "content": "18°C and clear; it is 14:05."},
        {"role": "user", "content": "Thanks. And tomorrow?"},
    ]
