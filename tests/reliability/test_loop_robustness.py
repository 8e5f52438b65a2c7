"""The tool loop on what real tools return and do (issue 18, items 12 and 13): outputs
pydantic can serialise reach the model as JSON, a tool's traceback stays in the transcript
(and the DEBUG log) without reaching the model, and a sync ``run()`` inside a running event
loop still runs async tools."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import enum
import json
import logging
from typing import Any

import pydantic
import pytest

from tests.reliability._support import PROVIDERS, Interfaces
from zerda.testing import MockLLMServer


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass
class Reading:
    celsius: float
    at: datetime.datetime


class Station(pydantic.BaseModel):
    name: str
    opened: datetime.date


WHEN = datetime.datetime(2026, 12, 1, 9, 30, tzinfo=datetime.timezone.utc)


def paint(color: Color) -> dict[str, Any]:
    """Paints the wall.

    Args:
        color: The colour to use.
    """
    return {
        "color": color,  # the Enum the loop built from the model's arguments
        "reading": Reading(21.5, WHEN),
        "station": Station(name="Oslo", opened=datetime.date(1990, 5, 17)),
        "tags": {"fresh"},
        "when": WHEN,
    }


EXPECTED = {
    "color": "red",
    "reading": {"celsius": 21.5, "at": "2026-12-01T09:30:00Z"},
    "station": {"name": "Oslo", "opened": "1990-05-17"},
    "tags": ["fresh"],
    "when": "2026-12-01T09:30:00Z",
}


def queue_one_call(server: MockLLMServer, provider: str, name: str, arguments: Any) -> None:
    server.enqueue(provider, tool_calls=[{"name": name, "arguments": arguments}])
    server.enqueue(provider, text="All done.")


def tool_message(result: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = next(m for m in result["messages"] if m["role"] == "tool")
    return message


@pytest.mark.parametrize("provider", PROVIDERS)
def test_tool_outputs_are_serialised_as_pydantic_does(
    server: MockLLMServer, llms: Interfaces, provider: str
) -> None:
    queue_one_call(server, provider, "paint", {"color": "red"})

    result = llms.get(provider).run("Paint it red.", tools=[paint])

    assert result["content"] == "All done.", result.get("error")
    assert tool_message(result)["content"] == EXPECTED
    assert tool_message(result)["is_error"] is False
    sent = json.dumps(server.requests_for(provider)[1].body)
    assert "2026-12-01T09:30:00Z" in sent and "1990-05-17" in sent


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_async_run_serialises_the_same_way(
    server: MockLLMServer, fresh: Any, provider: str
) -> None:
    queue_one_call(server, provider, "paint", {"color": "blue"})

    result = await fresh(server).get(provider).run_async("Paint it blue.", tools=[paint])

    assert result["content"] == "All done.", result.get("error")
    assert tool_message(result)["content"] == {**EXPECTED, "color": "blue"}


def explode(city: str) -> str:
    """Always fails.

    Args:
        city: Any city.
    """
    return _deeper(city)


def _deeper(city: str) -> str:
    raise RuntimeError(f"no weather station in {city}")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_tool_traceback_stays_in_the_transcript_and_the_debug_log(
    server: MockLLMServer, llms: Interfaces, provider: str, caplog: pytest.LogCaptureFixture
) -> None:
    queue_one_call(server, provider, "explode", {"city": "Oslo"})

    with caplog.at_level(logging.DEBUG, logger="zerda"):
        result = llms.get(provider).run("Weather?", tools=[explode])

    message = tool_message(result)
    assert message["content"] == "RuntimeError: no weather station in Oslo"
    assert message["is_error"] is True
    trace = message["traceback"]
    assert trace.startswith("Traceback (most recent call last):")
    assert "in _deeper" in trace and trace.endswith("RuntimeError: no weather station in Oslo\n")
    sent = json.dumps(server.requests_for(provider)[1].body)
    assert "no weather station in Oslo" in sent
    assert "Traceback" not in sent and "_deeper" not in sent
    records = [r for r in caplog.records if r.name == "zerda" and r.levelno == logging.DEBUG]
    assert any(
        r.getMessage() == "tool 'explode' raised" and r.exc_info and r.exc_info[1] is not None
        for r in records
    )


async def fetch_forecast(city: str) -> str:
    """An async tool.

    Args:
        city: The city.
    """
    await asyncio.sleep(0)
    return f"sunny in {city}"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_sync_run_inside_a_running_event_loop_runs_async_tools(
    server: MockLLMServer, llms: Interfaces, provider: str
) -> None:
    """As in a notebook: the sync API called from code running on an event loop."""
    llm = llms.get(provider)
    queue_one_call(server, provider, "fetch_forecast", {"city": "Oslo"})

    async def notebook_cell() -> dict[str, Any]:
        return llm.run("Forecast?", tools=[fetch_forecast])

    result = asyncio.run(notebook_cell())

    assert tool_message(result)["content"] == "sunny in Oslo"
    assert tool_message(result)["is_error"] is False
    assert result["content"] == "All done."
