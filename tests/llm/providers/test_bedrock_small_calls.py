"""Bedrock's per-call work on a short request: the validation memo's fingerprint
(``marshal`` text, for the blob-free sample message only)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from zerda.llm import create_interface
from zerda.llm.wires.bedrock import fastpath as bedrock_fastpath
from zerda.testing import MockLLMServer

MODEL = "amazon.nova-lite-v1:0"
PNG64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as server:
        yield server


def make(server: MockLLMServer, **options: Any) -> Any:
    return create_interface("bedrock", model=MODEL, **server.client_options("bedrock"), **options)


def _blob_paths(shape: Any, path: str, seen: frozenset[str]) -> list[str]:
    if shape.type_name == "blob":
        return [path]
    if shape.type_name == "structure" and not shape.is_document_type and shape.name not in seen:
        return [
            p
            for name, member in shape.members.items()
            for p in _blob_paths(member, f"{path}.{name}", seen | {shape.name})
        ]
    if shape.type_name == "list":
        return _blob_paths(shape.member, f"{path}[]", seen)
    if shape.type_name == "map":
        return _blob_paths(shape.value, f"{path}{{}}", seen)
    return []


def test_canary_the_blobless_blocks_hold_no_blob() -> None:
    """What _holds_no_blob relies on: below the content blocks it lets through (and the
    toolResult content blocks), the Converse model has no blob member, while the others
    it refuses do hold one (media, redacted reasoning)."""
    import boto3

    client = boto3.client("bedrock-runtime", region_name="us-east-1")
    for operation in bedrock_fastpath._OPERATIONS:
        shape = client.meta.service_model.operation_model(operation).input_shape
        block = shape.members["messages"].member.members["content"].member
        for name in bedrock_fastpath._BLOBLESS_BLOCKS - {"toolResult"}:
            assert _blob_paths(block.members[name], name, frozenset()) == []
        result = block.members["toolResult"]
        assert set(result.members) == {"toolUseId", "content", "status", "type"}
        for name, member in result.members.items():
            if name != "content":
                assert _blob_paths(member, name, frozenset()) == []
        inner = result.members["content"].member
        for name in bedrock_fastpath._BLOBLESS_RESULT_BLOCKS:
            assert _blob_paths(inner.members[name], name, frozenset()) == []
        assert _blob_paths(block.members["image"], "image", frozenset()) != []
        assert _blob_paths(inner.members["image"], "image", frozenset()) != []


TEXT = {"role": "user", "content": [{"text": "hi"}]}
CALL = {"toolUse": {"toolUseId": "t1", "name": "f", "input": {"a": 1}}}
RESULT = {"toolResult": {"toolUseId": "t1", "content": [{"json": {"a": 1}}, {"text": "x"}]}}
IMAGE = {"image": {"format": "png", "source": {"bytes": b"\x89PNG"}}}


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        ([], True),
        ([TEXT], True),
        ([{"role": "user", "content": [RESULT, {"cachePoint": {"type": "default"}}]}], True),
        ([{"role": "assistant", "content": [{"text": "a"}, CALL]}], True),
        ([{"role": "user", "content": [IMAGE]}], False),
        ([{"role": "user", "content": [{"text": "a", "image": IMAGE["image"]}]}], False),
        ([{"role": "user", "content": [{"toolResult": {"content": [IMAGE]}}]}], False),
        ([{"role": "user", "content": [{"toolResult": {"content": "x"}}]}], False),
        ([{"role": "user", "content": [{"toolResult": "x"}]}], False),
        ([{"role": "user", "content": [{"reasoningContent": {"redactedContent": b"x"}}]}], False),
        ([{"role": "user", "content": ({"text": "a"},)}], False),
        ([{"role": "user", "content": ["a"]}], False),
        (["hi"], False),
    ],
)
def test_holds_no_blob(messages: list[Any], expected: bool) -> None:
    assert bedrock_fastpath._holds_no_blob(messages) is expected


def test_fingerprint_tells_apart_what_the_validator_does() -> None:
    same = [{"a": [1, "x", {"b": None}]}, {"a": [1, "x", {"b": None}]}]
    assert bedrock_fastpath._fingerprint(same[0]) == bedrock_fastpath._fingerprint(same[1])
    values = [[1], (1,), {1: 2}, {"1": 2}, 1, 1.0, True, "1", None, {True: 1}, [[]], [()]]
    keys = {bedrock_fastpath._fingerprint({"a": v}) for v in values}
    assert None not in keys and len(keys) == len(values)
    assert bedrock_fastpath._fingerprint({"a": {"b": 1, "c": 2}}) != bedrock_fastpath._fingerprint(
        {"a": {"c": 2, "b": 1}}
    )

    class Text(str):
        pass

    assert bedrock_fastpath._fingerprint({"a": Text("x")}) is None
    assert bedrock_fastpath._fingerprint({"a": object()}) is None
    deep: list[Any] = []
    for _ in range(3000):
        deep = [deep]
    assert bedrock_fastpath._fingerprint({"a": deep}) is None


def test_a_buffer_in_the_request_is_validated_every_call(
    server: MockLLMServer, botocore_validations: list[Any]
) -> None:
    """marshal writes bytes and a memoryview alike: a request holding either never passes
    the validator outside a blob member, so neither is remembered, and a blob in the
    sample message is validated every call."""
    checked = botocore_validations
    server.set_default("bedrock", text="fine")
    with make(server) as llm:
        for value in (b"x", memoryview(b"x"), b"x"):
            result = llm.generate("hi", requestMetadata={"a": value})
            assert result["error"]["type"] == "invalid_request"
        assert len(checked) == 3
        # Base64 text that is not botocore's (an odd unused bit): a plain bytes source.
        odd = {"type": "image", "data": PNG64[:-3] + "h==", "media_type": "image/png"}
        image = [{"role": "user", "content": [{"type": "text", "text": "this?"}, odd]}]
        assert (
            type(llm._native_request(image, {})["messages"][0]["content"][1]["image"]["source"])
            is dict
        )
        for _ in range(2):
            assert llm.generate(image)["content"] == "fine"
        assert len(checked) == 5
        for _ in range(2):
            assert llm.generate("hi")["content"] == "fine"
        assert len(checked) == 6


# --- the answer read from its JSON (before-parse) -------------------------------------------

FIXTURES = (
    Path(__file__).resolve().parents[3] / ".." / "shared" / "fixtures" / "recorded" / "bedrock"
)


def _client() -> Any:
    import boto3

    return boto3.client("bedrock-runtime", region_name="us-east-1")


def _outcome(parse: Any) -> Any:
    try:
        return ("parsed", repr(parse()))  # repr: the dicts' key order too
    except Exception as exc:  # noqa: BLE001 - compared, type and text
        return ("raised", type(exc).__name__, str(exc))


def both(status: int, body: bytes) -> tuple[Any, Any, bool]:
    """(botocore's parse, the parse with Zerda's before-parse handler as botocore's endpoint
    runs it, whether the handler read the body) of one Converse answer."""
    from botocore.parsers import create_parser

    shape = _client().meta.service_model.operation_model("Converse").output_shape

    def response() -> dict[str, Any]:
        headers = {"content-type": "application/json", "x-amzn-requestid": "r1"}
        return {"status_code": status, "headers": headers, "body": body, "context": {}}

    def botocores() -> Any:
        return create_parser("rest-json").parse(response(), shape)

    read: list[bool] = []

    def zerdas() -> Any:
        raw, customized = response(), dict[str, Any]()
        bedrock_fastpath._read_response(bedrock_fastpath._response_reader(shape), raw, customized)
        read.append(raw["body"] != body or bool(customized))
        parsed = create_parser("rest-json").parse(raw, shape)
        parsed.update(customized)
        return parsed

    return _outcome(botocores), _outcome(zerdas), read[0]


def recorded_answers() -> list[Any]:
    if not FIXTURES.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason="shared/fixtures is absent"))]
    params = []
    for path in sorted(FIXTURES.glob("*.json")):
        fixture = json.loads(path.read_text())
        if not fixture.get("streaming") and fixture["response"].get("body_encoding") == "json":
            params.append(pytest.param(fixture, id=path.stem[-60:]))
    return params


@pytest.mark.parametrize("fixture", recorded_answers())
def test_recorded_answers_read_as_botocore_reads_them(fixture: Any) -> None:
    response = fixture["response"]
    body = json.dumps(response["body"]).encode()
    botocores, zerdas, read = both(response["status"], body)
    assert zerdas == botocores
    # Every recorded 200 answer is plain but those holding a blob (redacted reasoning).
    assert read is (response["status"] == 200 and b"redactedContent" not in body)


ANSWER: dict[str, Any] = {
    "output": {
        "message": {
            "role": "assistant",
            "content": [
                {"text": "Hi"},
                {"toolUse": {"toolUseId": "t", "name": "f", "input": {"a": [1, None]}}},
            ],
        }
    },
    "stopReason": "tool_use",
    "usage": {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3},
    "metrics": {"latencyMs": 5},
}


def answer(**changes: Any) -> bytes:
    return json.dumps({**ANSWER, **changes}).encode()


def content(*blocks: Any) -> dict[str, Any]:
    return {"message": {"role": "assistant", "content": list(blocks)}}


ODD: dict[str, tuple[int, bytes, bool]] = {
    "plain": (200, answer(), True),
    "keys in another order, unknown and null ones": (
        200,
        b'{"usage": {"totalTokens": 3, "x": 1, "inputTokens": null}, "stopReason": "end_turn",'
        b' "output": {"message": {"content": [{"text": "a", "p": null}], "role": "assistant"}},'
        b' "extra": [1]}',
        True,
    ),
    "every member": (
        200,
        answer(
            additionalModelResponseFields={"stop_sequence": None, "x": [1.5]},
            trace={"promptRouter": {"invokedModelId": "m"}},
            performanceConfig={"latency": "optimized"},
            serviceTier={"type": "default"},
            usage={"inputTokens": 1, "cacheReadInputTokens": 2, "cacheWriteInputTokens": 0},
        ),
        True,
    ),
    "reasoning text": (
        200,
        answer(
            output=content({"reasoningContent": {"reasoningText": {"text": "t", "signature": "s"}}})
        ),
        True,
    ),
    "a tool use type": (
        200,
        answer(
            output=content({"toolUse": {"toolUseId": "t", "name": "f", "input": 3, "type": "x"}})
        ),
        True,
    ),
    "an empty content list, a null block": (200, answer(output=content(None)), True),
    "null output": (200, answer(output=None), True),
    "a blob": (
        200,
        answer(output=content({"reasoningContent": {"redactedContent": "cmVk"}})),
        False,
    ),
    "an integer as a string": (200, answer(metrics={"latencyMs": "5"}), False),
    "an integer as a float": (200, answer(metrics={"latencyMs": 5.0}), False),
    "an integer as a bool": (200, answer(metrics={"latencyMs": True}), False),
    "a string as a number": (200, answer(stopReason=3), True),
    "an unknown union member": (200, answer(output=content({"newKind": {"a": 1}})), False),
    "two union members": (200, answer(output=content({"text": "a", "cachePoint": {}})), False),
    "a union with __type": (200, answer(output=content({"text": "a", "__type": "x"})), True),
    "an empty union": (200, answer(output={}), False),
    "a list that is not one": (200, answer(output={"message": {"content": "abc"}}), False),
    "a structure that is not one": (200, answer(usage=[1]), False),
    "deep": (200, b'{"stopReason": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", False),
    "null": (200, b"null", False),
    "a list": (200, b"[]", False),
    "not JSON": (200, b"<html>", False),
    "not UTF-8": (200, b'{"stopReason": "\xff"}', False),
    "empty": (200, b"", False),
    "an error": (400, b'{"message": "bad"}', False),
    "a 201": (201, answer(), False),
}


@pytest.mark.parametrize("case", ODD)
def test_odd_answers_read_as_botocore_reads_them(case: str) -> None:
    status, body, plain = ODD[case]
    botocores, zerdas, read = both(status, body)
    assert zerdas == botocores
    assert read is plain


def test_a_float_member_reads_as_botocores_float() -> None:
    from botocore.model import Shape

    reader = bedrock_fastpath._compile_reader(Shape("F", {"type": "double"}), {})
    assert reader is not None
    assert (reader(5), type(reader(5))) == (5.0, float)
    for odd in ("5", True, 10**400):
        with pytest.raises(bedrock_fastpath._NotPlain):
            reader(odd)


def test_canary_converse_answers_go_through_before_parse(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """botocore emits before-parse with the response and the customized dict it merges:
    the answer on Zerda's client is read without botocore's walk of its shapes, and the
    result and the SDK's response are those of botocore's own parser."""
    import boto3
    from botocore.parsers import BaseJSONParser

    walked: list[str] = []
    original = BaseJSONParser._handle_structure

    def spy(self: Any, shape: Any, value: Any) -> Any:
        walked.append(shape.name)
        return original(self, shape, value)

    monkeypatch.setattr(BaseJSONParser, "_handle_structure", spy)
    server.set_default("bedrock", text="Hi", tool_calls=[{"name": "f", "arguments": {"a": 1}}])
    with make(server) as llm:
        native = llm._native_request("hi", {})
        ours = llm._call(native)
        assert walked == ["ConverseResponse"]  # the empty body's, nothing below
        walked.clear()
        sdk = boto3.client(**server.sdk_client_kwargs("bedrock"))
        theirs = sdk.converse(**native)
        assert "ConverseOutput" in walked
        for response in (ours, theirs):
            metadata = response.pop("ResponseMetadata")
            assert metadata["HTTPStatusCode"] == 200
        ids = [
            r["output"]["message"]["content"][1]["toolUse"].pop("toolUseId") for r in (ours, theirs)
        ]
        assert all(ids)
        assert repr(ours) == repr(theirs)
