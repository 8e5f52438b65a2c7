"""What the loop's test files share (test_loop_*.py): the rows they run on, the server, and
small helpers to script tool calls and read a run's transcript. Each test file has its own
``server`` (one MockLLMServer per module) and ``mock`` (reset around each test) fixtures.

The loop checks run through each row's real SDK against MockLLMServer, one row per wire
protocol of the registry (``tests.rows.wire_rows``, the first row of each wire: openai,
openai-responses, anthropic, bedrock, gemini and every other wire a row is added on), so a
new wire is covered with no change here.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from tests.rows import wire_rows
from zerda.llm import create_interface
from zerda.llm._loop_threads import THREAD_NAME
from zerda.testing import MockLLMServer

ROWS = wire_rows()
# Ids every row's id rule keeps as they are (Mistral's: 9 letters and digits).
ID_A, ID_B, ID_C = "abcDEF123", "ghiJKL456", "mnoPQR789"


def llm_for(server: MockLLMServer, provider: str, **options: Any) -> Any:
    return create_interface(
        provider, model="test-model", max_retries=0, **options, **server.client_options(provider)
    )


def call(name: str, call_id: str | None = None, **arguments: Any) -> dict[str, Any]:
    """A scripted tool call (``call_id`` None: the mock makes one in the row's style)."""
    scripted: dict[str, Any] = {"name": name, "arguments": arguments}
    if call_id is not None:
        scripted["id"] = call_id
    return scripted


def tool_messages(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in result["messages"] if m["role"] == "tool"]


def answered(result: dict[str, Any]) -> list[tuple[Any, bool]]:
    """(content, is_error) of each tool message, in transcript order."""
    return [(m["content"], m["is_error"]) for m in tool_messages(result)]


def sent_text(server: MockLLMServer, provider: str, n: int) -> str:
    """The n-th request body the provider received, as text."""
    return json.dumps(server.requests_for(provider)[n].body, ensure_ascii=False)


def unanswered_calls(messages: list[dict[str, Any]]) -> list[str]:
    """Ids of assistant tool calls that no tool message answers (must be empty in a
    history a run returns, unless it paused)."""
    answered_ids = {m.get("tool_call_id") for m in messages if m.get("role") == "tool"}
    return [
        c["id"]
        for m in messages
        if m.get("role") == "assistant"
        for c in m.get("tool_calls") or []
        if c["id"] not in answered_ids
    ]


def tool_threads() -> list[threading.Thread]:
    """The run tool threads alive in this process."""
    return [t for t in threading.enumerate() if t.name.startswith(THREAD_NAME + "-")]


def get_weather(city: str, unit: str = "celsius") -> dict[str, Any]:
    """Current weather for a city.

    Args:
        city: The city.
        unit: celsius or fahrenheit.
    """
    return {"city": city, "temp": 18, "unit": unit}


WEATHER_PARIS = {"city": "Paris", "temp": 18, "unit": "celsius"}
