"""The contract every provider meets: one suite, run once per registry row.

``test_contract.py`` runs :class:`ProviderContract` for every name in
``zerda.llm.registry.NAMES``, so a row added to the registry is covered the moment it exists.
Each test drives the provider's real SDK against MockLLMServer and asserts whole outputs:
the exact result dict, the exact body the stream request carries next to generate's, every
event of a stream, the number of attempts and the waits asked for.

Where providers legitimately differ, the difference is data, never a branch on a provider's
name: the row's ``traits`` (id rule, tool-name rule, tool_choice and parallel_tool_calls
support, env keys) or :data:`WIRES`, one entry per wire protocol (what a stream request adds,
the native error code and message form per status, the wire's history rules), read from each
wire's mock folder (``zerda/testing/wires/<wire>/contract.py``). A new row on an existing wire
(an OpenAI-compatible service) needs nothing here; a new wire brings its entry in its folder.

Expected results are written only with :func:`result` and :func:`error_result`, so a change
of the result shape is a one-line edit there.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

from tests.llm.providers.histories import PRODUCERS, history_from
from tests.llm.providers.histories import TOOLS as HISTORY_TOOLS
from zerda.llm import create_interface, errors, registry
from zerda.llm._ids import ID_RULES
from zerda.testing import MockLLMServer, wires
from zerda.testing._wire import WireContract

KEY = "sk-SECRET-zerda-1234"
ID_A, ID_B = "abcDEF123", "ghiJKL456"  # valid under every id rule (Mistral: 9 alphanumerics)
WEATHER = {"name": "get_weather", "description": "Weather.", "parameters": {"type": "object"}}
TIME = {"name": "get_time", "description": "Time.", "parameters": {"type": "object"}}
TOOLS = [WEATHER, TIME]
CALL_A = {"id": ID_A, "name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}
CALL_B = {"id": ID_B, "name": "get_time", "arguments": {"city": "Tokyo", "format": "24h"}}
CALL_NO_ARGS = {"id": ID_A, "name": "get_time", "arguments": {}}
CALL_NESTED = {
    "id": ID_B,
    "name": "get_weather",
    "arguments": {"city": "Paris", "days": [1, 2, 3], "units": {"temp": "C", "wind": None}},
}
# HTTP status -> (error type, retryable), the same on every provider (DESIGN §5).
STATUSES: dict[int, tuple[str, bool]] = {
    400: ("invalid_request", False),
    401: ("authentication", False),
    403: ("permission", False),
    404: ("not_found", False),
    408: ("timeout", True),
    409: ("unknown", True),
    413: ("invalid_request", False),
    422: ("invalid_request", False),
    429: ("rate_limit", True),
    500: ("server", True),
    503: ("server", True),
}
RETRY_AFTER = 0.01  # seconds; sent as Retry-After (and as each wire's own header)
OVERLOADED = {"status": 503, "message": "overloaded"}  # an in-stream error event


# --- expected results: the only place the result shape is written ------------------------


def usage(input_tokens: int, output_tokens: int, **counts: int) -> dict[str, int | None]:
    """A result's usage (DESIGN §12) for a script's token counts: all five keys, the cache
    and reasoning ones None unless given (:func:`result` adds what the wire reports)."""
    details = dict.fromkeys(("cache_read_tokens", "cache_write_tokens", "reasoning_tokens"))
    assert set(counts) <= set(details), counts
    return {"input_tokens": input_tokens, "output_tokens": output_tokens, **details, **counts}


USAGE = usage(10, 5)  # what MockLLMServer reports by default


def result(
    content: str | None = None,
    calls: list[dict[str, Any]] | None = None,
    stop: str = "end_turn",
    usage: dict[str, int | None] | None = USAGE,
    *,
    provider: str,
    reasoning: str | None = None,
    provider_data: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A successful result (DESIGN §3) from ``provider``: a count ``usage`` leaves None is
    the one ``provider``'s wire reports when the script gives none (``Wire.usage_zeros``);
    a turn of calls carries the ``provider_data`` the wire adds (``Wire.call_data``) unless
    ``provider_data`` is given. It is in the result and in its message."""
    calls = list(calls or [])
    message = {"role": "assistant", "content": content, "tool_calls": calls}
    if usage is not None:
        zeros = wire(provider).usage_zeros
        usage = {k: zeros.get(k) if v is None else v for k, v in usage.items()}
    if provider_data is None:
        provider_data = wire(provider).call_data(len(calls))
    out = {
        "content": content,
        "tool_calls": calls,
        "stop_reason": stop,
        "usage": usage,
        "reasoning": reasoning,
        "message": message,
        "cost": None,  # the suite's model, m-1, has no price (DESIGN §21)
    }
    if provider_data is not None:
        message["provider_data"] = out["provider_data"] = provider_data
    return out


def error_result(
    kind: str,
    message: str,
    *,
    provider: str,
    status: int | None = None,
    retryable: bool,
    content: str | None = None,
    reasoning: str | None = None,
) -> dict[str, Any]:
    """A failed call's result: ``content`` and ``reasoning`` keep the text and reasoning
    streamed before the failure."""
    return {
        "content": content,
        "tool_calls": [],
        "stop_reason": "error",
        "usage": None,
        "reasoning": reasoning,
        "message": None,
        "cost": None,
        "error": {
            "type": kind,
            "message": message,
            "status_code": status,
            "provider": provider,
            "retryable": retryable,
        },
    }


def error_of(got: dict[str, Any]) -> dict[str, Any]:
    """The error part of a failed result, after checking the rest is the error shape."""
    shape = error_result(
        "",
        "",
        provider="",
        retryable=False,
        content=got.get("content"),
        reasoning=got.get("reasoning"),
    )
    assert got == {**shape, "error": got["error"]}
    error: dict[str, Any] = got["error"]
    return error


# --- what differs per wire protocol --------------------------------------------------------

# Each wire's data lives in its mock folder (zerda/testing/wires/<wire>/contract.py).
Wire = WireContract


def _contract(wire: str) -> Wire | None:
    """The wire's contract data, or None when the wire has no mock folder yet (reported by
    test_every_wire_has_its_contract_data)."""
    try:
        return wires.mock_wire(wire).contract
    except ModuleNotFoundError as exc:
        if exc.name != wires.module_name(wire):
            raise
        return None


WIRES: Mapping[str, Wire] = {w: c for w in registry.wires() if (c := _contract(w)) is not None}


def skip_where_ids_are_lost(provider: str) -> None:
    """Skips an id-checking test where the row runs on its SDK's documented call (fast paths
    off) and that call cannot carry tool-call ids (the wire's ``documented_call_keeps_ids``)."""
    from zerda.llm.interface.arguments import _fast_path_setting

    if not wire(provider).documented_call_keeps_ids and not _fast_path_setting("", None):
        pytest.skip(f"{provider}'s documented SDK call keeps no tool-call ids (fast paths off)")


# Ids each rule (Traits.tool_id) sends; "optional" rules may send none.
ID_PATTERNS = {
    "keep": r".+",
    "optional": r".+",
    "anthropic": r"[a-zA-Z0-9_-]+",
    "bedrock": r"[a-zA-Z0-9_-]{1,64}",
    "mistral": r"[a-zA-Z0-9]{9}",
}


def spec(provider: str) -> registry.ProviderSpec:
    return registry.get(provider)


def wire(provider: str) -> Wire:
    return WIRES[spec(provider).wire]


# --- scripts: one MockLLMServer script and the result it must give, on every provider ----

# script name -> (the script, the result() arguments the result it gives is built from)
ROUND_TRIPS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "text": (
        {"text": "Hello there, friend.", "usage": {"input_tokens": 7, "output_tokens": 2}},
        {"content": "Hello there, friend.", "usage": usage(7, 2)},
    ),
    "one-call": ({"tool_calls": [CALL_A]}, {"calls": [CALL_A], "stop": "tool_use"}),
    "text+call": (
        {"text": "Let me check.", "tool_calls": [CALL_A]},
        {"content": "Let me check.", "calls": [CALL_A], "stop": "tool_use"},
    ),
    "parallel-calls": (
        {"tool_calls": [CALL_A, CALL_B]},
        {"calls": [CALL_A, CALL_B], "stop": "tool_use"},
    ),
    "no-argument-call": (
        {"tool_calls": [CALL_NO_ARGS]},
        {"calls": [CALL_NO_ARGS], "stop": "tool_use"},
    ),
    "nested-arguments": (
        {"tool_calls": [CALL_NESTED]},
        {"calls": [CALL_NESTED], "stop": "tool_use"},
    ),
    "max_tokens": (
        {"text": "Once upon a", "stop_reason": "max_tokens"},
        {"content": "Once upon a", "stop": "max_tokens"},
    ),
}

# Refused before sending: (arguments, what the error message must name).
BAD_INPUTS: dict[str, tuple[dict[str, Any], str]] = {
    "tool-without-name": ({"tools": [{"description": "no name"}]}, "tools[0]"),
    "unknown-role": ({"messages": [{"role": "robot", "content": "x"}]}, "messages[0]"),
    "tool_choice-names-no-tool": ({"tools": [WEATHER], "tool_choice": "get_time"}, "get_time"),
    "duplicate-tool": ({"tools": [WEATHER, WEATHER]}, "tools[1]"),
    "tool-name-with-newline": (
        {"tools": [{"name": "get_weather\n", "parameters": {"type": "object"}}]},
        "tools[0]",
    ),
}
TOOL_NAMES = (
    *("a" * 64, "a" * 65, "a" * 128, "a" * 129),
    *("get.weather", "ns:get_weather", "_ns.tool:v1-x", "_private", "1st", "has space"),
)


def events_of(stream: Any) -> list[dict[str, Any]]:
    return list(stream)


async def events_of_async(stream: Any) -> list[dict[str, Any]]:
    return [e async for e in stream]


def check_stream(events: list[dict[str, Any]], expected: dict[str, Any]) -> None:
    """A stream's events say what its done result says: text deltas join to the content,
    reasoning deltas to the reasoning, one tool_call event per call (the done result's
    calls), one done, last."""
    assert [e["type"] for e in events].count("done") == 1 and events[-1]["type"] == "done"
    done = events[-1]["result"]
    assert done == expected
    texts = [e["text"] for e in events if e["type"] == "text"]
    assert "".join(texts) == (expected["content"] or "")
    thoughts = [e["text"] for e in events if e["type"] == "reasoning"]
    assert "".join(thoughts) == (expected["reasoning"] or "")
    assert [e["tool_call"] for e in events if e["type"] == "tool_call"] == expected["tool_calls"]
    # tool_call_delta events: each call's argument text, in pieces, before its tool_call.
    for index, call in enumerate(expected["tool_calls"]):
        announced = next(i for i, e in enumerate(events) if e.get("tool_call") == call)
        deltas = [e for e in events if e["type"] == "tool_call_delta" and e["index"] == index]
        assert all(events.index(d) < announced for d in deltas), index
        assert json.loads("".join(d["arguments"] for d in deltas) or "{}") == call["arguments"]


@functools.cache
def _sdks_imported_by(module: str) -> str:
    """The SDK modules importing ``module`` imports, in a fresh interpreter: once per
    module and process (the OpenAI-compatible rows share the openai row's)."""
    rows = registry.REGISTRY.values()
    # "mistralai.client" and "google-genai" stand for the packages mistralai, google.genai
    sdks = sorted({r.sdk_module for r in rows} | {r.sdk_package.replace("-", ".") for r in rows})
    code = f"import sys, {module}; print([m for m in {sdks!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip()


# Each async test runs on its own event loop (pytest-asyncio's default). A loop shared per
# class would let the interfaces made once per row build their async clients once, but
# pytest-asyncio 0.24, the floor `make test-min` runs, leaves no current event loop after a
# class-scoped one ends, and the sync tests that follow (an SDK asking for the current loop)
# then fail. What an interface does with a client per loop is the subject of
# tests/reliability/test_event_loops.py and tests/llm/test_lifecycle.py.
ASYNC_TEST = pytest.mark.asyncio


class ProviderContract:
    """Every test runs once per registry row (the ``provider`` fixture)."""

    # --- fixtures -------------------------------------------------------------------------

    @pytest.fixture(scope="class")
    @classmethod
    def server(cls) -> Iterator[MockLLMServer]:
        with MockLLMServer() as server:
            yield server

    @pytest.fixture(scope="class")
    @classmethod
    def interfaces(cls) -> dict[tuple[str, str], Any]:
        """Interfaces by (provider, options), reused across tests: building an SDK client
        per test would dominate the suite's run time."""
        return {}

    @pytest.fixture(autouse=True)
    def _fresh(self, server: MockLLMServer) -> None:
        server.reset()

    @pytest.fixture
    def make(
        self, server: MockLLMServer, interfaces: dict[tuple[str, str], Any], provider: str
    ) -> Callable[..., Any]:
        def make(**options: Any) -> Any:
            key = (provider, repr(sorted(options.items())))
            if key not in interfaces:
                interfaces[key] = self.build(server, provider, **options)
            return interfaces[key]

        return make

    @staticmethod
    def build(server: MockLLMServer, provider: str, **options: Any) -> Any:
        """A fresh interface for ``provider`` pointed at ``server``, no retries unless asked."""
        kwargs = {**server.client_options(provider), "max_retries": 0, **options}
        return create_interface(provider, model="m-1", **kwargs)

    @pytest.fixture
    def sleeps(self, monkeypatch: pytest.MonkeyPatch) -> list[float]:
        """The waits the calling thread asks for (SDK retries and Zerda's own), recorded
        instead of slept: what a retry waits is asserted, never timed."""
        asked: list[float] = []
        real = time.sleep
        main = threading.main_thread()

        def sleep(seconds: float) -> None:
            if threading.current_thread() is main:
                asked.append(seconds)
            else:
                real(seconds)

        monkeypatch.setattr(time, "sleep", sleep)
        return asked

    # --- round trips: generate, stream, async, against the real SDK -----------------------

    @pytest.mark.parametrize("name", list(ROUND_TRIPS))
    @ASYNC_TEST
    async def test_round_trip(
        self, server: MockLLMServer, make: Any, provider: str, name: str
    ) -> None:
        script, arguments = ROUND_TRIPS[name]
        if script.get("tool_calls"):
            skip_where_ids_are_lost(provider)
        expected = result(**arguments, provider=provider)
        llm = make()
        server.enqueue(provider, **script)
        assert llm.generate("hi", tools=TOOLS) == expected
        server.enqueue(provider, **script)
        assert await llm.generate_async("hi", tools=TOOLS) == expected
        server.enqueue(provider, fragments=3, **script)
        events = events_of(llm.stream("hi", tools=TOOLS))
        check_stream(events, expected)
        pieces = [e for e in events if e["type"] == "text"]
        assert len(pieces) == (3 if expected["content"] else 0)  # streamed as it arrives
        server.enqueue(provider, fragments=3, **script)
        assert await events_of_async(llm.stream_async("hi", tools=TOOLS)) == events
        bodies = [r.body for r in server.requests_for(provider)]
        assert bodies[1] == bodies[0]  # generate_async sends what generate sends
        assert bodies[2] == {**bodies[0], **wire(provider).stream_fields}
        assert bodies[3] == bodies[2]

    def test_parallel_calls_interleaved_in_fragments(
        self, server: MockLLMServer, make: Any, provider: str
    ) -> None:
        skip_where_ids_are_lost(provider)
        server.enqueue(
            provider, text="Checking.", tool_calls=[CALL_A, CALL_B], fragments=5, interleave=True
        )
        events = events_of(make().stream("hi", tools=TOOLS))
        check_stream(events, result("Checking.", [CALL_A, CALL_B], "tool_use", provider=provider))

    @ASYNC_TEST
    async def test_usage_counts(self, server: MockLLMServer, make: Any, provider: str) -> None:
        """The cache and reasoning counts the wire reports reach the result, the same from
        generate, generate_async, stream and stream_async (DESIGN §12)."""
        counts = {"cache_read_tokens": 30, "cache_write_tokens": 6, "reasoning_tokens": 8}
        script = {"text": "Cached.", "usage": {"input_tokens": 40, "output_tokens": 12, **counts}}
        reported = {k: v for k, v in counts.items() if k in wire(provider).usage_counts}
        expected = result("Cached.", usage=usage(40, 12, **reported), provider=provider)
        llm = make()
        server.enqueue(provider, **script)
        assert llm.generate("hi") == expected
        server.enqueue(provider, **script)
        assert await llm.generate_async("hi") == expected
        server.enqueue(provider, fragments=3, **script)
        events = events_of(llm.stream("hi"))
        check_stream(events, expected)
        server.enqueue(provider, fragments=3, **script)
        assert await events_of_async(llm.stream_async("hi")) == events

    # --- the HTTP error matrix, retries and Retry-After ------------------------------------

    @pytest.mark.parametrize("status", list(STATUSES))
    def test_http_error(
        self, server: MockLLMServer, make: Any, provider: str, status: int, sleeps: list[float]
    ) -> None:
        """Each status gives the same error type, status and retryable flag everywhere; a
        retryable one is retried max_retries times, waiting the Retry-After it came with."""
        code = wire(provider).error_codes.get(status)
        message = wire(provider).error_message.format(code=code, message="nope")
        kind, retryable = STATUSES[status]
        expected = error_result(
            kind, message, provider=provider, status=status, retryable=retryable
        )
        for max_retries in (0, 2):
            server.reset()
            sleeps.clear()
            for _ in range(3):
                server.enqueue_error(
                    status, provider, message="nope", error_type=code, retry_after=RETRY_AFTER
                )
            got = make(max_retries=max_retries).generate("hi")
            assert got == expected, f"max_retries={max_retries}"
            retries = max_retries if retryable else 0
            assert len(server.requests_for(provider)) == 1 + retries
            assert sleeps == [RETRY_AFTER] * retries

    @pytest.mark.parametrize("status", [401, 429, 503])
    def test_http_error_before_a_stream(
        self, server: MockLLMServer, make: Any, provider: str, status: int
    ) -> None:
        """Only a done event, the error generate gives; retried as generate retries."""
        code = wire(provider).error_codes.get(status)
        results = []
        for call in ("stream", "generate"):
            server.reset()
            for _ in range(2):
                server.enqueue_error(
                    status, provider, message="nope", error_type=code, retry_after=RETRY_AFTER
                )
            llm = make(max_retries=1)
            if call == "stream":
                events = events_of(llm.stream("hi"))
                assert [e["type"] for e in events] == ["done"]
                results.append(events[0]["result"])
            else:
                results.append(llm.generate("hi"))
            retried = STATUSES[status][1]
            assert len(server.requests_for(provider)) == (2 if retried else 1), call
        assert results[0] == results[1]
        assert error_of(results[0])["status_code"] == status

    @pytest.mark.parametrize("status", [400, 429, 503])
    @ASYNC_TEST
    async def test_async_errors_and_retries_match_sync(
        self, server: MockLLMServer, make: Any, provider: str, status: int
    ) -> None:
        code = wire(provider).error_codes.get(status)
        got = []
        for call in ("sync", "async"):
            server.reset()
            for _ in range(2):
                server.enqueue_error(
                    status, provider, message="nope", error_type=code, retry_after=RETRY_AFTER
                )
            llm = make(max_retries=1)
            got.append(llm.generate("hi") if call == "sync" else await llm.generate_async("hi"))
            retried = STATUSES[status][1]
            assert len(server.requests_for(provider)) == (2 if retried else 1), call
        assert got[0] == got[1]

    @ASYNC_TEST
    async def test_retried_then_success(
        self, server: MockLLMServer, make: Any, provider: str, sleeps: list[float]
    ) -> None:
        """Retries wait what each Retry-After says, then the answer is the result."""
        llm = make(max_retries=2)
        for call in ("sync", "async"):
            server.reset()
            for status, wait in ((429, 0.02), (503, RETRY_AFTER)):
                code = wire(provider).error_codes.get(status)
                server.enqueue_error(
                    status, provider, message="busy", error_type=code, retry_after=wait
                )
            server.enqueue(provider, text="done")
            got = llm.generate("hi") if call == "sync" else await llm.generate_async("hi")
            assert got == result("done", provider=provider), call
            assert len(server.requests_for(provider)) == 3, call
        assert sleeps == [0.02, RETRY_AFTER]  # the sync waits (async ones are awaited)

    @ASYNC_TEST
    async def test_stream_retried_before_its_first_event(
        self, server: MockLLMServer, make: Any, provider: str
    ) -> None:
        for stream in ("sync", "async"):
            server.reset()
            server.enqueue_error(429, provider, message="slow", retry_after=RETRY_AFTER)
            server.enqueue(provider, text="done")
            llm = make(max_retries=1)
            if stream == "sync":
                events = events_of(llm.stream("hi"))
            else:
                events = await events_of_async(llm.stream_async("hi"))
            check_stream(events, result("done", provider=provider))
            assert len(server.requests_for(provider)) == 2, stream

    def test_dropped_connection(
        self, server: MockLLMServer, make: Any, provider: str, sleeps: list[float]
    ) -> None:
        """A dropped connection is a retryable connection error, retried with backoff."""
        for max_retries in (0, 2):
            server.reset()
            for _ in range(3):
                server.enqueue_fault("drop", provider)
            error = error_of(make(max_retries=max_retries).generate("hi"))
            assert (error["type"], error["status_code"], error["retryable"]) == (
                "connection",
                None,
                True,
            )
            assert error["provider"] == provider
            assert len(server.requests_for(provider)) == 1 + max_retries
        assert len(sleeps) == 2 and all(0 < s <= 60 for s in sleeps)
        server.reset()
        server.enqueue_fault("drop", provider)
        server.enqueue(provider, text="ok")
        assert make(max_retries=1).generate("hi") == result("ok", provider=provider)

    def test_timeout(self, server: MockLLMServer, make: Any, provider: str) -> None:
        server.enqueue_fault("hang", provider, delay=2.0)
        error = error_of(make(timeout=0.2).generate("hi"))
        assert (error["type"], error["retryable"], error["provider"]) == ("timeout", True, provider)

    @pytest.mark.parametrize("fault", ["malformed", "empty"])
    def test_broken_body_is_a_server_error_not_retried(
        self, server: MockLLMServer, make: Any, provider: str, fault: Any
    ) -> None:
        """A 200 whose body is not the provider's format is never an (empty) answer."""
        for _ in range(2):
            server.enqueue_fault(fault, provider)
        error = error_of(make(max_retries=1).generate("hi"))
        assert (error["type"], error["status_code"], error["retryable"]) == ("server", None, False)
        assert len(server.requests_for(provider)) == 1
        server.enqueue_fault(fault, provider)
        with pytest.raises(errors.ServerError):
            make(raise_errors=True).generate("hi")

    @pytest.mark.parametrize("status", [401, 404, 429, 500])
    @ASYNC_TEST
    async def test_raise_errors_gives_the_typed_exception(
        self, server: MockLLMServer, make: Any, provider: str, status: int
    ) -> None:
        code = wire(provider).error_codes.get(status)
        cls = errors.ERROR_CLASSES[STATUSES[status][0]]
        llm = make(raise_errors=True)
        for call in ("generate", "generate_async", "stream", "per-call", "per-call-async"):
            server.enqueue_error(status, provider, message="nope", error_type=code)
            with pytest.raises(cls) as info:
                if call == "generate":
                    llm.generate("hi")
                elif call == "generate_async":
                    await llm.generate_async("hi")
                elif call == "stream":
                    events_of(llm.stream("hi"))
                elif call == "per-call":
                    make().generate("hi", raise_errors=True)
                else:
                    await make().generate_async("hi", raise_errors=True)
            cause = info.value.__cause__  # chained to the SDK's exception
            sdk = wire(provider).sdk_errors or spec(provider).wire
            assert type(cause).__module__.split(".")[: sdk.count(".") + 1] == sdk.split("."), call
            assert (info.value.status_code, info.value.provider) == (status, provider), call
        server.enqueue_error(status, provider, message="nope", error_type=code)
        assert error_of(llm.generate("hi", raise_errors=False))["type"] == cls.type

    # --- streams: partial output is kept, failures end in one error done ------------------

    @ASYNC_TEST
    async def test_stream_cut_keeps_partial_text(
        self, server: MockLLMServer, make: Any, provider: str
    ) -> None:
        llm = make(max_retries=1)  # never retried once text has reached the caller
        for stream in ("sync", "async"):
            server.reset()
            server.enqueue(provider, text="abcdefghij", fragments=10, cut_after=5)
            server.enqueue(provider, text="not reached")
            if stream == "sync":
                events = events_of(llm.stream("hi"))
            else:
                events = await events_of_async(llm.stream_async("hi"))
            text = "".join(e["text"] for e in events if e["type"] == "text")
            assert [e["type"] for e in events[:-1]] == ["text"] * (len(events) - 1)
            assert text and "abcdefghij".startswith(text), stream
            done = events[-1]["result"]
            error = error_of(done)
            assert done["content"] == text, stream
            assert (error["type"], error["retryable"]) == ("connection", True), stream
            assert len(server.requests_for(provider)) == 1, stream

    @ASYNC_TEST
    async def test_stream_error_event_keeps_partial_text(
        self, server: MockLLMServer, make: Any, provider: str
    ) -> None:
        """The provider's own in-stream error event ends the stream in an error done (and is
        not retried: text has reached the caller)."""
        llm = make(max_retries=1)
        for stream in ("sync", "async"):
            server.reset()
            server.enqueue(provider, text="abcdefghij", fragments=5, stream_error=OVERLOADED)
            server.enqueue(provider, text="not reached")
            if stream == "sync":
                events = events_of(llm.stream("hi"))
            else:
                events = await events_of_async(llm.stream_async("hi"))
            text = "".join(e["text"] for e in events if e["type"] == "text")
            assert text and "abcdefghij".startswith(text), stream
            done = events[-1]["result"]
            error = error_of(done)
            assert done["content"] == text, stream
            assert error["type"] == "server" and "overloaded" in error["message"], stream
            assert len(server.requests_for(provider)) == 1, stream

    @pytest.mark.parametrize(
        ("failure", "raised"),
        [
            ({"cut_after": 5}, errors.ConnectionError),
            ({"stream_error": OVERLOADED}, errors.ServerError),
        ],
        ids=["cut", "error-event"],
    )
    @ASYNC_TEST
    async def test_stream_raise_errors_after_partial_text(
        self,
        server: MockLLMServer,
        make: Any,
        provider: str,
        failure: dict[str, Any],
        raised: type[Exception],
    ) -> None:
        """With raise_errors the text that arrived is yielded, then the error is raised."""
        for stream in ("sync", "async", "per-call-async"):
            server.enqueue(provider, text="abcdefghij", fragments=10, **failure)
            seen: list[str] = []
            with pytest.raises(raised) as info:
                if stream == "sync":
                    for event in make(raise_errors=True).stream("hi"):
                        seen.append(event["text"])
                elif stream == "async":
                    async for event in make(raise_errors=True).stream_async("hi"):
                        seen.append(event["text"])
                else:
                    async for event in make().stream_async("hi", raise_errors=True):
                        seen.append(event["text"])
            assert seen and "abcdefghij".startswith("".join(seen)), stream
            assert info.value.provider == provider  # type: ignore[attr-defined]

    # --- histories from every provider, continued on this one ------------------------------

    @pytest.mark.parametrize("producer", PRODUCERS)
    @ASYNC_TEST
    async def test_history_from_every_provider(
        self, server: MockLLMServer, make: Any, provider: str, producer: str
    ) -> None:
        """A history another provider produced continues here: the wire's rules hold, the
        ids are this row's id rule applied to the producer's ids (the same on every send),
        generate / generate_async / stream send the same body, and the caller's messages
        are untouched."""
        skip_where_ids_are_lost(provider)
        history = history_from(producer)
        llm = make()
        server.enqueue(provider, text="Sunny.")
        assert llm.generate(history, tools=HISTORY_TOOLS) == result("Sunny.", provider=provider)
        server.enqueue(provider, text="Sunny.")
        assert await llm.generate_async(history, tools=HISTORY_TOOLS) == result(
            "Sunny.", provider=provider
        )
        server.enqueue(provider, text="Sunny.")
        check_stream(
            events_of(llm.stream(history, tools=HISTORY_TOOLS)), result("Sunny.", provider=provider)
        )
        assert history == history_from(producer)
        generated, again, streamed = (r.body for r in server.requests_for(provider))
        assert again == generated
        assert streamed == {**generated, **wire(provider).stream_fields}
        rule = spec(provider).traits.tool_id
        sent = wire(provider).call_ids(generated)
        originals = [c["id"] for c in history[2]["tool_calls"]]
        assert sent == [ID_RULES[rule](orig, 2, j) for j, orig in enumerate(originals)]
        for call_id in sent:
            assert call_id is None or re.fullmatch(ID_PATTERNS[rule], call_id), call_id
        assert len(set(sent)) == len(sent) or sent == [None] * len(sent)

    def test_own_result_continues(self, server: MockLLMServer, make: Any, provider: str) -> None:
        """Its own result's message, answered, is the next request's history, ids intact."""
        skip_where_ids_are_lost(provider)
        llm = make()
        server.enqueue(provider, text="Checking.", tool_calls=[CALL_A, CALL_B])
        first = llm.generate("Weather and time?", tools=TOOLS)
        answers = [
            {"role": "tool", "tool_call_id": c["id"], "name": c["name"], "content": "ok"}
            for c in first["tool_calls"]
        ]
        server.enqueue(provider, text="Done.")
        history = [{"role": "user", "content": "Weather and time?"}, first["message"], *answers]
        assert llm.generate(history, tools=TOOLS) == result("Done.", provider=provider)
        assert wire(provider).call_ids(server.last_request(provider).body) == [ID_A, ID_B]

    # --- bad input is refused before anything is sent -------------------------------------

    @pytest.mark.parametrize("case", list(BAD_INPUTS))
    @ASYNC_TEST
    async def test_bad_input_refused_before_sending(
        self, server: MockLLMServer, make: Any, provider: str, case: str
    ) -> None:
        kwargs, where = BAD_INPUTS[case]
        options = {k: v for k, v in kwargs.items() if k != "messages"}
        messages = kwargs.get("messages", "hi")
        llm = make()
        stream = events_of(llm.stream(messages, **options))
        stream_async = await events_of_async(llm.stream_async(messages, **options))
        got = [llm.generate(messages, **options), await llm.generate_async(messages, **options)]
        assert [e["type"] for e in stream] == ["done"] and stream == stream_async
        got.append(stream[0]["result"])
        for each in got:
            error = error_of(each)
            assert (error["type"], error["status_code"]) == ("invalid_request", None)
            assert where in error["message"], error["message"]
        assert got[0] == got[1] == got[2]
        with pytest.raises(errors.InvalidRequestError):
            llm.generate(messages, raise_errors=True, **options)
        assert server.requests == []

    @pytest.mark.parametrize("name", TOOL_NAMES)
    def test_tool_names_follow_the_rows_rule(
        self, server: MockLLMServer, make: Any, provider: str, name: str
    ) -> None:
        traits = spec(provider).traits
        server.enqueue(provider, text="ok")
        got = make().generate("hi", tools=[{"name": name, "parameters": {"type": "object"}}])
        # A name outside the row's rule is sent mapped (docs/portability.md): accepted too.
        assert got == result("ok", provider=provider), (traits.tool_name, got)
        assert len(server.requests) == 1
        assert server.requests[0].rejected_by is None

    @pytest.mark.parametrize("choice", ["auto", "none", "required", "get_time"])
    def test_tool_choice_follows_the_rows_traits(
        self, server: MockLLMServer, make: Any, provider: str, choice: str
    ) -> None:
        supported = spec(provider).traits.tool_choice
        server.enqueue(provider, text="ok")
        got = make().generate("hi", tools=TOOLS, tool_choice=choice)
        if (choice if choice in registry.TOOL_CHOICES else "name") in supported:
            assert got == result("ok", provider=provider)
        else:
            error = error_of(got)
            assert error["type"] == "invalid_request" and "supported" in error["message"]
            assert server.requests == []

    def test_parallel_tool_calls_false_follows_the_rows_traits(
        self, server: MockLLMServer, make: Any, provider: str
    ) -> None:
        server.enqueue(provider, text="ok")
        got = make().generate("hi", tools=TOOLS, parallel_tool_calls=False)
        if spec(provider).traits.parallel_tool_calls:
            assert got == result("ok", provider=provider)
        else:
            assert "parallel_tool_calls" in error_of(got)["message"]
            assert server.requests == []

    # --- secrets, keys, clients -------------------------------------------------------------

    def test_secret_never_shown(self, server: MockLLMServer, provider: str) -> None:
        option = wire(provider).secret_option
        llm = self.build(server, provider, **{option: wire(provider).secret_value(KEY)})
        server.enqueue_error(401, provider, message=f"Incorrect API key provided: {KEY}")
        got = llm.generate("hi")
        assert KEY not in repr(llm) and KEY not in str(llm)
        assert KEY not in json.dumps(got)
        assert got["error"]["message"].endswith("Incorrect API key provided: ***")
        # Sent in a header the mock redacts, never in the URL.
        assert KEY not in repr(server.requests)
        server.enqueue_error(401, provider, message=f"Incorrect API key provided: {KEY}")
        with pytest.raises(errors.ZerdaError) as info:
            llm.generate("hi", raise_errors=True)
        assert KEY not in str(info.value) and KEY not in repr(info.value)

    def test_api_key_from_the_environment(
        self, server: MockLLMServer, provider: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Each of the row's env keys, in turn, is the key (and is never shown)."""
        keys = spec(provider).env_keys
        if not keys:
            pytest.skip("the row needs no API key")
        for name in keys:
            for other in keys:
                monkeypatch.delenv(other, raising=False)
            monkeypatch.setenv(name, KEY)
            llm = create_interface(provider, model="m-1", base_url=server.base_url(provider))
            assert isinstance(llm, spec(provider).interface_class())
            assert llm.api_key == KEY and KEY not in repr(llm), name
        for i, name in enumerate(keys):
            monkeypatch.setenv(name, f"key-{i}")
        llm = create_interface(provider, model="m-1", base_url=server.base_url(provider))
        assert llm.api_key == "key-0"  # the row's order decides

    def test_missing_key_is_an_authentication_error(
        self, server: MockLLMServer, provider: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        keys = spec(provider).env_keys
        if not keys:
            pytest.skip("the row needs no API key")
        for name in keys:
            monkeypatch.delenv(name, raising=False)
        llm = create_interface(provider, model="m", base_url=server.base_url(provider))
        error = error_of(llm.generate("hi"))
        assert error["type"] == "authentication"
        assert all(name in error["message"] for name in keys)
        assert server.requests == []

    def test_the_sync_client_is_built_once(
        self, server: MockLLMServer, make: Any, provider: str
    ) -> None:
        llm = make()
        server.enqueue(provider, text="a")
        server.enqueue(provider, text="b")
        llm.generate("hi")
        client = llm.client
        llm.generate("hi")
        assert llm.client is client

    def test_one_interface_serves_several_event_loops(
        self, server: MockLLMServer, provider: str
    ) -> None:
        llm = self.build(server, provider)
        for answer in ("first", "second"):
            server.enqueue(provider, text=answer)
            assert asyncio.run(llm.generate_async("hi")) == result(answer, provider=provider)

    def test_provider_module_imports_no_sdk(self, provider: str) -> None:
        assert _sdks_imported_by(spec(provider).cls.partition(":")[0]) == "[]"
