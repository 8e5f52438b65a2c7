"""An image is encoded once and never copied whole again (issue 37): on every wire, sending
a 2 MiB image makes one base64 encoding of it, and the client's peak memory while wrapping
and sending it stays within a bound of its base64 text's size. Counted, not timed.

The mock server runs in another process, so that its reading of the request is not counted
(as benchmarks/bench_image.py measures it). The bound is generous: the part's text itself
(1x, the history holds it) with the bytes of its one encoding (2x), then its slices as
they are sent (or the body's bytes, written a slice at a time), and, for the clients that
encode the body themselves, what they write; a data URL, a URL-safe copy or JSON text built
whole beside them, as before, made 3x to 4x.
"""

from __future__ import annotations

import asyncio
import base64
import subprocess
import sys
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from zerda.llm import create_interface, image, registry
from zerda.testing import MockLLMServer

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8192  # 2 MiB
TEXT = len(base64.b64encode(PNG))
LARGE = 1 << 20  # an encoding of 1 MiB or more is one of the payload's

# The first row of every wire that takes images in user messages (the registry's order).
ROWS: dict[str, str] = {}
for _name in registry.NAMES:
    _spec = registry.get(_name)
    if "image" in _spec.traits.user.parts:
        ROWS.setdefault(_spec.wire, _name)

# The peak allowed, in base64 texts of the image: the part's text (the history holds it)
# with the transient bytes of its one encoding (2x), then its slices as they are sent.
ZERDA_WRITES = 2.4
# Where the SDK writes the JSON itself, its text and bytes come on top of the part's text:
# Vertex AI with Google Cloud credentials (google-genai's sync sender writes its request's
# dict itself); a client that routes requests by their JSON body (Azure's deployments, the
# Anthropic cloud clients) gets the body as JSON, Azure's with its data URL as a string
# (one copy more), as before issue 37.
SDK_WRITES = {
    "vertex": 3.1,
    "azure": 4.1,
    "azure-responses": 4.1,
    "anthropic-bedrock": 4.1,
    "anthropic-vertex": 4.1,
}

_SERVER = """
import sys
from zerda.testing import MockLLMServer
with MockLLMServer() as server:
    server.set_default(text="ok")
    print(server.url.rsplit(":", 1)[1], flush=True)
    sys.stdin.read()
"""


@pytest.fixture(autouse=True)
def gemini_wire_oracle() -> Iterator[None]:
    """Off here (tests/llm/conftest.py): its own conversion of each Gemini request, to
    compare with Zerda's, encodes the image and holds copies of it."""
    yield


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        yield int(proc.stdout.readline())
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=30)


def _messages() -> list[dict[str, Any]]:
    return [{"role": "user", "content": [{"type": "text", "text": "What?"}, image(PNG)]}]


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the payload-sized base64 encodings made from now on, by anyone."""
    sizes: list[int] = []
    original = base64.b64encode

    def counting(data: Any, altchars: Any = None) -> bytes:
        if len(data) >= LARGE:
            sizes.append(len(data))
        return original(data, altchars)

    monkeypatch.setattr(base64, "b64encode", counting)
    return sizes


def _peak(send: Callable[[], Any]) -> float:
    """The peak allocated while ``send`` wraps and sends the image, in base64 texts."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        send()
        return (tracemalloc.get_traced_memory()[1] - base) / TEXT
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("name", list(ROWS.values()))
def test_an_image_is_encoded_once_and_never_copied_whole(
    port: int, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    addr = MockLLMServer(port=port)  # unstarted: its address helpers only
    llm = create_interface(name, model="m", max_retries=0, **addr.client_options(name))
    assert llm.generate(_messages(), raise_errors=True)["content"] == "ok"  # warm, both
    asyncio.run(llm.generate_async(_messages(), raise_errors=True))
    encodings = _counted(monkeypatch)
    sync = _peak(lambda: llm.generate(_messages(), raise_errors=True))
    assert encodings == [len(PNG)], "one encoding of the image, by Zerda, for the whole send"
    async_ = _peak(lambda: asyncio.run(llm.generate_async(_messages(), raise_errors=True)))
    assert encodings == [len(PNG)] * 2
    bound = SDK_WRITES.get(name, ZERDA_WRITES)
    assert sync <= bound and async_ <= bound, (
        f"peak {sync:.2f}x / {async_:.2f}x the image's base64 text (bound {bound}x)"
    )
