"""The request checks (zerda.llm._request): a tool checked once is not checked again."""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

import pytest

from zerda.llm import _request
from zerda.llm.errors import InvalidRequestError


def _tool(name: str = "get_weather") -> dict[str, Any]:
    return {
        "name": name,
        "description": "Current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    }


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The names of the tools checked (``_checked_tool`` called), from an empty memo."""
    monkeypatch.setattr(_request, "_CHECKED_TOOLS", {})
    seen: list[str] = []
    real = _request._checked_tool

    def spy(index: int, tool: Any) -> dict[str, Any]:
        seen.append(tool.get("name"))
        return real(index, tool)

    monkeypatch.setattr(_request, "_checked_tool", spy)
    yield seen


def test_a_tool_sent_again_is_not_checked_again(checks: list[str]) -> None:
    first = _request.normalize_tools([_tool(), _tool("get_forecast")])
    again = _request.normalize_tools([_tool(), _tool("get_forecast")])  # equal, new objects
    assert checks == ["get_weather", "get_forecast"]
    assert (
        again
        == first
        == [
            {
                "name": n,
                "description": "Current weather for a city.",
                "parameters": _tool()["parameters"],
            }
            for n in ("get_weather", "get_forecast")
        ]
    )


def test_the_remembered_schema_is_its_own_copy(checks: list[str]) -> None:
    tool = _tool()
    _request.normalize_tools([tool])
    tool["parameters"]["properties"]["city"]["type"] = "integer"  # the caller's, changed after
    sent = _request.normalize_tools([_tool()])  # the first content again
    assert sent is not None
    assert sent[0]["parameters"] == _tool()["parameters"]
    assert sent[0]["parameters"] is not tool["parameters"]
    changed = _request.normalize_tools([tool])  # the new content: checked, sent as it is
    assert changed is not None and changed[0]["parameters"] is tool["parameters"]
    assert checks == ["get_weather", "get_weather"]


def test_a_results_dicts_are_the_callers_to_change(checks: list[str]) -> None:
    first = _request.normalize_tools([_tool()])
    assert first is not None
    first[0]["name"] = "changed"
    again = _request.normalize_tools([_tool()])
    assert again is not None and again[0]["name"] == "get_weather"


def test_a_tool_changed_into_an_invalid_one_is_refused(checks: list[str]) -> None:
    tool = _tool()
    _request.normalize_tools([tool])
    tool["parameters"]["required"] = "city"  # not an array: the schema is invalid now
    with pytest.raises(InvalidRequestError, match=r"tools\[0\] \('get_weather'\)"):
        _request.normalize_tools([tool])


def test_a_refused_tool_is_refused_every_time(checks: list[str]) -> None:
    bad = {**_tool(), "parameters": {"type": "object", "properties": {"x": float("nan")}}}
    for _ in range(2):
        with pytest.raises(InvalidRequestError, match="cannot be sent as JSON"):
            _request.normalize_tools([bad])
    assert checks == ["get_weather", "get_weather"]
    assert _request._CHECKED_TOOLS == {}


@pytest.mark.parametrize(
    "tool",
    [
        OrderedDict(_tool()),  # a dict subclass
        {**_tool(), "parameters": OrderedDict(_tool()["parameters"])},  # one inside
    ],
    ids=["subclass", "subclass-inside"],
)
def test_a_tool_of_other_types_is_checked_every_time(checks: list[str], tool: Any) -> None:
    for _ in range(2):
        _request.normalize_tools([copy.copy(tool)])
    assert checks == ["get_weather", "get_weather"]


def test_the_memo_is_bounded(checks: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_request, "_CHECKED_TOOLS_MAX", 3)
    for i in range(7):
        _request.normalize_tools([_tool(f"tool_{i}")])
        assert len(_request._CHECKED_TOOLS) <= 3
