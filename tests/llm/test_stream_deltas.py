"""StreamAccumulator's tool_call_delta events, directly (DESIGN.md §7)."""

from __future__ import annotations

from zerda.llm._stream import StreamAccumulator


def delta(index: int, call_id: str | None, name: str, fragment: str) -> dict[str, object]:
    return {
        "type": "tool_call_delta",
        "index": index,
        "id": call_id,
        "name": name,
        "arguments": fragment,
    }


def test_fragments_before_the_name_are_held_until_it_comes() -> None:
    acc = StreamAccumulator()
    assert acc.start_call(0, "c1", "") == []
    assert acc.add_arguments(0, '{"a"') == []
    assert acc.name_call(0, "f") == [delta(0, "c1", "f", '{"a"')]
    assert acc.add_arguments(0, ": 1}") == [delta(0, "c1", "f", ": 1}")]
    assert acc.end_call(0) == [
        {"type": "tool_call", "tool_call": {"id": "c1", "name": "f", "arguments": {"a": 1}}}
    ]


def test_indices_follow_first_appearance_and_keys_never_merge() -> None:
    acc = StreamAccumulator()
    acc.start_call("block-7", "b", "g")
    acc.start_call("block-3", "a", "f")
    events = acc.add_arguments("block-3", "{}") + acc.add_arguments("block-7", '{"x": 2}')
    assert events == [delta(1, "a", "f", "{}"), delta(0, "b", "g", '{"x": 2}')]


def test_a_call_without_fragments_gets_one_empty_object_delta() -> None:
    acc = StreamAccumulator()
    acc.start_call(0, None, "now")
    assert acc.end_call(0) == [
        delta(0, None, "now", "{}"),
        {"type": "tool_call", "tool_call": {"id": None, "name": "now", "arguments": {}}},
    ]


def test_whole_calls_get_one_delta_with_their_json() -> None:
    acc = StreamAccumulator()
    acc.whole_call(None, "f", {"a": 1})
    assert acc.whole_call("c2", "g", {"city": "Zürich"}) == [
        delta(1, "c2", "g", '{"city": "Zürich"}'),
        {
            "type": "tool_call",
            "tool_call": {"id": "c2", "name": "g", "arguments": {"city": "Zürich"}},
        },
    ]


def test_a_reused_index_starts_a_new_call() -> None:
    acc = StreamAccumulator()
    acc.start_call(0, "a", "f")
    acc.add_arguments(0, "{}")
    events = acc.start_call(0, "b", "f")
    assert [e["type"] for e in events] == ["tool_call"]
    assert acc.add_arguments(0, "{}") == [delta(1, "b", "f", "{}")]
