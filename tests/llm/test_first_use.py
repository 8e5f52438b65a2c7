"""What building an interface does not load (issue 37, import + client): the batch machinery,
the model profiles with their price and limit tables, the docs tables, the reasoning tables,
structured output and the stream accumulator. Each is loaded on first use, and the first call still works. (The fast path's table of private names is checked on
first use too, tests/llm/wires/test_private_names.py.)

One child interpreter builds every wire's first row and its SDK client against a
MockLLMServer, then reports what it loaded; a fresh process because this process has long
loaded everything.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from tests.rows import wire_rows
from zerda.testing import MockLLMServer

# Loaded on first use, never by create_interface(...).client.
NOT_AT_BUILD = (
    "zerda.llm.batch",
    "zerda.llm._profile",
    "zerda.llm._cost",
    "zerda.llm.registry.docs",
    "zerda.llm._tool_decorator",
    "zerda.llm.functions",
    "zerda.llm.reasoning",
    "zerda.llm._structured",
    "zerda.llm._stream",
)

CHILD = """
import json, sys
from zerda.llm import create_interface

rows = json.loads(sys.argv[1])
report = {}
for name, options in rows.items():
    if "credentials_token" in options:  # Vertex AI's credentials object, sent as its token
        from google.oauth2.credentials import Credentials

        options["credentials"] = Credentials(token=options.pop("credentials_token"))
    llm = create_interface(name, model="m", max_retries=0, **options)
    llm.client
    report[name] = {"loaded": sorted(m for m in sys.modules if m.startswith("zerda."))}
first = create_interface(next(iter(rows)), model="m", max_retries=0, **rows[next(iter(rows))])
report["first call"] = first.generate("hi", raise_errors=True)["content"]
report["after"] = sorted(m for m in sys.modules if m.startswith("zerda."))
print(json.dumps(report))
"""


def _options(server: MockLLMServer, name: str) -> dict[str, object]:
    options = server.client_options(name)
    if "credentials" in options:  # a google.auth object: the child rebuilds it from its token
        options["credentials_token"] = options.pop("credentials").token
    return options


def _report(child_code: str, *arguments: object) -> Any:
    """What a fresh interpreter running ``child_code`` (its JSON arguments) reported."""
    child = subprocess.run(
        [sys.executable, "-c", child_code, *map(json.dumps, arguments)],
        capture_output=True,
        text=True,
        timeout=110,
        check=False,
    )
    assert child.returncode == 0, child.stderr[-2000:]
    return json.loads(child.stdout)


def test_building_an_interface_leaves_the_first_use_modules_unloaded() -> None:
    with MockLLMServer() as server:
        server.set_default(text="Done.")
        rows = {name: _options(server, name) for name in wire_rows()}
        report = _report(CHILD, rows)
    for name in rows:
        loaded = report[name]["loaded"]
        assert [m for m in NOT_AT_BUILD if m in loaded] == [], name
        assert [
            m for m in loaded if m.startswith("zerda.llm.wires.") and m.endswith(".batch")
        ] == []
    assert report["first call"] == "Done."
    # The first call loads the profile (the model's limits) and the price table (its cost).
    assert {"zerda.llm._profile", "zerda.llm._cost"} <= set(report["after"])


# The lightest SDKs (boto3: about 260 ms of CPU to import and build a client; ollama:
# about 430 ms, most of it pydantic and httpx) are where each module Zerda loads beside them
# counts. There building an interface leaves the request checks and the wire's request,
# response and stream mapping to the first call that needs them (docs/decisions.md,
# "Building an interface loads only what building needs").
REQUEST_CHECKS = (
    "zerda.llm._request",
    "zerda.llm.messages",
    "zerda.llm.parts",
    "zerda.llm.tools",
    "zerda.llm.executable",
    "zerda.llm.hosted",
    "zerda.llm._names",
    "zerda.llm._ids",
    "zerda.llm._schema_check",
    "zerda.llm._schema_walk",
    "zerda.llm._body_json",
)
# On the other wires (OpenAI's, Groq, Mistral, Anthropic, Gemini), building leaves the
# request checks proper to the first call; the message, part and tool helpers their
# mapping imports load with the interface.
CORE_CHECKS = (
    "zerda.llm._request",
    "zerda.llm.executable",
    "zerda.llm.hosted",
    "zerda.llm._names",
    "zerda.llm._ids",
    "zerda.llm._schema_check",
)
# Per row: what the first generate and stream load, and what the first error loads.
AT_FIRST_CALL = {
    "openai": (CORE_CHECKS, ()),
    "groq": (CORE_CHECKS, ()),
    "mistral": (CORE_CHECKS, ()),
    "anthropic": (CORE_CHECKS, ()),
    "gemini": (CORE_CHECKS, ()),
    "bedrock": (
        (
            *REQUEST_CHECKS,
            "zerda.llm.wires.bedrock.map",
            "zerda.llm.wires.bedrock.hosted",
            "zerda.llm.wires.bedrock.stream",
        ),
        ("zerda.llm.wires.bedrock.pump", "zerda.llm.wires.bedrock.errors"),
    ),
    "ollama": ((*REQUEST_CHECKS, "zerda.llm.wires.ollama.map"), ()),
}

FIRST_CALL_CHILD = """
import asyncio, json, sys
from zerda.llm import create_interface

def loaded():
    return sorted(m for m in sys.modules if m.startswith("zerda."))

row = json.loads(sys.argv[1])
llm = create_interface(row, model="m", max_retries=0, **json.loads(sys.argv[2]))
llm.client
report = {"built": loaded()}
report["generate"] = llm.generate("hi", raise_errors=True)["content"]
report["stream"] = [e["type"] for e in llm.stream("hi", raise_errors=True)][-1]
report["after"] = loaded()

async def stream_async():
    return [e async for e in llm.stream_async("hi", raise_errors=True)][-1]["result"]["content"]

report["stream_async"] = asyncio.run(stream_async())
report["error"] = create_interface(row, model="m", max_retries=0, **json.loads(sys.argv[3])).generate("hi")["error"]["type"]
report["at last"] = loaded()
print(json.dumps(report))
"""


@pytest.mark.parametrize("row", sorted(AT_FIRST_CALL))
def test_the_call_time_modules_load_with_the_first_call(row: str) -> None:
    at_first_call, later = AT_FIRST_CALL[row]
    with MockLLMServer() as server:
        server.set_default(text="Done.")
        options = _options(server, row)
        failing = {**options, "base_url": "http://127.0.0.1:1"}  # nothing listens there
        report = _report(FIRST_CALL_CHILD, row, options, failing)
    deferred = (*at_first_call, *later)
    assert [m for m in deferred if m in report["built"]] == []
    assert (report["generate"], report["stream"], report["stream_async"]) == (
        "Done.",
        "done",
        "Done.",
    )
    assert [m for m in at_first_call if m not in report["after"]] == []
    assert report["error"] == "connection"
    assert [m for m in deferred if m not in report["at last"]] == []
