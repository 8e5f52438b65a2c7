"""Bedrock's converse-stream events: the frequent plain ones (messageStart, text and tool
input deltas, contentBlockStop) are read without botocore's parser walking their shapes
(bedrock_fastpath._read_events), every other message by botocore's own ``_parse_event``. The events are
the very dicts botocore's ``EventStream`` yields (key order included), for every recorded
stream and for payloads botocore treats in its own ways (nulls, unknown keys and members,
bodies that are not JSON, exceptions)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from zerda.llm.wires.bedrock import fastpath as bedrock_fastpath
from zerda.testing._eventstream import encode_event, encode_exception, encode_message

pytest.importorskip("botocore")

FIXTURES = (
    Path(__file__).resolve().parents[3] / ".." / "shared" / "fixtures" / "recorded" / "bedrock"
)


class _Raw:
    """The HTTP body botocore's EventStream reads: ``data`` in chunks of ``size`` bytes."""

    def __init__(self, data: bytes, size: int) -> None:
        self._chunks = [data[i : i + size] for i in range(0, len(data), size)]

    def stream(self) -> Any:
        return iter(self._chunks)

    def close(self) -> None:
        pass


def event_stream(data: bytes, size: int = 1024) -> Any:
    import boto3
    from botocore.eventstream import EventStream
    from botocore.parsers import EventStreamJSONParser

    client = boto3.client("bedrock-runtime", region_name="us-east-1")
    output = client.meta.service_model.operation_model("ConverseStream").output_shape
    shape = output.members["stream"]
    return EventStream(_Raw(data, size), shape, EventStreamJSONParser(), "ConverseStream")


def both(data: bytes, size: int = 1024) -> tuple[Any, Any]:
    """What botocore's EventStream yields (or raises) for ``data``, and what Zerda reads."""
    return _outcome(lambda: list(event_stream(data, size))), _outcome(
        lambda: list(bedrock_fastpath._read_events(event_stream(data, size)))
    )


def _outcome(read: Any) -> Any:
    try:
        return ("events", repr(read()))  # repr: the dicts' key order too
    except Exception as exc:  # noqa: BLE001 - compared, type and text
        return ("raised", type(exc).__name__, str(exc))


def recorded_streams() -> list[Any]:
    if not FIXTURES.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason="shared/fixtures is absent"))]
    params = []
    for path in sorted(FIXTURES.glob("*.json")):
        fixture = json.loads(path.read_text())
        if fixture.get("streaming") and fixture["response"].get("body_encoding") == "base64":
            params.append(pytest.param(fixture, id=path.stem[-60:]))
    return params


@pytest.mark.parametrize("fixture", recorded_streams())
@pytest.mark.parametrize("size", [7, 4096])
def test_recorded_streams_read_as_botocore_reads_them(fixture: Any, size: int) -> None:
    data = base64.b64decode(fixture["response"]["body"])
    botocore_events, zerda_events = both(data, size)
    assert zerda_events == botocore_events
    assert botocore_events[0] == "events"


def delta(payload: Any) -> bytes:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    headers = {
        ":event-type": "contentBlockDelta",
        ":content-type": "application/json",
        ":message-type": "event",
    }
    return encode_message(headers, body)


ODD = {
    "text, padded": delta({"delta": {"text": "Hi"}, "contentBlockIndex": 0, "p": "abcd"}),
    "tool input": delta({"contentBlockIndex": 1, "delta": {"toolUse": {"input": '{"a"'}}}),
    "empty tool input": delta({"contentBlockIndex": 1, "delta": {"toolUse": {}}}),
    "null tool input": delta({"contentBlockIndex": 1, "delta": {"toolUse": {"input": None}}}),
    "tool input, unknown key": delta({"delta": {"toolUse": {"input": "1", "x": 2}}}),
    "tool input not an object": delta({"delta": {"toolUse": "1"}}),
    "null index": delta({"delta": {"text": "Hi"}, "contentBlockIndex": None}),
    "text as a number": delta({"delta": {"text": 5}, "contentBlockIndex": "0"}),
    "null delta": delta({"delta": None, "contentBlockIndex": 0}),
    "null text": delta({"delta": {"text": None}, "contentBlockIndex": 0}),
    "two members": delta({"delta": {"text": "a", "toolUse": {"input": "b"}}}),
    "text and a null member": delta({"delta": {"text": "a", "toolUse": None}}),
    "typed union": delta({"delta": {"text": "a", "__type": "x"}}),
    "unknown member": delta({"delta": {"hologram": {"x": 1}}}),
    "reasoning": delta({"delta": {"reasoningContent": {"redactedContent": "cmVk"}}}),
    "delta a list": delta({"delta": ["text"], "contentBlockIndex": 0}),
    "delta a string": delta({"delta": "text"}),
    "body a list": delta([1, 2]),
    "empty body": delta(b""),
    "not JSON": delta(b"{oops"),
    "UTF-16": delta('{"delta": {"text": "Hi"}}'.encode("utf-16")),
    "not UTF-8": delta(b'{"delta": {"text": "\xff"}}'),
    "BOM": delta('\ufeff{"delta": {"text": "Hi"}}'.encode()),
    "start": encode_event("messageStart", {"role": "assistant", "p": "x"}),
    "start, no role": encode_event("messageStart", {}),
    "stop": encode_event("contentBlockStop", {"contentBlockIndex": 0}),
    "block start": encode_event(
        "contentBlockStart",
        {"start": {"toolUse": {"toolUseId": "t", "name": "n"}}, "contentBlockIndex": 0},
    ),
    "metadata": encode_event("metadata", {"usage": {"inputTokens": 1, "outputTokens": 2}}),
    "unknown event": encode_event("holographicDelta", {"x": 1}),
    "exception": encode_exception("throttlingException", "slow down"),
    "error message": encode_message(
        {":message-type": "error", ":error-code": "Boom", ":error-message": "no"}, b""
    ),
    "no message type": encode_message({":event-type": "contentBlockStop"}, b"{}"),
}


@pytest.mark.parametrize("case", ODD)
def test_odd_events_read_as_botocore_reads_them(case: str) -> None:
    botocore_events, zerda_events = both(ODD[case] + ODD["stop"])
    assert zerda_events == botocore_events


def test_plain_events_skip_the_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the events that are not plain reach botocore's parser."""
    from botocore.parsers import EventStreamJSONParser

    parsed: list[Any] = []
    original = EventStreamJSONParser.parse

    def spy(self: Any, response: dict[str, Any], shape: Any) -> Any:
        parsed.append(response["headers"][":event-type"])
        return original(self, response, shape)

    monkeypatch.setattr(EventStreamJSONParser, "parse", spy)
    data = b"".join(
        [ODD["start"], ODD["text, padded"], ODD["tool input"], ODD["stop"], ODD["metadata"]]
    )
    events = list(bedrock_fastpath._read_events(event_stream(data)))
    assert parsed == ["metadata"]
    assert events == [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockDelta": {"delta": {"text": "Hi"}, "contentBlockIndex": 0}},
        {"contentBlockDelta": {"delta": {"toolUse": {"input": '{"a"'}}, "contentBlockIndex": 1}},
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {"metadata": {"usage": {"inputTokens": 1, "outputTokens": 2}}},
    ]


def test_a_stream_without_botocores_members_is_iterated_as_it_is() -> None:
    events = [{"messageStart": {"role": "assistant"}}]
    assert list(bedrock_fastpath._read_events(events)) == events


def test_botocore_event_stream_as_read() -> None:
    """What _read_events relies on beyond the names of the bedrock table
    (wires/bedrock/fastpath.py): the frames are a generator, and the model the plain events'
    readers are compiled from has each event a structure whose members botocore reads from
    the JSON payload (none from a header), the delta a union of text, tool input and
    reasoning."""
    import inspect

    stream = event_stream(ODD["stop"])
    assert inspect.isgenerator(stream._event_generator)
    shapes = stream._output_shape.members
    readers = bedrock_fastpath._event_readers(stream._output_shape)
    assert list(readers) == list(bedrock_fastpath._PLAIN_EVENTS)
    for name in bedrock_fastpath._PLAIN_EVENTS:
        assert shapes[name].type_name == "structure"
        assert not any(m.serialization for m in shapes[name].members.values())
    union = shapes["contentBlockDelta"].members["delta"]
    assert union.is_tagged_union
    assert {"text", "toolUse", "reasoningContent"} <= set(union.members)
