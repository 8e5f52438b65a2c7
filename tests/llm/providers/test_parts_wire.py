"""Content parts on the wire: the exact request body each real SDK sent to MockLLMServer for
text + image + PDF, an image URL, audio, an image returned by a tool and cache points, on
all seven providers; parts a provider cannot take refused with nothing sent; and histories
holding images continued on every provider, re-sent in the receiver's shape."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest

from tests.llm.providers.histories import PRODUCERS, TOOLS, history_from
from zerda.llm import audio, create_interface, document, image, registry, tool_result
from zerda.llm.registry import NAMES
from zerda.testing import MockLLMServer

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
PDF = b"%PDF-1.4\n%%EOF\n"
MP3 = b"ID3\x04\x00\x00\x00\x00\x00\x00"
PNG64 = base64.b64encode(PNG).decode()
PDF64 = base64.b64encode(PDF).decode()
MP364 = base64.b64encode(MP3).decode()
# Gemini gets the part's standard base64 as it is (google-genai writes URL-safe base64;
# the API's protobuf JSON takes either for a bytes field): no copy of the text is made.
CALL = {"id": "call_1", "name": "screenshot", "arguments": {}}
SCREENSHOT = [{"name": "screenshot"}]


# What ``sent`` and ``refused`` call through, by row: made once for the module's server (an
# SDK client costs more to build than the call), closed with it.
_MADE: dict[str, Any] = {}


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s
        for llm in _MADE.values():
            llm.close()
        _MADE.clear()


def _made(server: MockLLMServer, provider: str) -> Any:
    if provider not in _MADE:
        options = server.client_options(provider)
        _MADE[provider] = create_interface(provider, model="m", max_retries=0, **options)
    return _MADE[provider]


def sent(server: MockLLMServer, provider: str, messages: Any, **kwargs: Any) -> dict[str, Any]:
    """The body the provider's SDK sent for one generate call (which must succeed)."""
    server.reset()
    server.set_default(text="ok")
    llm = _made(server, provider)
    result = llm.generate(messages, raise_errors=True, **kwargs)
    assert result["content"] == "ok"
    body: dict[str, Any] = server.last_request(provider).body
    return body


def refused(server: MockLLMServer, provider: str, messages: Any) -> str:
    """The invalid_request message for ``messages``, checking that nothing was sent."""
    server.reset()
    llm = _made(server, provider)
    result = llm.generate(messages)
    assert result["stop_reason"] == "error" and result["error"]["type"] == "invalid_request"
    assert server.requests == []
    message: str = result["error"]["message"]
    return message


# --- text + image + PDF --------------------------------------------------------------------


def mixed(provider: str) -> list[dict[str, Any]]:
    parts = [{"type": "text", "text": "What is this?"}, image(PNG)]
    if provider not in ("groq", "ollama"):  # they take no PDF (refusals below)
        parts.append(document(PDF, name="report.pdf"))
    return [{"role": "user", "content": parts}]


OPENAI_MIXED = [
    {"type": "text", "text": "What is this?"},
    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG64}"}},
    {
        "type": "file",
        "file": {"filename": "report.pdf", "file_data": f"data:application/pdf;base64,{PDF64}"},
    },
]
MIXED_BODIES: dict[str, dict[str, Any]] = {
    "openai": {"model": "m", "messages": [{"role": "user", "content": OPENAI_MIXED}]},
    "groq": {"messages": [{"role": "user", "content": OPENAI_MIXED[:2]}], "model": "m"},
    "mistral": {
        "model": "m",
        "messages": [
            {
                "content": [
                    {"text": "What is this?", "type": "text"},
                    {"image_url": {"url": f"data:image/png;base64,{PNG64}"}, "type": "image_url"},
                    {
                        "document_url": f"data:application/pdf;base64,{PDF64}",
                        "type": "document_url",
                        "document_name": "report.pdf",
                    },
                ],
                "role": "user",
            }
        ],
        "stream": False,
    },
    "ollama": {
        "model": "m",
        "messages": [{"role": "user", "content": "What is this?", "images": [PNG64]}],
        "stream": False,
    },
    "anthropic": {
        "max_tokens": 4096,
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is this?"},
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": PNG64},
                    },
                    {
                        "type": "document",
                        "source": {
                            "type": "base64",
                            "media_type": "application/pdf",
                            "data": PDF64,
                        },
                        "title": "report.pdf",
                    },
                ],
            }
        ],
        "model": "m",
    },
    "bedrock": {
        "messages": [
            {
                "role": "user",
                "content": [
                    {"text": "What is this?"},
                    {"image": {"format": "png", "source": {"bytes": PNG64}}},
                    {"document": {"name": "report", "format": "pdf", "source": {"bytes": PDF64}}},
                ],
            }
        ]
    },
    "gemini": {
        "contents": [
            {
                "parts": [
                    {"text": "What is this?"},
                    {"inlineData": {"data": PNG64, "mime_type": "image/png"}},
                    {"inlineData": {"data": PDF64, "mime_type": "application/pdf"}},
                ],
                "role": "user",
            }
        ],
        "generationConfig": {},
    },
}


# Rows that take media (registry traits); the rest refuse them (tests/llm/test_endpoints.py
# checks that rows sharing a shape send these same bodies).
MEDIA_ROWS = [n for n in NAMES if registry.get(n).traits.user.parts]


@pytest.mark.parametrize("provider", sorted(MIXED_BODIES))
def test_text_image_and_pdf_in_a_user_message(server: MockLLMServer, provider: str) -> None:
    assert sent(server, provider, mixed(provider)) == MIXED_BODIES[provider]


# --- an image URL ---------------------------------------------------------------------------

CAT = "https://example.com/cat.png"
URL_MESSAGE = [{"role": "user", "content": [{"type": "text", "text": "And this?"}, image(CAT)]}]
OPENAI_URL = [
    {"type": "text", "text": "And this?"},
    {"type": "image_url", "image_url": {"url": CAT}},
]
URL_BODIES: dict[str, dict[str, Any]] = {
    "openai": {"model": "m", "messages": [{"role": "user", "content": OPENAI_URL}]},
    "groq": {"messages": [{"role": "user", "content": OPENAI_URL}], "model": "m"},
    "mistral": {
        "model": "m",
        "messages": [
            {
                "content": [
                    {"text": "And this?", "type": "text"},
                    {"image_url": {"url": CAT}, "type": "image_url"},
                ],
                "role": "user",
            }
        ],
        "stream": False,
    },
    "anthropic": {
        "max_tokens": 4096,
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "And this?"},
                    {"type": "image", "source": {"type": "url", "url": CAT}},
                ],
            }
        ],
        "model": "m",
    },
    "gemini": {
        "contents": [
            {
                "parts": [
                    {"text": "And this?"},
                    {"fileData": {"file_uri": CAT, "mime_type": "image/png"}},
                ],
                "role": "user",
            }
        ],
        "generationConfig": {},
    },
}


@pytest.mark.parametrize("provider", sorted(URL_BODIES))
def test_an_image_url(server: MockLLMServer, provider: str) -> None:
    assert sent(server, provider, URL_MESSAGE) == URL_BODIES[provider]


@pytest.mark.parametrize("provider", ["bedrock", "ollama"])
def test_an_image_url_is_refused_where_the_provider_fetches_none(
    server: MockLLMServer, provider: str
) -> None:
    message = refused(server, provider, URL_MESSAGE)
    assert message.startswith(
        f"messages[0].content[1].url: {provider} does not take image URLs (it fetches none: "
        "send the bytes as 'data') in user messages; it accepts text, "
    )


# --- audio ----------------------------------------------------------------------------------

AUDIO_MESSAGE = [{"role": "user", "content": [{"type": "text", "text": "Transcribe."}, audio(MP3)]}]
AUDIO_BODIES: dict[str, dict[str, Any]] = {
    "openai": {
        "model": "m",
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Transcribe."},
                    {"type": "input_audio", "input_audio": {"data": MP364, "format": "mp3"}},
                ],
            }
        ],
    },
    "mistral": {
        "model": "m",
        "messages": [
            {
                "content": [
                    {"text": "Transcribe.", "type": "text"},
                    {"input_audio": MP364, "type": "input_audio"},
                ],
                "role": "user",
            }
        ],
        "stream": False,
    },
    "bedrock": {
        "messages": [
            {
                "role": "user",
                "content": [
                    {"text": "Transcribe."},
                    {"audio": {"format": "mp3", "source": {"bytes": MP364}}},
                ],
            }
        ]
    },
    "gemini": {
        "contents": [
            {
                "parts": [
                    {"text": "Transcribe."},
                    {"inlineData": {"data": MP364, "mime_type": "audio/mpeg"}},
                ],
                "role": "user",
            }
        ],
        "generationConfig": {},
    },
}


@pytest.mark.parametrize("provider", sorted(AUDIO_BODIES))
def test_audio_in_a_user_message(server: MockLLMServer, provider: str) -> None:
    assert sent(server, provider, AUDIO_MESSAGE) == AUDIO_BODIES[provider]


@pytest.mark.parametrize(
    ("provider", "accepts"),
    [
        ("anthropic", "text, document (application/pdf, text/plain, or a URL); image ("),
        ("groq", "text, image (image/png, image/jpeg, image/gif, image/webp, or a URL)"),
        ("ollama", "text, image (image/png, image/jpeg, image/gif, image/webp)"),
    ],
)
def test_audio_is_refused_naming_what_the_provider_accepts(
    server: MockLLMServer, provider: str, accepts: str
) -> None:
    message = refused(server, provider, AUDIO_MESSAGE)
    assert message.startswith(
        f"messages[0].content[1].type: {provider} does not take audio parts in user messages; "
        f"it accepts {accepts}"
    )


@pytest.mark.parametrize("provider", ["groq", "ollama"])
def test_a_pdf_is_refused_on_groq_and_ollama(server: MockLLMServer, provider: str) -> None:
    messages = [{"role": "user", "content": [{"type": "text", "text": "Hi"}, document(PDF)]}]
    message = refused(server, provider, messages)
    assert message.startswith(
        f"messages[0].content[1].type: {provider} does not take document parts in user messages"
    )


# --- an image returned by a tool --------------------------------------------------------------

TOOL_HISTORY = [
    {"role": "user", "content": "Take a screenshot."},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    tool_result(CALL, [{"type": "text", "text": "Here it is."}, image(PNG)]),
]
OPENAI_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "screenshot",
            "description": "",
            "parameters": {"type": "object", "properties": {}},
        },
    }
]
NOTE = "Here it is.\n[image: sent in the next user message]"


def _openai_tool_turn(call_id: str) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "Take a screenshot."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "screenshot", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call_id, "content": NOTE},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": f"The tool call 'screenshot' (id {call_id}) returned:"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG64}"}},
            ],
        },
    ]


TOOL_BODIES: dict[str, dict[str, Any]] = {
    "openai": {"model": "m", "messages": _openai_tool_turn("call_1"), "tools": OPENAI_TOOLS},
    "groq": {"messages": _openai_tool_turn("call_1"), "model": "m", "tools": OPENAI_TOOLS},
    "mistral": {
        "model": "m",
        "messages": [
            {"content": "Take a screenshot.", "role": "user"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "function": {"name": "screenshot", "arguments": "{}"},
                        "id": "Bu09e4fdz",
                        "type": "function",
                        "index": 0,
                    }
                ],
                "prefix": False,
            },
            {"content": NOTE, "role": "tool", "tool_call_id": "Bu09e4fdz", "name": "screenshot"},
            # Mistral refuses a user message right after a tool message.
            {"role": "assistant", "content": "OK.", "prefix": False},
            {
                "content": [
                    {"text": "The tool call 'screenshot' (id Bu09e4fdz) returned:", "type": "text"},
                    {"image_url": {"url": f"data:image/png;base64,{PNG64}"}, "type": "image_url"},
                ],
                "role": "user",
            },
        ],
        "stream": False,
        "tools": [
            {
                "function": {
                    "name": "screenshot",
                    "parameters": {"type": "object", "properties": {}},
                    "description": "",
                },
                "type": "function",
            }
        ],
    },
    "ollama": {
        "model": "m",
        "messages": [
            {"role": "user", "content": "Take a screenshot."},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"function": {"name": "screenshot", "arguments": {}}, "id": "call_1"}
                ],
            },
            {"role": "tool", "content": NOTE, "tool_name": "screenshot", "tool_call_id": "call_1"},
            {
                "role": "user",
                "content": "The tool call 'screenshot' (id call_1) returned:",
                "images": [PNG64],
            },
        ],
        "tools": OPENAI_TOOLS,
        "stream": False,
    },
    "anthropic": {
        "max_tokens": 4096,
        "messages": [
            {"role": "user", "content": "Take a screenshot."},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "call_1", "name": "screenshot", "input": {}}
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "call_1",
                        "content": [
                            {"type": "text", "text": "Here it is."},
                            {
                                "type": "image",
                                "source": {
                                    "type": "base64",
                                    "media_type": "image/png",
                                    "data": PNG64,
                                },
                            },
                        ],
                    }
                ],
            },
        ],
        "model": "m",
        "tools": [
            {
                "name": "screenshot",
                "description": "",
                "input_schema": {"type": "object", "properties": {}},
            }
        ],
    },
    "bedrock": {
        "messages": [
            {"role": "user", "content": [{"text": "Take a screenshot."}]},
            {
                "role": "assistant",
                "content": [
                    {"toolUse": {"toolUseId": "call_1", "name": "screenshot", "input": {}}}
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "toolResult": {
                            "toolUseId": "call_1",
                            "content": [
                                {"text": "Here it is."},
                                {"image": {"format": "png", "source": {"bytes": PNG64}}},
                            ],
                        }
                    }
                ],
            },
        ],
        "toolConfig": {
            "tools": [
                {
                    "toolSpec": {
                        "name": "screenshot",
                        "inputSchema": {"json": {"type": "object", "properties": {}}},
                    }
                }
            ]
        },
    },
    "gemini": {
        "contents": [
            {"parts": [{"text": "Take a screenshot."}], "role": "user"},
            {
                "parts": [
                    {
                        "functionCall": {"id": "call_1", "args": {}, "name": "screenshot"},
                        "thoughtSignature": "skip_thought_signature_validator",
                    }
                ],
                "role": "model",
            },
            {
                "parts": [
                    {
                        "functionResponse": {
                            "parts": [{"inline_data": {"mime_type": "image/png", "data": PNG64}}],
                            "id": "call_1",
                            "name": "screenshot",
                            "response": {"result": "Here it is."},
                        }
                    }
                ],
                "role": "user",
            },
        ],
        "tools": [
            {
                "functionDeclarations": [
                    {
                        "description": "",
                        "name": "screenshot",
                        "parameters": {"properties": {}, "type": "OBJECT"},
                    }
                ]
            }
        ],
        "generationConfig": {},
    },
}


@pytest.mark.parametrize("provider", sorted(TOOL_BODIES))
def test_an_image_returned_by_a_tool(server: MockLLMServer, provider: str) -> None:
    assert sent(server, provider, TOOL_HISTORY, tools=SCREENSHOT) == TOOL_BODIES[provider]


# --- cache points -------------------------------------------------------------------------------

CACHE_MESSAGE = [
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "Long context."},
            {"type": "cache_point"},
            {"type": "text", "text": "Question?"},
        ],
    }
]
SYSTEM = [{"type": "text", "text": "Be brief."}, {"type": "cache_point"}]
EPHEMERAL = {"type": "ephemeral"}
CACHE_POINT = {"cachePoint": {"type": "default"}}


def test_cache_points_on_anthropic_are_cache_control_on_the_block_before(
    server: MockLLMServer,
) -> None:
    assert sent(server, "anthropic", CACHE_MESSAGE, system=SYSTEM) == {
        "max_tokens": 4096,
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Long context.", "cache_control": EPHEMERAL},
                    {"type": "text", "text": "Question?"},
                ],
            }
        ],
        "model": "m",
        "system": [{"type": "text", "text": "Be brief.", "cache_control": EPHEMERAL}],
    }


def test_cache_points_on_bedrock_are_cache_point_blocks(server: MockLLMServer) -> None:
    assert sent(server, "bedrock", CACHE_MESSAGE, system=SYSTEM) == {
        "messages": [
            {
                "role": "user",
                "content": [{"text": "Long context."}, CACHE_POINT, {"text": "Question?"}],
            }
        ],
        "system": [{"text": "Be brief."}, CACHE_POINT],
    }


def test_cache_true_marks_tools_system_and_the_last_user_turn(server: MockLLMServer) -> None:
    history = [*TOOL_HISTORY[:2], tool_result(CALL, "done")]
    anthropic = sent(server, "anthropic", history, system="Be brief.", tools=SCREENSHOT, cache=True)
    assert anthropic["system"] == [
        {"type": "text", "text": "Be brief.", "cache_control": EPHEMERAL}
    ]
    assert anthropic["tools"][-1]["cache_control"] == EPHEMERAL
    assert anthropic["messages"][-1] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "call_1",
                "content": "done",
                "cache_control": EPHEMERAL,
            }
        ],
    }
    bedrock = sent(server, "bedrock", history, system="Be brief.", tools=SCREENSHOT, cache=True)
    assert bedrock["system"] == [{"text": "Be brief."}, CACHE_POINT]
    assert bedrock["toolConfig"]["tools"][-1] == CACHE_POINT
    assert bedrock["messages"][-1] == {
        "role": "user",
        "content": [
            {"toolResult": {"toolUseId": "call_1", "content": [{"text": "done"}]}},
            CACHE_POINT,
        ],
    }


def test_a_cache_point_the_caller_placed_is_not_doubled_by_cache_true(
    server: MockLLMServer,
) -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "Q"}, {"type": "cache_point"}]}
    ]
    body = sent(server, "bedrock", messages, system=SYSTEM, cache=True)
    assert body["system"] == [{"text": "Be brief."}, CACHE_POINT]
    assert body["messages"] == [{"role": "user", "content": [{"text": "Q"}, CACHE_POINT]}]


@pytest.mark.parametrize("provider", ["openai", "groq", "mistral", "ollama", "gemini"])
def test_cache_points_are_ignored_where_caching_is_automatic(
    server: MockLLMServer, provider: str
) -> None:
    plain = [{"role": "user", "content": "Long context."}]
    with_points = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "Long context."}, {"type": "cache_point"}],
        }
    ]
    expected = sent(server, provider, plain, system="Be brief.")
    assert sent(server, provider, with_points, system=SYSTEM, cache=True) == _as_parts(
        provider, expected
    )


def _as_parts(provider: str, body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with its last user content sent as a list of one text part, as a parts list
    is sent (Ollama and Gemini send text parts as they send text)."""
    if provider in ("ollama", "gemini"):
        return body
    messages = [*body["messages"]]
    text_part = {"type": "text", "text": messages[-1]["content"]}
    if provider == "mistral":
        text_part = {"text": messages[-1]["content"], "type": "text"}
    messages[-1] = {**messages[-1], "content": [text_part]}
    return {**body, "messages": messages}


def test_anthropic_refuses_more_than_four_cache_points(server: MockLLMServer) -> None:
    point = {"type": "cache_point"}
    content = [p for i in range(5) for p in ({"type": "text", "text": f"t{i}"}, point)]
    message = refused(server, "anthropic", [{"role": "user", "content": content}])
    assert message == (
        "anthropic takes at most 4 cache points in a request (cache_control blocks: tools, "
        "system and messages); this one has 5"
    )


# --- histories holding images continue on every provider ---------------------------------------


def with_images(producer: str) -> list[dict[str, Any]]:
    """``producer``'s history with an image in the first user turn and one returned by the
    first tool call."""
    history = history_from(producer)
    history[1] = {
        "role": "user",
        "content": [{"type": "text", "text": history[1]["content"]}, image(PNG)],
    }
    history[3] = {**history[3], "content": [{"type": "text", "text": "18C"}, image(PNG)]}
    return history


def images_sent(provider: str, body: dict[str, Any]) -> list[str]:
    """The images a request body carries, as base64 (or data URL) text, in order."""
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if provider == "ollama" and "images" in node:
                found.extend(node["images"])
            url = (
                (node.get("image_url") or {}).get("url")
                if isinstance(node.get("image_url"), dict)
                else None
            )
            if url:
                found.append(url)
            if node.get("type") == "input_image":  # the Responses API's flat image_url
                found.append(node["image_url"])
            source = node.get("source") if node.get("type") == "image" else None
            if isinstance(source, dict) and "data" in source:
                found.append(source["data"])
            if isinstance(node.get("image"), dict):
                found.append(node["image"]["source"]["bytes"])
            blob = node.get("inlineData") or node.get("inline_data")
            if isinstance(blob, dict):
                found.append(blob["data"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(body)
    return found


RECEIVER_IMAGE = {
    "openai": f"data:image/png;base64,{PNG64}",
    "groq": f"data:image/png;base64,{PNG64}",
    "mistral": f"data:image/png;base64,{PNG64}",
    "ollama": PNG64,
    "anthropic": PNG64,
    "bedrock": PNG64,
    "gemini": PNG64,
}
# The rows added on existing shapes, and the Responses API's data URLs.
RECEIVER_IMAGE |= {
    "openai-responses": RECEIVER_IMAGE["openai"],
    "azure": RECEIVER_IMAGE["openai"],
    "azure-responses": RECEIVER_IMAGE["openai"],
    "anthropic-bedrock": RECEIVER_IMAGE["anthropic"],
    "anthropic-vertex": RECEIVER_IMAGE["anthropic"],
    "vertex": RECEIVER_IMAGE["gemini"],
}
# The OpenAI-compatible rows that take images: OpenAI's image_url data URLs.
RECEIVER_IMAGE |= {
    n: RECEIVER_IMAGE["openai"]
    for n in NAMES
    if registry.get(n).cls == registry.get("openai").cls and registry.get(n).traits.user.parts
}


@pytest.mark.parametrize("receiver", MEDIA_ROWS)
@pytest.mark.parametrize("producer", PRODUCERS)
def test_a_history_with_images_continues_on_every_provider(
    server: MockLLMServer, producer: str, receiver: str
) -> None:
    body = sent(server, receiver, with_images(producer), tools=TOOLS)
    # Both images re-sent in the receiver's own shape: the user's and the tool's.
    assert images_sent(receiver, body) == [RECEIVER_IMAGE[receiver]] * 2


# --- stream, async and the tool loop send the same parts ------------------------------------------


@pytest.mark.parametrize("provider", MEDIA_ROWS)
async def test_stream_and_generate_async_send_the_parts_generate_sends(
    server: MockLLMServer, provider: str
) -> None:
    expected = sent(server, provider, TOOL_HISTORY, tools=SCREENSHOT)
    llm = create_interface(provider, model="m", max_retries=0, **server.client_options(provider))
    server.reset()
    server.set_default(text="ok")
    assert (await llm.generate_async(TOOL_HISTORY, tools=SCREENSHOT))["content"] == "ok"
    assert server.last_request(provider).body == expected
    server.reset()
    server.set_default(text="ok")
    events = list(llm.stream(TOOL_HISTORY, tools=SCREENSHOT))
    assert events[-1]["result"]["content"] == "ok"
    streamed = server.last_request(provider).body
    assert _messages_of(streamed) == _messages_of(expected)


def _messages_of(body: dict[str, Any]) -> Any:
    return body.get("messages") or body.get("contents") or body.get("input")


def test_run_sends_the_media_a_python_tool_returns(server: MockLLMServer) -> None:
    def screenshot() -> list[dict[str, Any]]:
        """Takes a screenshot."""
        return [{"type": "text", "text": "Here it is."}, image(PNG)]

    server.reset()
    server.enqueue(
        "anthropic", tool_calls=[{"id": "toolu_1", "name": "screenshot", "arguments": {}}]
    )
    server.enqueue("anthropic", text="A blank screen.")
    llm = create_interface("anthropic", model="m", **server.client_options("anthropic"))
    result = llm.run("What is on my screen?", tools=[screenshot])
    assert result["content"] == "A blank screen."
    last = server.last_request("anthropic").body["messages"][-1]
    assert last == TOOL_BODIES["anthropic"]["messages"][-1] | {
        "content": [
            {**TOOL_BODIES["anthropic"]["messages"][-1]["content"][0], "tool_use_id": "toolu_1"}
        ]
    }


def test_older_gemini_models_get_media_from_tools_in_a_user_message(
    server: MockLLMServer,
) -> None:
    server.reset()
    server.set_default(text="ok")
    options = server.client_options("gemini")
    llm = create_interface("gemini", model="gemini-2.5-flash", max_retries=0, **options)
    assert llm.generate(TOOL_HISTORY, tools=SCREENSHOT)["content"] == "ok"
    contents = server.last_request("gemini").body["contents"]
    assert contents[2:] == [
        {
            "parts": [
                {
                    "functionResponse": {
                        "id": "call_1",
                        "name": "screenshot",
                        "response": {"result": NOTE},
                    }
                },
                {"text": "The tool call 'screenshot' (id call_1) returned:"},
                {"inlineData": {"data": PNG64, "mime_type": "image/png"}},
            ],
            "role": "user",
        }
    ]
