"""Bedrock's fast path: on the clients Zerda builds, the history and system blocks are
JSON-encoded once and spliced at the head of the body botocore serialized from the rest of
the request. The body on the wire is byte for byte the one botocore's own serializer
writes for the same arguments (blobs as base64 included), sync, async and streamed."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

from zerda.llm import create_interface, document, image, tool_result
from zerda.llm._body_json import Body
from zerda.llm.wires.bedrock import fastpath as bedrock_fastpath
from zerda.llm.wires.bedrock import map as bedrock_map
from zerda.testing import MockLLMServer

MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
PDF = b"%PDF-1.4\n%%EOF\n"
TOOLS = [
    {
        "name": "get_weather",
        "description": "Weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
]
CALL = {"id": "tooluse_1", "name": "get_weather", "arguments": {"city": "Paris é"}}
HISTORY: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": [{"type": "text", "text": "What is this? ☂"}, image(PNG)]},
    {
        "role": "assistant",
        "content": "Let me look.",
        "tool_calls": [CALL],
        "provider_data": {
            "bedrock": {
                "reasoning": [
                    {"reasoningText": {"text": "think", "signature": "sig"}},
                    {"redactedContent": "cmVkYWN0ZWQ="},
                ]
            }
        },
    },
    tool_result(CALL, {"temperature": 18.5, "conditions": "rain \u2028 and wind"}),
    {"role": "user", "content": [document(PDF, name="report.pdf"), {"type": "text", "text": "ok"}]},
]


PNG64 = base64.b64encode(PNG).decode()
PDF64 = base64.b64encode(PDF).decode()
# The same bytes as PNG64, written with a nonzero unused bit in the last character before
# the padding: decoders ignore it, botocore (which encodes the decoded bytes) writes PNG64.
PNG64_ODD = PNG64[:-3] + "h=="
CALL2 = {"id": "tooluse_2", "name": "get_weather", "arguments": {"city": "Lyon"}}
# Media as base64 text the caller gave (not Zerda's encoding), in every place it can sit.
TEXT_HISTORY: list[dict[str, Any]] = [
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is this?"},
            {"type": "image", "data": PNG64, "media_type": "image/png"},
            {"type": "image", "url": f"data:image/png;base64,{PNG64_ODD}"},
        ],
    },
    {"role": "assistant", "content": None, "tool_calls": [CALL2]},
    tool_result(CALL2, [{"type": "image", "data": PNG64_ODD, "media_type": "image/png"}]),
    {
        "role": "user",
        "content": [
            {"type": "document", "data": PDF64, "media_type": "application/pdf", "name": "r"},
            {"type": "text", "text": "and this"},
        ],
    },
]
# Zerda's own encoding of the caller's bytes, in a tool result and twice the same bytes.
BYTES_HISTORY: list[dict[str, Any]] = [
    {"role": "user", "content": [image(PNG), {"type": "image", "data": PNG}]},
    {"role": "assistant", "content": "", "tool_calls": [CALL2]},
    tool_result(CALL2, [{"type": "text", "text": "a chart"}, image(PNG), document(PDF)]),
]


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as server:
        yield server


def botocore_body(llm: Any, operation: str, messages: Any, kwargs: dict[str, Any]) -> bytes:
    """What botocore's own rest-json serializer writes for Zerda's arguments."""
    from botocore.serialize import create_serializer

    native = {k: v for k, v in llm._native_request(messages, kwargs).items() if k != "timeout"}
    model = llm.client.meta.service_model.operation_model(operation)
    body: bytes = create_serializer("rest-json").serialize_to_request(native, model)["body"]
    return body


def make(server: MockLLMServer, **options: Any) -> Any:
    return create_interface("bedrock", model=MODEL, **server.client_options("bedrock"), **options)


CASES = {
    "history": (HISTORY, {"tools": TOOLS, "max_tokens": 64, "temperature": 0.5}),
    "cached": (HISTORY, {"tools": TOOLS, "cache": True}),
    "base64 text": (TEXT_HISTORY, {"tools": TOOLS, "max_tokens": 64}),
    "bytes": (BYTES_HISTORY, {"tools": TOOLS}),
    "every field": (
        HISTORY,
        {
            "tools": TOOLS,
            "tool_choice": "auto",
            "max_tokens": 4096,
            "temperature": 1,
            "top_p": 0.25,
            "stop": ["END", "STOP"],
            "reasoning": {"budget_tokens": 1024},
            "inferenceConfig": {"maxTokens": 2048},
            "guardrailConfig": {"guardrailIdentifier": "g", "guardrailVersion": "1"},
            "promptVariables": {"city": {"text": "Paris"}},
            "additionalModelResponseFieldPaths": ["/stop_sequence"],
            "requestMetadata": {"team": "é"},
            "performanceConfig": {"latency": "optimized"},
            "serviceTier": {"type": "priority"},
        },
    ),
    "no other field": ([{"role": "user", "content": "hi"}], {}),
    "native fields": (
        [{"role": "user", "content": "hi"}],
        {
            "system": "s",
            "additionalModelRequestFields": {"top_k": 5},
            "requestMetadata": {"a": "b"},
        },
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_the_body_is_botocores_byte_for_byte(server: MockLLMServer, case: str) -> None:
    messages, kwargs = CASES[case]
    server.set_default("bedrock", text="fine")
    with make(server) as llm:
        result = llm.generate(messages, raise_errors=True, **kwargs)
        assert result["content"] == "fine"
        sent = server.last_request("bedrock").raw_body
        assert sent == botocore_body(llm, "Converse", messages, kwargs)
        # ...sent through the fast path, not botocore's own walk of the request: botocore
        # serializes nothing but the URL's modelId.
        split = llm._prebuilt(llm._native_request(messages, kwargs))
        assert set(split) == {"modelId", bedrock_fastpath._PREBUILT}


@pytest.mark.parametrize(
    ("config", "written"),
    [
        ({"temperature": float("nan")}, b'"temperature": "NaN"'),
        ({"topP": float("inf"), "maxTokens": 5}, b'"topP": "Infinity"'),
        ({"temperature": Decimal("0.5")}, b'"temperature": 0.5'),
    ],
)
def test_floats_botocore_rewrites_are_botocores(
    server: MockLLMServer, config: Any, written: bytes
) -> None:
    """botocore writes NaN and infinities as strings and a Decimal as a float: an
    inferenceConfig holding one, and what follows it, is serialized by botocore."""
    kwargs = {"inferenceConfig": config, "requestMetadata": {"a": "b"}}
    server.set_default("bedrock", text="fine")
    with make(server) as llm:
        llm.generate(HISTORY, **kwargs)
        sent = server.last_request("bedrock").raw_body
        assert sent == botocore_body(llm, "Converse", HISTORY, kwargs)
    assert written in sent


def test_async_and_stream_send_the_same_body(server: MockLLMServer) -> None:
    messages, kwargs = CASES["history"]
    server.set_default("bedrock", text="fine")
    with make(server) as llm:
        expected = botocore_body(llm, "ConverseStream", messages, kwargs)
        asyncio.run(llm.generate_async(messages, raise_errors=True, **kwargs))
        assert server.last_request("bedrock").raw_body == expected
        events = list(llm.stream(messages, raise_errors=True, **kwargs))
        assert events[-1]["type"] == "done"
        assert server.last_request("bedrock").raw_body == expected


def test_a_callers_own_client_is_left_alone(server: MockLLMServer) -> None:
    import boto3

    client = boto3.client(**server.sdk_client_kwargs("bedrock"))
    server.set_default("bedrock", text="fine")
    with create_interface("bedrock", model=MODEL, client=client) as llm:
        assert llm._prebuilt({"modelId": MODEL, "messages": []}) == {
            "modelId": MODEL,
            "messages": [],
        }
        llm.generate(HISTORY, raise_errors=True, tools=TOOLS)
        assert server.last_request("bedrock").raw_body == botocore_body(
            llm, "Converse", HISTORY, {"tools": TOOLS}
        )


def prebuilt_text(split: dict[str, Any]) -> dict[str, Any]:
    """``_split_prebuilt``'s arguments with the prebuilt body's pieces as one text."""
    body = split.get(bedrock_fastpath._PREBUILT)
    if body is None:
        return split
    return {**split, bedrock_fastpath._PREBUILT: bytes(body.joined()).decode()}


def test_split_prebuilt() -> None:
    messages = [{"role": "user", "content": [{"image": {"source": {"bytes": b"\x00\xff"}}}]}]
    split = prebuilt_text(
        bedrock_fastpath._split_prebuilt(
            {"modelId": "m", "messages": messages, "system": [{"text": "s"}]}
        )
    )
    assert split == {
        "modelId": "m",
        bedrock_fastpath._PREBUILT: '{"messages": [{"role": "user", "content": [{"image": {"source": '
        '{"bytes": "AP8="}}}]}], "system": [{"text": "s"}]}',
    }
    # Every field is, up to an inferenceConfig float botocore rewrites; values that are not
    # JSON leave it all to botocore.
    config = {"modelId": "m", "inferenceConfig": {"temperature": 1, "topP": 0.5}, "messages": []}
    assert prebuilt_text(bedrock_fastpath._split_prebuilt(config)) == {
        "modelId": "m",
        bedrock_fastpath._PREBUILT: '{"inferenceConfig": {"temperature": 1, "topP": 0.5}, "messages": []}',
    }
    late = {"modelId": "m", "messages": [], "inferenceConfig": {"topP": float("inf")}, "x": 1}
    assert prebuilt_text(bedrock_fastpath._split_prebuilt(late)) == {
        "modelId": "m",
        "inferenceConfig": {"topP": float("inf")},
        "x": 1,
        bedrock_fastpath._PREBUILT: '{"messages": []}',
    }
    first = {"modelId": "m", "inferenceConfig": {"temperature": Decimal("0.5")}, "messages": []}
    assert bedrock_fastpath._split_prebuilt(first) is first
    odd = {"modelId": "m", "messages": [{"x": object()}]}
    assert bedrock_fastpath._split_prebuilt(odd) is odd


def test_splice_prebuilt() -> None:
    context: dict[str, Any] = {bedrock_fastpath._PREBUILT: Body([b'{"messages": []}'])}
    params = {"body": b'{"inferenceConfig": {"maxTokens": 5}}'}
    bedrock_fastpath._splice_prebuilt(params, context)
    assert params["body"] == b'{"messages": [], "inferenceConfig": {"maxTokens": 5}}'
    assert context == {}
    params = {"body": b"{}"}
    bedrock_fastpath._splice_prebuilt(
        params, {bedrock_fastpath._PREBUILT: Body([b'{"messages": []}'])}
    )
    assert params["body"] == b'{"messages": []}'
    untouched = {"body": b"{}"}
    bedrock_fastpath._splice_prebuilt(untouched, {})
    assert untouched == {"body": b"{}"}


def test_a_bytes_image_is_base64_encoded_once(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Zerda encodes the caller's bytes once (zerda.llm.parts.encode); the prebuilt body
    reuses that text, where botocore would encode the bytes again."""
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8192  # 2 MiB
    question = {"type": "text", "text": "What?"}
    server.set_default("bedrock", text="fine")
    with make(server) as llm:
        expected = botocore_body(
            llm, "Converse", [{"role": "user", "content": [question, image(png)]}], {}
        )
        encoded: list[int] = []
        original = base64.b64encode

        def spy(data: Any, altchars: Any = None) -> bytes:
            if len(data) >= len(png):
                encoded.append(len(data))
            return original(data, altchars)

        monkeypatch.setattr(base64, "b64encode", spy)
        messages = [{"role": "user", "content": [question, image(png)]}]
        assert llm.generate(messages, raise_errors=True)["content"] == "fine"
        assert encoded == [len(png)]
        assert server.last_request("bedrock").raw_body == expected


def test_the_native_request_holds_the_bytes() -> None:
    """The documented native form keeps boto3's bytes (which its own converse() takes);
    the text rides beside them only where it is the very text botocore writes."""
    llm = create_interface("bedrock", model=MODEL, region="us-east-1")
    native = llm._native_request(TEXT_HISTORY, {})
    first, odd = native["messages"][0]["content"][1:3]
    assert first == {"image": {"format": "png", "source": {"bytes": PNG}}}
    assert first["image"]["source"].text == PNG64
    assert odd == {"image": {"format": "png", "source": {"bytes": PNG}}}
    assert type(odd["image"]["source"]) is dict  # PNG64_ODD is not botocore's text
    part = image(PNG)
    source = llm._native_request([{"role": "user", "content": [part]}], {})["messages"][0][
        "content"
    ][0]["image"]["source"]
    assert source["bytes"] is PNG and source.text is part["data"]  # no copy, no encoding
    assert TEXT_HISTORY[0]["content"][1] == {
        "type": "image",
        "data": PNG64,
        "media_type": "image/png",
    }


@pytest.mark.parametrize(
    ("text", "same"),
    [
        (PNG64, True),
        (PNG64_ODD, False),
        ("QQ==", True),
        ("QR==", False),
        ("QUI=", True),
        ("QUJ=", False),
        ("QUJD", True),
        ("QU\nJD", False),
    ],
)
def test_is_botocores_text(text: str, same: bool) -> None:
    assert bedrock_map._is_botocores_text(text, base64.b64decode(text)) is same


def test_canary_the_body_holds_no_member_botocore_rewrites() -> None:
    """What _split_prebuilt relies on: outside the history and system blocks, no member of
    the Converse and ConverseStream bodies is a blob, a timestamp or renamed, and the only
    floats are inferenceConfig's temperature and topP; modelId alone goes in the URL."""
    import boto3

    client = boto3.client("bedrock-runtime", region_name="us-east-1")

    def special(shape: Any, path: str, seen: frozenset[str]) -> list[str]:
        if shape.type_name == "structure":
            if shape.is_document_type or shape.name in seen:
                return []
            found = []
            for name, member in shape.members.items():
                if member.serialization:
                    found.append(f"{path}.{name}: {member.serialization}")
                found += special(member, f"{path}.{name}", seen | {shape.name})
            return found
        if shape.type_name == "list":
            return special(shape.member, f"{path}[]", seen)
        if shape.type_name == "map":
            return special(shape.key, f"{path}{{key}}", seen) + special(
                shape.value, f"{path}{{}}", seen
            )
        if shape.type_name in ("blob", "timestamp", "float", "double"):
            return [f"{path}: {shape.type_name}"]
        return []

    for operation in bedrock_fastpath._OPERATIONS:
        shape = client.meta.service_model.operation_model(operation).input_shape
        found = special(shape, "", frozenset())
        others = [f for f in found if not f.startswith((".messages", ".system"))]
        assert others == [
            ".modelId: {'location': 'uri', 'name': 'modelId'}",
            ".inferenceConfig.temperature: float",
            ".inferenceConfig.topP: float",
        ]
        assert all(f.endswith(": blob") for f in found if f not in others)


def test_a_request_botocore_passed_is_not_validated_again(
    server: MockLLMServer, botocore_validations: list[Any]
) -> None:
    """The same checked fields are not walked twice; anything the validator would tell
    apart is validated anew (a tuple where a list passed: botocore's documents take lists
    only), and what it refused is refused again."""
    checked = botocore_validations
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    listed = [{"name": "w", "description": "W", "parameters": {**schema, "required": ["city"]}}]
    tupled = [{"name": "w", "description": "W", "parameters": {**schema, "required": ("city",)}}]
    server.set_default("bedrock", text="fine")
    with make(server) as llm:
        for _ in range(2):
            assert llm.generate("hi", tools=listed)["content"] == "fine"
        assert len(checked) == 1
        sent = len(server.requests_for("bedrock"))
        for _ in range(2):
            result = llm.generate("hi", tools=tupled)
            assert result["error"]["type"] == "invalid_request"
            assert "document parameter required" in result["error"]["message"]
        assert len(checked) == 3
        for _ in range(2):
            result = llm.generate("hi", inferenceConfig={"maxTokens": "many"})
            assert result["error"]["type"] == "invalid_request"
        assert len(checked) == 5
        assert len(server.requests_for("bedrock")) == sent
        # A value that is not plain JSON (a first message's image) is validated every call.
        for _ in range(2):
            assert llm.generate(HISTORY[1:2])["content"] == "fine"
        assert len(checked) == 7


def test_fingerprint() -> None:
    assert bedrock_fastpath._fingerprint({"a": [1]}) == bedrock_fastpath._fingerprint({"a": [1]})
    assert bedrock_fastpath._fingerprint({"a": [1]}) != bedrock_fastpath._fingerprint({"a": (1,)})
    assert bedrock_fastpath._fingerprint({"a": {1: 2}}) != bedrock_fastpath._fingerprint(
        {"a": {"1": 2}}
    )
    assert bedrock_fastpath._fingerprint({"a": 1}) != bedrock_fastpath._fingerprint({"a": 1.0})
    assert bedrock_fastpath._fingerprint({"a": 1}) != bedrock_fastpath._fingerprint({"a": True})
    assert bedrock_fastpath._fingerprint({"a": "1"}) != bedrock_fastpath._fingerprint({"a": 1})
    # Not builtin values of exact types: validated on every call.
    assert bedrock_fastpath._fingerprint({"a": Decimal("1")}) is None
    assert bedrock_fastpath._fingerprint({"a": bedrock_map._Source(bytes=b"x")}) is None
