"""The multimodal recorded exchanges (``features`` holds "multimodal") under
../shared/fixtures/recorded: every media part a real request carried, read back as a Zerda
part, passes Zerda's checks for that provider (where the API answered 200) and maps to
exactly the recorded native part; and every recorded response parses through Zerda."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from zerda.llm import registry
from zerda.llm.parts import check_parts, media_problem
from zerda.llm.providers import anthropic, aws, gemini, mistral
from zerda.llm.wires.openai import compat as _openai_compat
from zerda.testing import MockLLMServer

RECORDED = Path(__file__).resolve().parents[3] / ".." / "shared" / "fixtures" / "recorded"
PROVIDERS = ("openai", "groq", "mistral", "anthropic", "bedrock", "gemini")  # Ollama has none


def _fixtures() -> list[Any]:
    files = [f for p in PROVIDERS for f in sorted((RECORDED / p).glob("*.json"))]
    chosen = [f for f in files if "multimodal" in json.loads(f.read_text()).get("features", [])]
    if not chosen:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{RECORDED} is absent"))]
    return [pytest.param(f, id=f"{f.parent.name}/{f.stem}") for f in chosen]


FIXTURES = _fixtures()


def _data_url(url: str) -> dict[str, Any]:
    head, _, data = url.partition(",")
    return {"data": data, "media_type": head[5:].removesuffix(";base64")}


# --- native part -> (Zerda part, what Zerda must send), per wire ---------------------------------


def _openai(native: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    kind = native.get("type")
    if kind == "image_url":
        url = native["image_url"]["url"]
        part = {"type": "image", **(_data_url(url) if url.startswith("data:") else {"url": url})}
        expected = {"type": "image_url", "image_url": {"url": url}}  # "detail" is not modelled
        return part, expected
    if kind == "input_audio":
        media_type = {"wav": "audio/wav", "mp3": "audio/mpeg"}[native["input_audio"]["format"]]
        return {
            "type": "audio",
            "data": native["input_audio"]["data"],
            "media_type": media_type,
        }, native
    if kind == "file" and "file_id" in native["file"]:
        return {"type": "file", "uri": native["file"]["file_id"]}, native
    if kind == "file":
        data = _data_url(native["file"]["file_data"])
        return {"type": "document", **data, "name": native["file"]["filename"]}, native
    return None


def _mistral(native: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    kind = native.get("type")
    if kind == "image_url":
        url = (
            native["image_url"]["url"]
            if isinstance(native["image_url"], dict)
            else native["image_url"]
        )
        part = {"type": "image", **(_data_url(url) if url.startswith("data:") else {"url": url})}
        return part, {"type": "image_url", "image_url": {"url": url}}
    if kind == "document_url":
        url = native["document_url"]
        part = {"type": "document", **(_data_url(url) if url.startswith("data:") else {"url": url})}
        if native.get("document_name"):
            part["name"] = native["document_name"]
        return part, native
    if kind == "input_audio":
        return {"type": "audio", "data": native["input_audio"], "media_type": "audio/mpeg"}, native
    return None


def _anthropic(native: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    if native.get("type") not in ("image", "document"):
        return None
    source = native["source"]
    if source["type"] == "url":
        part: dict[str, Any] = {"type": native["type"], "url": source["url"]}
    elif source["type"] == "base64":
        part = {"type": native["type"], "data": source["data"], "media_type": source["media_type"]}
    elif source["type"] == "text":
        data = base64.b64encode(source["data"].encode()).decode()
        part = {"type": "document", "data": data, "media_type": "text/plain"}
    else:  # Files API ids: not modelled by Zerda
        return None
    if native.get("title"):
        part["name"] = native["title"]
    return part, {k: v for k, v in native.items() if k not in ("cache_control", "citations")}


def _bedrock(native: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    kind = next((k for k in ("image", "document", "audio") if k in native), None)
    if kind is None:
        return None
    block = native[kind]
    media_type = {**_BEDROCK_TYPES[kind]}[block["format"]]
    if "s3Location" in block["source"]:
        part: dict[str, Any] = {"type": "file", "uri": block["source"]["s3Location"]["uri"]}
    else:
        part = {"type": kind, "data": block["source"]["bytes"]}
    part["media_type"] = media_type
    if kind == "document":
        part["name"] = block["name"]
    return part, native


_BEDROCK_TYPES = {
    "image": {v: k for k, v in aws._IMAGE_FORMATS.items()},
    "document": {v: k for k, v in aws._DOCUMENT_FORMATS.items()},
    "audio": {v: k for k, v in aws._AUDIO_FORMATS.items()},
}


def _gemini(native: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    blob = native.get("inline_data") or native.get("inlineData")
    if blob is not None:
        media_type = blob.get("mime_type") or blob.get("mimeType")
        raw = base64.urlsafe_b64decode(blob["data"].replace("+", "-").replace("/", "_"))
        data = base64.b64encode(raw).decode()
        part = {"type": _kind(media_type), "data": data, "media_type": media_type}
        # Zerda writes the REST body (issue 12): the part's standard base64 as it is, which
        # the API takes as it takes google-genai's URL-safe form (protobuf JSON, bytes).
        return part, {"inlineData": {"data": data, "mime_type": media_type}}
    file_data = native.get("file_data") or native.get("fileData")
    if file_data is None:
        return None
    uri = file_data.get("file_uri") or file_data.get("fileUri")
    media_type = file_data.get("mime_type") or file_data.get("mimeType")
    provider_hosted = uri.startswith(("gs://", "https://generativelanguage.googleapis.com/"))
    part = (
        {"type": "file", "uri": uri} if provider_hosted else {"type": _kind(media_type), "url": uri}
    )
    return {**part, "media_type": media_type}, {
        "fileData": {"file_uri": uri, "mime_type": media_type}
    }


def _kind(media_type: str) -> str:
    major = media_type.partition("/")[0]
    return {"image": "image", "audio": "audio", "video": "video"}.get(major, "document")


# --- where the parts sit in each wire's request ---------------------------------------------------


def _media_places(provider: str, body: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """("user" | "tool", native part) for every part of the recorded request."""
    if provider == "gemini":
        for content in body.get("contents", []):
            for part in content.get("parts", []):
                response = part.get("function_response") or part.get("functionResponse")
                for inner in (response or {}).get("parts", []):
                    yield "tool", inner
                if response is None:
                    yield "user", part
        return
    for message in body.get("messages", []):
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, list):
            continue
        for block in content:
            inner = block.get("toolResult", {}).get("content") if provider == "bedrock" else None
            if provider == "anthropic" and block.get("type") == "tool_result":
                inner = block.get("content")
            if isinstance(inner, list):
                yield from (("tool", b) for b in inner)
            else:
                yield "user", block


READERS = {
    "openai": _openai,
    "groq": _openai,
    "mistral": _mistral,
    "anthropic": _anthropic,
    "bedrock": _bedrock,
    "gemini": _gemini,
}


def _zerda_native(provider: str, part: dict[str, Any]) -> dict[str, Any]:
    """What Zerda's mapping sends for one checked part (bytes as boto3 puts them on the wire)."""
    if provider in ("openai", "groq"):
        return _openai_compat._map_part(part)
    if provider == "mistral":
        return mistral._map_part(part)
    if provider == "anthropic":
        return anthropic._map_part(part)[0]
    if provider == "bedrock":
        block = aws._map_media(part, 1)
        kind = next(iter(block))
        source = block[kind]["source"]
        if "bytes" in source:
            block = {
                kind: {
                    **block[kind],
                    "source": {"bytes": base64.b64encode(source["bytes"]).decode()},
                }
            }
        return block
    return gemini._map_part(part)


def _recorded_parts(
    provider: str, fixture: dict[str, Any]
) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(place, Zerda part, the native part Zerda must send) for every media part Zerda
    models (not text, video or Anthropic Files API ids)."""
    for place, native in _media_places(provider, fixture["request"]["body"]):
        read = READERS[provider](native)
        if read is not None and read[0]["type"] != "video":
            yield place, *read


@pytest.mark.parametrize("path", FIXTURES)
def test_recorded_media_parts_are_accepted_and_sent_as_recorded(path: Path) -> None:
    fixture = json.loads(path.read_text())
    provider = path.parent.name
    traits = registry.get(provider).traits
    for place, part, expected in _recorded_parts(provider, fixture):
        [checked] = check_parts("part", [part])
        if fixture["response"]["status"] == 200:  # what the real API took, Zerda accepts
            native = traits.tool_results if place == "tool" else traits.user
            moved = place == "tool" and media_problem(native, checked) is not None
            assert media_problem(traits.user if moved else native, checked) is None
        assert _zerda_native(provider, checked) == expected


def test_every_provider_with_recordings_has_media_parts_checked() -> None:
    if FIXTURES[0].values[0] is None:
        pytest.skip(f"{RECORDED} is absent")
    counts = dict.fromkeys(PROVIDERS, 0)
    for param in FIXTURES:
        path = param.values[0]
        fixture = json.loads(path.read_text())
        counts[path.parent.name] += len(list(_recorded_parts(path.parent.name, fixture)))
    assert all(n > 0 for n in counts.values()), counts


# --- the responses parse through Zerda ---------------------------------------------------------


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
MESSAGE = [
    {
        "role": "user",
        "content": [{"type": "text", "text": "What is this?"}, {"type": "image", "data": PNG}],
    }
]


@pytest.mark.parametrize("path", FIXTURES)
def test_recorded_multimodal_responses_parse(
    server: MockLLMServer, interfaces: Callable[..., Any], path: Path
) -> None:
    fixture = json.loads(path.read_text())
    provider = path.parent.name
    if "enum-encoding=int" in str((fixture["request"].get("query") or {}).get("$alt", "")):
        pytest.skip("integer enums: a form only the Go SDK asks for (see test_recorded_replay)")
    server.reset()
    server.enqueue_recorded(fixture, provider)
    llm = interfaces(provider, max_retries=0)  # one per provider, for every recording
    if fixture.get("streaming"):
        result = list(llm.stream(MESSAGE))[-1]["result"]
    else:
        result = llm.generate(MESSAGE)
    derived = fixture["derived"]
    if fixture["response"]["status"] >= 400:
        assert result["stop_reason"] == "error"
        assert result["error"]["status_code"] == fixture["response"]["status"]
        return
    assert result["stop_reason"] != "error", result.get("error")
    assert (result["content"] or "") == derived.get("text", "")
    assert [c["name"] for c in result["tool_calls"]] == [
        c["name"] for c in derived.get("tool_calls") or []
    ]
