"""Bedrock's per-call work on a short request: the validation memo's fingerprint
(``marshal`` text, for the blob-free sample message only)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from zerda.llm import create_interface
from zerda.llm.providers import aws
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
    for operation in aws._OPERATIONS:
        shape = client.meta.service_model.operation_model(operation).input_shape
        block = shape.members["messages"].member.members["content"].member
        for name in aws._BLOBLESS_BLOCKS - {"toolResult"}:
            assert _blob_paths(block.members[name], name, frozenset()) == []
        result = block.members["toolResult"]
        assert set(result.members) == {"toolUseId", "content", "status", "type"}
        for name, member in result.members.items():
            if name != "content":
                assert _blob_paths(member, name, frozenset()) == []
        inner = result.members["content"].member
        for name in aws._BLOBLESS_RESULT_BLOCKS:
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
    assert aws._holds_no_blob(messages) is expected


def test_fingerprint_tells_apart_what_the_validator_does() -> None:
    same = [{"a": [1, "x", {"b": None}]}, {"a": [1, "x", {"b": None}]}]
    assert aws._fingerprint(same[0]) == aws._fingerprint(same[1])
    values = [[1], (1,), {1: 2}, {"1": 2}, 1, 1.0, True, "1", None, {True: 1}, [[]], [()]]
    keys = {aws._fingerprint({"a": v}) for v in values}
    assert None not in keys and len(keys) == len(values)
    assert aws._fingerprint({"a": {"b": 1, "c": 2}}) != aws._fingerprint({"a": {"c": 2, "b": 1}})

    class Text(str):
        pass

    assert aws._fingerprint({"a": Text("x")}) is None
    assert aws._fingerprint({"a": object()}) is None
    deep: list[Any] = []
    for _ in range(3000):
        deep = [deep]
    assert aws._fingerprint({"a": deep}) is None


def test_a_buffer_in_the_request_is_validated_every_call(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """marshal writes bytes and a memoryview alike: a request holding either never passes
    the validator outside a blob member, so neither is remembered, and a blob in the
    sample message is validated every call."""
    import botocore.validate

    checked: list[Any] = []
    original = botocore.validate.validate_parameters

    def spy(params: Any, shape: Any) -> None:
        checked.append(params)
        original(params, shape)

    monkeypatch.setattr(botocore.validate, "validate_parameters", spy)
    monkeypatch.setattr(aws, "_VALIDATED", {})
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
