"""Zerda's own request building is linear in history length on every provider (issue 12).

No timing: the number of Python function calls (list comprehensions and generator
expressions included, which are frames of their own) made by building the native request
is counted. Its growth per 20 more tool round trips must be the same at 20 and at 200
round trips; a per-message re-scan of the history (quadratic) makes it grow with n.
"""

from __future__ import annotations

import gc
import sys
from typing import Any

import pytest

from zerda.llm import registry
from zerda.llm.providers import create_interface
from zerda.testing import MockLLMServer

TOOLS = [
    {
        "name": "get_weather",
        "description": "Weather for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
]


def interface(provider: str) -> Any:
    """The row's interface with the options a mock server would give it (the server is
    never started: building a request sends nothing)."""
    spec = registry.REGISTRY[provider]
    try:
        return create_interface(provider, model="m-1", **MockLLMServer().client_options(provider))
    except ImportError:
        pytest.skip(f"{provider}: the {spec.extra!r} extra is not installed")


def history(round_trips: int) -> list[dict[str, Any]]:
    """A user turn, then ``round_trips`` times: a tool call, its result, a user turn."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "start"}]
    for i in range(round_trips):
        call = {"id": f"call{i:05d}", "name": "get_weather", "arguments": {"city": "Paris"}}
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call["id"], "content": {"temp": 20}},
            {"role": "user", "content": f"and now {i}?"},
        ]
    return messages


def count_calls(llm: Any, messages: list[dict[str, Any]]) -> int:
    calls = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal calls
        if event == "call":
            calls += 1

    # No collection while counting: gc.callbacks (hypothesis registers one) are Python calls.
    gc.disable()
    sys.setprofile(profile)
    try:
        llm._native_request(messages, {"tools": TOOLS})
    finally:
        sys.setprofile(None)
        gc.enable()
    return calls


@pytest.mark.parametrize("provider", registry.NAMES)
def test_request_building_grows_linearly_with_history(provider: str) -> None:
    llm = interface(provider)
    count_calls(llm, history(3))  # first-call imports and caches out of the way
    small = count_calls(llm, history(40)) - count_calls(llm, history(20))
    large = count_calls(llm, history(220)) - count_calls(llm, history(200))
    assert small > 0
    assert large == small, (
        f"{provider}: 20 more round trips cost {small} calls at 20, {large} at 200"
    )
