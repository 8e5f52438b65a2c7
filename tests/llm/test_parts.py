"""Content parts (zerda.llm.parts): the helpers' sniffing, the provider-neutral checks, the
checks against a registry row, and the one move of tool media into a user message."""

from __future__ import annotations

import base64
import copy
from pathlib import Path
from typing import Any

import pytest

from zerda.llm import InvalidRequestError, audio, document, image, registry, tool_result
from zerda.llm.messages import validate_messages
from zerda.llm.parts import check_media, is_parts, move_tool_media, sniff

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
PNG64 = base64.b64encode(PNG).decode()
PDF = b"%PDF-1.7\n%%EOF\n"


@pytest.mark.parametrize(
    ("head", "media_type"),
    [
        (PNG, "image/png"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", "image/jpeg"),
        (b"GIF89a\x01\x00", "image/gif"),
        (b"RIFF\x10\x00\x00\x00WEBPVP8 ", "image/webp"),
        (b"RIFF\x10\x00\x00\x00WAVEfmt ", "audio/wav"),
        (b"%PDF-1.4\n", "application/pdf"),
        (b"ID3\x04\x00", "audio/mpeg"),
        (b"\xff\xfb\x90\x64", "audio/mpeg"),  # an MPEG frame without an ID3 tag
        (b"fLaC\x00\x00", "audio/flac"),
        (b"OggS\x00\x02", "audio/ogg"),
        (b"\x00\x00\x00\x20ftypM4A \x00", "audio/mp4"),
        (b"hello world", None),
    ],
)
def test_sniff_reads_magic_bytes(head: bytes, media_type: str | None) -> None:
    assert sniff(head) == media_type


def test_image_from_bytes_is_base64_text_with_the_sniffed_type() -> None:
    assert image(PNG) == {"type": "image", "data": PNG64, "media_type": "image/png"}
    assert image(bytearray(PNG), media_type="image/x-custom")["media_type"] == "image/x-custom"


def test_helpers_read_paths_magic_bytes_first_then_the_extension(tmp_path: Path) -> None:
    misnamed = tmp_path / "photo.jpg"
    misnamed.write_bytes(PNG)  # the bytes win over the extension
    assert image(misnamed)["media_type"] == "image/png"
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n")
    assert document(notes) == {
        "type": "document",
        "data": base64.b64encode(b"# Notes\n").decode(),
        "media_type": "text/markdown",
        "name": "notes.md",
    }
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(PDF)
    assert document(str(pdf), name="Q3 report")["name"] == "Q3 report"
    wav = tmp_path / "clip.wav"
    wav.write_bytes(b"RIFF\x10\x00\x00\x00WAVEfmt ")
    assert audio(wav)["media_type"] == "audio/wav"


def test_helpers_take_urls_and_provider_uris_without_reading_them() -> None:
    assert image("https://example.com/a/cat.jpeg?size=2") == {
        "type": "image",
        "url": "https://example.com/a/cat.jpeg?size=2",
        "media_type": "image/jpeg",
    }
    assert image("https://example.com/render") == {
        "type": "image",
        "url": "https://example.com/render",
    }
    assert document("s3://bucket/q3.pdf") == {
        "type": "file",
        "uri": "s3://bucket/q3.pdf",
        "media_type": "application/pdf",
    }
    assert audio("gs://bucket/talk.mp3")["media_type"] == "audio/mpeg"


def test_helpers_refuse_what_they_cannot_type(tmp_path: Path) -> None:
    with pytest.raises(
        ValueError, match=r"cannot tell the media type of these bytes: pass media_type="
    ):
        image(b"not an image")
    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match="is empty"):
        image(empty)
    with pytest.raises(TypeError, match="takes bytes, a path or a URL, not int"):
        image(42)  # type: ignore[arg-type]


# --- provider-neutral checks -------------------------------------------------------------------


def user(*parts: Any) -> list[dict[str, Any]]:
    return [{"role": "user", "content": list(parts)}]


def test_validation_normalises_bytes_data_urls_and_missing_media_types() -> None:
    given = user(
        {"type": "text", "text": "Look"},
        {"type": "image", "data": PNG},
        {"type": "image", "url": f"data:image/png;base64,{PNG64}"},
        {"type": "image", "data": PNG64},
        {"type": "cache_point"},
    )
    before = copy.deepcopy(given)
    png = {"type": "image", "data": PNG64, "media_type": "image/png"}
    assert validate_messages(given) == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "Look"}, png, png, png, {"type": "cache_point"}],
        }
    ]
    assert given == before  # the caller's messages are never changed


@pytest.mark.parametrize(
    ("part", "error"),
    [
        ({"type": "video", "url": "x"}, "messages[0].content[1].type: unknown part type 'video'"),
        ({"type": "image"}, "messages[0].content[1]: an image part needs either 'data'"),
        (
            {"type": "image", "data": PNG64, "url": "https://e.com/x.png"},
            "messages[0].content[1]: an image part needs either 'data'",
        ),
        ({"type": "image", "data": ""}, "messages[0].content[1].data: is empty"),
        ({"type": "image", "data": b""}, "messages[0].content[1].data: is empty"),
        ({"type": "image", "data": "not base64!"}, "messages[0].content[1].data: is not base64"),
        ({"type": "audio", "data": "abc"}, "messages[0].content[1].data: is not base64"),
        (
            {"type": "document", "data": base64.b64encode(b"plain").decode()},
            "messages[0].content[1].media_type: missing, and the data's first bytes do not show it",
        ),
        ({"type": "image", "url": "ftp://e.com/x.png"}, "messages[0].content[1].url: 'ftp://"),
        ({"type": "file"}, "messages[0].content[1].uri: a file part needs 'uri'"),
        ({"type": "text"}, "messages[0].content[1].text: a text part needs 'text'"),
        (
            {"type": "image", "data": PNG64, "media_type": "png"},
            "messages[0].content[1].media_type: 'png' is not a media type",
        ),
        ("just text", "messages[0].content[1]: a part must be a dict with a 'type', not str"),
    ],
)
def test_bad_parts_are_refused_naming_the_message_part_and_field(part: Any, error: str) -> None:
    with pytest.raises(InvalidRequestError) as info:
        validate_messages(user({"type": "text", "text": "Hi"}, part))
    assert str(info.value).startswith(error)


def test_system_messages_take_text_and_cache_points_only() -> None:
    ok = [{"role": "system", "content": [{"type": "text", "text": "S"}, {"type": "cache_point"}]}]
    assert validate_messages(ok) == ok
    with pytest.raises(
        InvalidRequestError, match=r"messages\[0\].content\[0\].type: 'image' parts"
    ):
        validate_messages([{"role": "system", "content": [image(PNG)]}])


def test_a_tool_list_is_parts_only_when_every_item_is_a_typed_part() -> None:
    assert is_parts([{"type": "text", "text": "x"}, image(PNG)])
    assert not is_parts([{"type": "text", "text": "x"}, {"name": "row"}])
    assert not is_parts([])
    assert not is_parts({"type": "image"})
    call = {"id": "c1", "name": "rows", "arguments": {}}
    data = tool_result(call, [{"type": "row", "n": 1}])
    assert validate_messages([{"role": "assistant", "content": None, "tool_calls": [call]}, data])[
        1
    ]["content"] == [{"type": "row", "n": 1}]


# --- what a provider accepts ------------------------------------------------------------------


def checked(provider: str, messages: list[dict[str, Any]]) -> None:
    spec = registry.get(provider)
    check_media(validate_messages(messages), spec.name, spec.traits.user, spec.traits.tool_results)


CALL = {"id": "c1", "name": "shot", "arguments": {}}


def tool_turn(*parts: Any) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        tool_result(CALL, list(parts)),
    ]


def test_media_a_tool_returns_are_checked_against_the_user_place_when_they_move() -> None:
    checked("openai", tool_turn(image(PNG)))  # moved to a user message, which takes images
    with pytest.raises(InvalidRequestError) as info:
        checked("groq", tool_turn({"type": "text", "text": "r"}, document(PDF)))
    assert str(info.value) == (
        "messages[2].content[1].type: groq does not take document parts in tool results (nor "
        "in a user message after them); it accepts text, image (image/png, image/jpeg, "
        "image/gif, image/webp, or a URL)"
    )


def test_media_types_and_file_uris_are_checked_against_the_row() -> None:
    with pytest.raises(InvalidRequestError) as info:
        checked("openai", user({"type": "image", "data": PNG64, "media_type": "image/tiff"}))
    assert str(info.value).startswith(
        "messages[0].content[0].media_type: openai does not take image/tiff in user messages"
    )
    with pytest.raises(InvalidRequestError) as info:
        checked("anthropic", user({"type": "file", "uri": "gs://b/x.pdf"}))
    assert str(info.value).startswith(
        "messages[0].content[0].type: anthropic does not take file parts in user messages"
    )
    with pytest.raises(InvalidRequestError) as info:
        checked("bedrock", user({"type": "file", "uri": "gs://b/x.pdf"}))
    assert str(info.value).startswith(
        "messages[0].content[0].uri: bedrock does not take 'gs' file URIs in user messages"
    )
    checked("bedrock", user({"type": "file", "uri": "s3://b/x.pdf"}))
    checked("openai", user({"type": "file", "uri": "file-abc123"}))


def test_the_message_index_counts_system_messages_as_the_caller_gave_them() -> None:
    from zerda.llm import create_interface

    llm = create_interface("groq", model="m", api_key="k", base_url="http://127.0.0.1:9")
    messages = [
        {"role": "system", "content": "S"},
        *user({"type": "text", "text": "x"}, document(PDF)),
    ]
    result = llm.generate(messages)
    assert result["error"]["message"].startswith("messages[1].content[1].type: groq does not take")


# --- media from tools, where tool messages cannot carry them -----------------------------------


def test_tool_media_move_to_one_user_message_after_the_turns_results() -> None:
    second = {"id": "c2", "name": "chart", "arguments": {}}
    history = validate_messages(
        [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": None, "tool_calls": [CALL, second]},
            tool_result(CALL, [{"type": "text", "text": "Screen:"}, image(PNG)]),
            tool_result(second, [image(PNG), document(PDF, name="c.pdf")]),
            {"role": "user", "content": "thanks"},
        ]
    )
    pdf = document(PDF, name="c.pdf")
    assert move_tool_media(history, registry.get("openai").traits.tool_results) == [
        history[0],
        history[1],
        {**history[2], "content": "Screen:\n[image: sent in the next user message]"},
        {**history[3], "content": "[image, document: sent in the next user message]"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "The tool call 'shot' (id c1) returned:"},
                image(PNG),
                {"type": "text", "text": "The tool call 'chart' (id c2) returned:"},
                image(PNG),
                pdf,
            ],
        },
        history[4],
    ]


def test_a_part_a_native_tool_result_cannot_take_moves_and_the_rest_stays() -> None:
    gif = {
        "type": "image",
        "data": base64.b64encode(b"GIF89a..").decode(),
        "media_type": "image/gif",
    }
    history = validate_messages(tool_turn(image(PNG), gif))
    moved = move_tool_media(history, registry.get("gemini").traits.tool_results)
    assert moved[2]["content"] == [
        image(PNG),
        {"type": "text", "text": "[image: sent in the next user message]"},
    ]
    assert moved[3] == {
        "role": "user",
        "content": [{"type": "text", "text": "The tool call 'shot' (id c1) returned:"}, gif],
    }


def test_results_without_media_are_left_alone() -> None:
    history = validate_messages(tool_turn({"type": "text", "text": "plain"}))
    assert move_tool_media(history, registry.get("ollama").traits.tool_results) == history


def test_base64_text_is_plain_json_and_hands_the_callers_bytes_back() -> None:
    import json

    from zerda.llm.parts import b64decode

    part = image(PNG)
    assert json.loads(json.dumps(part)) == {
        "type": "image",
        "data": PNG64,
        "media_type": "image/png",
    }
    assert b64decode(part["data"]) is PNG  # no decoded copy for boto3 / google-genai
    assert b64decode(PNG64) == PNG  # base64 text from a stored history is decoded
