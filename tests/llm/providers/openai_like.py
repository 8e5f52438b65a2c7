"""Shared checks for the three OpenAI-shaped providers (OpenAI, Groq, Mistral).

``OpenAILikeContract`` holds the behaviour every one of them must show against
MockLLMServer and its real SDK: exact request bodies (``RequestBodies``, driven by the
class's data: max_tokens field, tool_choice "required" value, what the SDK adds), histories
from all seven providers, result mapping, faults and retries, streaming and parity. Each
provider's test module subclasses it (``provider = "groq"``), sets its data, and adds its
recorded exchanges, checked with :func:`check_recorded`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.llm.providers.histories import PRODUCERS, history_from
from tests.llm.providers.histories import TOOLS as TOOLS_UNIFIED
from zerda.llm import errors
from zerda.llm.providers import create_interface
from zerda.llm.providers._openai_compat import _map_stop_reason
from zerda.llm.tools import _parse_json_arguments
from zerda.llm.usage import make_usage
from zerda.testing import MockLLMServer

FIXTURES = Path(__file__).resolve().parents[3] / ".." / "shared" / "fixtures"
KEY = "sk-SECRET-zerda-1234"
ID_A, ID_B = "abcDEF123", "ghiJKL456"  # valid on all three (Mistral: 9 alphanumerics)
WEATHER = {"name": "get_weather", "description": "Weather.", "parameters": {"type": "object"}}
TIME = {"name": "get_time", "description": "Time.", "parameters": {"type": "object"}}


# --- recorded exchanges ------------------------------------------------------------------


def recorded_cases(folder: str, path: str | None = None) -> list[Any]:
    """``pytest.param(fixture, id=file stem)`` for every recording in ``folder`` (only
    requests to ``path`` when given); one skipped case when the shared folder is absent."""
    directory = FIXTURES / "recorded" / folder
    if not directory.is_dir():
        return [
            pytest.param(None, id="absent", marks=pytest.mark.skip(reason="no shared fixtures"))
        ]
    cases = []
    for file in sorted(directory.glob("*.json")):
        fixture = json.loads(file.read_text(encoding="utf-8"))
        if path is None or fixture["request"]["path"] == path:
            cases.append(pytest.param(fixture, id=file.stem))
    return cases


def expected_from_recording(fixture: dict[str, Any]) -> dict[str, Any]:
    """Tool calls, text and stop reason the recording holds (its ``derived`` values, which
    were checked against the bodies: they agree for every file used here)."""
    derived = fixture["derived"]
    calls = [
        {"id": c["id"], "name": c["name"], "arguments": _parse_json_arguments(c["arguments"])}
        for c in derived["tool_calls"]
    ]
    if derived.get("error"):
        stop = "error"  # an error event inside a 200 stream (Groq's tool_use_failed)
    else:
        stop = "tool_use" if calls else _map_stop_reason(derived["finish_reason"])
    return {"tool_calls": calls, "content": derived["text"] or None, "stop_reason": stop}


def check_recorded(llm: Any, server: MockLLMServer, fixture: dict[str, Any], provider: str) -> None:
    """Serves ``fixture`` verbatim through ``llm`` and checks the result against it."""
    server.enqueue_recorded(fixture, provider=provider)
    if fixture["streaming"]:
        events = list(llm.stream("recorded"))
        result = events[-1]["result"]
        announced = [e["tool_call"] for e in events if e["type"] == "tool_call"]
        assert announced == result["tool_calls"]
        assert [e["type"] for e in events].count("done") == 1
    else:
        result = llm.generate("recorded")
    if fixture["response"]["status"] >= 400:
        expected_type = errors.error_class_for_status(fixture["response"]["status"]).type
        assert result["stop_reason"] == "error"
        assert result["error"]["type"] == expected_type
        assert result["error"]["status_code"] == fixture["response"]["status"]
        return
    expected = expected_from_recording(fixture)
    got = {k: result[k] for k in ("tool_calls", "content", "stop_reason")}
    assert got == expected


# --- the shared contract -------------------------------------------------------------------


def _calls(*names: str) -> list[dict[str, Any]]:
    ids = [ID_A, ID_B]
    return [{"id": ids[i], "name": n, "arguments": {"city": "Paris"}} for i, n in enumerate(names)]


def _result(content: Any, calls: list[dict[str, Any]], stop: str, usage: Any) -> dict[str, Any]:
    message = {"role": "assistant", "content": content, "tool_calls": calls}
    return {
        "content": content,
        "tool_calls": calls,
        "stop_reason": stop,
        "usage": usage,
        "reasoning": None,
        "message": message,
    }


# --- request bodies ----------------------------------------------------------------------

HISTORY_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": t["name"],
            "description": t["description"],
            "parameters": t["parameters"],
        },
    }
    for t in TOOLS_UNIFIED
]


def history_messages(first: str, second: str, *, mistral: bool = False) -> list[dict[str, Any]]:
    """The native messages of ``histories.history_from(p)`` once its ids are ``first`` and
    ``second``; ``mistral`` adds what the mistralai SDK adds (index, prefix, result names)."""

    def call(call_id: str, name: str) -> dict[str, Any]:
        out = {
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": '{"city": "Paris"}'},
        }
        return {**out, "index": 0} if mistral else out

    def assistant(body: dict[str, Any]) -> dict[str, Any]:
        return {**body, "prefix": False} if mistral else body

    def result(call_id: str, name: str, content: str) -> dict[str, Any]:
        out = {"role": "tool", "tool_call_id": call_id, "content": content}
        return {**out, "name": name} if mistral else out

    return [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Weather and time in Paris?"},
        assistant(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [call(first, "get_weather"), call(second, "get_time")],
            }
        ),
        result(first, "get_weather", '{"temp_c": 18, "sky": "clear"}'),
        result(second, "get_time", "14:05"),
        assistant({"role": "assistant", "content": "18°C and clear; it is 14:05."}),
        {"role": "user", "content": "Thanks. And tomorrow?"},
    ]


def assert_well_formed(messages: list[dict[str, Any]], id_pattern: str) -> None:
    """The rules these APIs enforce on a history: ids in the provider's form and unique,
    every tool message answering exactly one call of the assistant turn before it, every
    call answered before the conversation moves on, the system prompt first."""
    assert [m["role"] for m in messages].count("system") <= 1
    assert all(m["role"] != "system" for m in messages[1:])
    seen: set[str] = set()
    open_ids: list[str] = []
    for m in messages:
        if m["role"] == "tool":
            assert m["tool_call_id"] in open_ids, m
            open_ids.remove(m["tool_call_id"])
            continue
        assert open_ids == [], f"unanswered calls before {m}"
        for call in m.get("tool_calls") or []:
            assert re.fullmatch(id_pattern, call["id"]), call["id"]
            assert call["id"] not in seen
            seen.add(call["id"])
            json.loads(call["function"]["arguments"])
            open_ids.append(call["id"])
    assert open_ids == []


USER = [{"role": "user", "content": "hi"}]
NAMED = {"type": "function", "function": {"name": "get_time"}}


class RequestBodies:
    """Exact request bodies received by MockLLMServer (mixed into the contract)."""

    provider: ClassVar[str]
    max_tokens_field: ClassVar[str]
    required_choice: ClassVar[str]
    body_extra: ClassVar[dict[str, Any]]
    stream_extra: ClassVar[dict[str, Any]]
    mistral_messages: ClassVar[bool]
    id_pattern: ClassVar[str]
    history_ids: ClassVar[dict[str, tuple[str, str]]]
    native_example: ClassVar[dict[str, Any]]

    @classmethod
    def make(cls, server: MockLLMServer, **options: Any) -> Any:
        raise NotImplementedError

    def sent(self, server: MockLLMServer) -> Any:
        raise NotImplementedError

    def body_for(self, server: MockLLMServer, messages: Any = "hi", **kwargs: Any) -> Any:
        server.enqueue(self.provider, text="ok")
        result = self.make(server).generate(messages, **kwargs)
        assert result["stop_reason"] == "end_turn", result
        return self.sent(server)

    def expected(self, **fields: Any) -> dict[str, Any]:
        return {"model": "m-1", "messages": USER, **self.body_extra, **fields}

    def test_plain_prompt(self, server: MockLLMServer) -> None:
        assert self.body_for(server) == self.expected()

    def test_system_prompt_goes_first(self, server: MockLLMServer) -> None:
        messages = [{"role": "user", "content": "hi"}, {"role": "system", "content": "Be brief."}]
        system = {"role": "system", "content": "You are Zerda.\n\nBe brief."}
        assert self.body_for(server, messages, system="You are Zerda.") == self.expected(
            messages=[system, *USER]
        )

    @pytest.mark.parametrize(
        ("choice", "native"),
        [
            (None, None),
            ("auto", "auto"),
            ("none", "none"),
            ("required", "required"),
            ("get_time", NAMED),
            ({"name": "get_time"}, NAMED),
            (NAMED, NAMED),
        ],
    )
    def test_tools_and_tool_choice(self, server: MockLLMServer, choice: Any, native: Any) -> None:
        fields: dict[str, Any] = {"tools": HISTORY_TOOLS}
        if native is not None:
            fields["tool_choice"] = self.required_choice if native == "required" else native
        assert self.body_for(server, tools=TOOLS_UNIFIED, tool_choice=choice) == self.expected(
            **fields
        )

    def test_options(self, server: MockLLMServer) -> None:
        body = self.body_for(
            server,
            tools=TOOLS_UNIFIED,
            max_tokens=50,
            temperature=0.2,
            top_p=0.9,
            stop="END",
            parallel_tool_calls=False,
        )
        assert body == self.expected(
            tools=HISTORY_TOOLS,
            parallel_tool_calls=False,
            temperature=0.2,
            top_p=0.9,
            stop=["END"],
            **{self.max_tokens_field: 50},
        )

    def test_native_arguments_pass_through(self, server: MockLLMServer) -> None:
        assert self.body_for(server, **self.native_example) == self.expected(**self.native_example)

    def test_stream_body(self, server: MockLLMServer) -> None:
        server.enqueue(self.provider, text="ok")
        list(self.make(server).stream("hi"))
        assert self.sent(server) == {**self.expected(), **self.stream_extra}

    @pytest.mark.parametrize("producer", ["own", "anthropic", "gemini", "ollama"])
    def test_history_exact_body(self, server: MockLLMServer, producer: str) -> None:
        producer = self.provider if producer == "own" else producer
        ids = self.history_ids[producer]
        body = self.body_for(server, history_from(producer), tools=TOOLS_UNIFIED)
        messages = history_messages(*ids, mistral=self.mistral_messages)
        assert body == self.expected(messages=messages, tools=HISTORY_TOOLS)

    @pytest.mark.parametrize("producer", PRODUCERS)
    def test_history_from_every_provider_is_well_formed(
        self, server: MockLLMServer, producer: str
    ) -> None:
        history = history_from(producer)
        body = self.body_for(server, history, tools=TOOLS_UNIFIED)
        assert_well_formed(body["messages"], self.id_pattern)
        assert history == history_from(producer)  # the caller's messages are untouched


class OpenAILikeContract(RequestBodies):
    """Subclasses set ``provider`` and what their API's bodies hold differently."""

    provider: ClassVar[str] = ""
    max_tokens_field: ClassVar[str] = "max_completion_tokens"
    required_choice: ClassVar[str] = "required"
    body_extra: ClassVar[dict[str, Any]] = {}  # fields the SDK adds to every body
    stream_extra: ClassVar[dict[str, Any]] = {"stream": True}
    mistral_messages: ClassVar[bool] = False
    native_example: ClassVar[dict[str, Any]] = {"seed": 7}  # an argument Zerda does not model
    # The cache and reasoning counts the mock reports beside prompt and completion tokens.
    usage_details: ClassVar[dict[str, int]] = {}
    id_pattern: ClassVar[str] = r"[A-Za-z0-9_\-]{1,64}"
    # producer -> the two ids the history's calls are sent with
    history_ids: ClassVar[dict[str, tuple[str, str]]] = {
        "openai": ("call_a1B2c3D4e5F6g7H8i9J0k1L2", "call_m3N4o5P6q7R8s9T0u1V2w3X4"),
        "anthropic": ("toolu_01A09q90qw90lq917835lq9", "toolu_01B18r81rx81mr826724mr8"),
        "gemini": ("call_2_0", "call_2_1"),  # id-less calls get ids by position
        "ollama": ("call_2_0", "call_2_1"),
    }

    @pytest.fixture(scope="class")
    @classmethod
    def server(cls) -> Iterator[MockLLMServer]:
        with MockLLMServer() as server:
            yield server

    @pytest.fixture(scope="class")
    @classmethod
    def llm(cls, server: MockLLMServer) -> Any:
        """One interface with the default test options, shared by a class's many recorded
        exchanges (building an SDK client per test would dominate their run time)."""
        return cls.make(server)

    @pytest.fixture(autouse=True)
    def _fresh(self, server: MockLLMServer) -> None:
        server.reset()

    @classmethod
    def make(cls, server: MockLLMServer, **options: Any) -> Any:
        kwargs = {**server.client_options(cls.provider), "api_key": KEY, "max_retries": 0}
        return create_interface(cls.provider, model="m-1", **{**kwargs, **options})

    def sent(self, server: MockLLMServer) -> Any:
        return server.last_request(self.provider).body

    # --- result mapping ---

    def usage(self, prompt: int = 10, completion: int = 5) -> dict[str, Any]:
        """The result's usage for the mock's counts (10 and 5 by default)."""
        details = {"cache_read": None, "reasoning": None, **self.usage_details}
        return make_usage(prompt, completion, **details)

    def test_text_result(self, server: MockLLMServer) -> None:
        server.enqueue(self.provider, text="Hello.", usage={"input_tokens": 7, "output_tokens": 2})
        result = self.make(server).generate("hi")
        assert result == _result("Hello.", [], "end_turn", self.usage(7, 2))

    def test_parallel_tool_calls_result(self, server: MockLLMServer) -> None:
        server.enqueue(self.provider, tool_calls=_calls("get_weather", "get_time"))
        result = self.make(server).generate("hi", tools=[WEATHER, TIME])
        assert result == _result(None, _calls("get_weather", "get_time"), "tool_use", self.usage())

    def test_stop_with_calls_present_is_tool_use(self, server: MockLLMServer) -> None:
        # OpenAI says "stop" when tool_choice forces a function.
        server.enqueue(self.provider, tool_calls=_calls("get_weather"), native_stop_reason="stop")
        result = self.make(server).generate("hi", tools=[WEATHER], tool_choice="get_weather")
        assert result["stop_reason"] == "tool_use"

    @pytest.mark.parametrize(
        ("native", "unified"),
        [
            ("stop", "end_turn"),
            ("length", "max_tokens"),
            ("model_length", "max_tokens"),
            ("content_filter", "content_filter"),
            ("tool_calls", "tool_use"),
            ("something_new", "other"),
        ],
    )
    def test_stop_reasons(self, server: MockLLMServer, native: str, unified: str) -> None:
        server.enqueue(self.provider, text="x", native_stop_reason=native)
        assert self.make(server).generate("hi")["stop_reason"] == unified

    def test_invalid_and_empty_arguments(self, server: MockLLMServer) -> None:
        calls = [
            {"id": ID_A, "name": "get_weather", "arguments": '{"city": "Par'},
            {"id": ID_B, "name": "get_time", "arguments": ""},
        ]
        server.enqueue(self.provider, tool_calls=calls)
        result = self.make(server).generate("hi", tools=[WEATHER, TIME])
        assert result["tool_calls"] == [
            {"id": ID_A, "name": "get_weather", "arguments": {"_raw": '{"city": "Par'}},
            {"id": ID_B, "name": "get_time", "arguments": {}},
        ]

    async def test_generate_async_parity(self, server: MockLLMServer) -> None:
        llm = self.make(server)
        script = {"text": "ok", "tool_calls": _calls("get_weather", "get_time")}
        server.enqueue(self.provider, **script)
        sync = llm.generate("hi", tools=[WEATHER, TIME])
        server.enqueue(self.provider, **script)
        assert await llm.generate_async("hi", tools=[WEATHER, TIME]) == sync

    # --- faults ---

    @pytest.mark.parametrize(
        ("status", "kind"),
        [(400, "invalid_request"), (401, "authentication"), (404, "not_found"), (500, "server")],
    )
    def test_http_errors(self, server: MockLLMServer, status: int, kind: str) -> None:
        server.enqueue_error(status, self.provider, message="nope")
        result = self.make(server).generate("hi")
        assert result == {
            "content": None,
            "tool_calls": [],
            "stop_reason": "error",
            "usage": None,
            "reasoning": None,
            "message": None,
            "error": {
                "type": kind,
                "message": "nope",
                "status_code": status,
                "provider": self.provider,
                "retryable": status >= 500,
            },
        }

    def test_429_retried_then_success(self, server: MockLLMServer) -> None:
        server.enqueue_error(429, self.provider, message="slow down", retry_after=0.05)
        server.enqueue(self.provider, text="done")
        result = self.make(server, max_retries=2).generate("hi")
        assert result["content"] == "done"
        assert len(server.requests_for(self.provider)) == 2

    def test_429_after_retries_is_rate_limit(self, server: MockLLMServer) -> None:
        for _ in range(2):
            server.enqueue_error(429, self.provider, message="slow down", retry_after=0.05)
        result = self.make(server, max_retries=1).generate("hi")
        assert result["error"]["type"] == "rate_limit"
        assert result["error"]["retryable"] is True
        assert len(server.requests_for(self.provider)) == 2

    def test_timeout(self, server: MockLLMServer) -> None:
        server.enqueue_fault("hang", self.provider, delay=1.0)
        result = self.make(server, timeout=0.2).generate("hi")
        assert result["error"]["type"] == "timeout"

    def test_dropped_connection(self, server: MockLLMServer) -> None:
        server.enqueue_fault("drop", self.provider)
        result = self.make(server).generate("hi")
        assert result["error"]["type"] == "connection"
        assert result["error"]["retryable"] is True

    def test_malformed_body(self, server: MockLLMServer) -> None:
        server.enqueue_fault("malformed", self.provider)
        result = self.make(server).generate("hi")
        assert (result["stop_reason"], result["error"]["type"]) == ("error", "server")

    @pytest.mark.parametrize(
        ("status", "exc_type"),
        [(401, errors.AuthenticationError), (404, errors.NotFoundError), (500, errors.ServerError)],
    )
    def test_raise_errors_gives_typed_exception(
        self, server: MockLLMServer, status: int, exc_type: type[Exception]
    ) -> None:
        server.enqueue_error(status, self.provider, message="nope")
        with pytest.raises(exc_type) as info:
            self.make(server, raise_errors=True).generate("hi")
        assert info.value.__cause__ is not None  # chained to the SDK's exception
        assert info.value.status_code == status  # type: ignore[attr-defined]

    async def test_raise_errors_per_call_async(self, server: MockLLMServer) -> None:
        server.enqueue_error(429, self.provider, message="nope")
        with pytest.raises(errors.RateLimitError):
            await self.make(server).generate_async("hi", raise_errors=True)

    @pytest.mark.parametrize(
        ("kwargs", "where"),
        [
            ({"tools": [{"description": "no name"}]}, "tools[0]"),
            ({"messages": [{"role": "robot", "content": "x"}]}, "messages[0]"),
            ({"tools": [WEATHER], "tool_choice": "get_time"}, "get_time"),
        ],
    )
    def test_bad_input_refused_before_sending(
        self, server: MockLLMServer, kwargs: dict[str, Any], where: str
    ) -> None:
        options = {k: v for k, v in kwargs.items() if k != "messages"}
        result = self.make(server).generate(kwargs.get("messages", "hi"), **options)
        assert result["error"]["type"] == "invalid_request"
        assert where in result["error"]["message"]
        assert server.requests == []

    def test_api_key_never_shown(self, server: MockLLMServer) -> None:
        server.enqueue_error(401, self.provider, message=f"Incorrect API key provided: {KEY}")
        llm = self.make(server)
        result = llm.generate("hi")
        assert KEY not in repr(llm) and KEY not in str(llm)
        assert KEY not in json.dumps(result)
        assert "***" in result["error"]["message"]

    def test_missing_key_is_authentication_error(
        self, server: MockLLMServer, monkeypatch: Any
    ) -> None:
        for name in ("OPENAI_API_KEY", "GROQ_API_KEY", "MISTRAL_API_KEY"):
            monkeypatch.delenv(name, raising=False)
        llm = create_interface(self.provider, model="m", base_url=server.base_url(self.provider))
        assert llm.generate("hi")["error"]["type"] == "authentication"

    def test_unknown_client_option_fails_at_construction(self, server: MockLLMServer) -> None:
        with pytest.raises(TypeError, match="bogus_option"):
            self.make(server, bogus_option=1)

    # --- streaming ---

    def stream(self, llm: Any, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        return list(llm.stream(*args, **kwargs))

    def test_stream_text_only(self, server: MockLLMServer) -> None:
        server.enqueue(self.provider, text="Hello there, friend.", fragments=4)
        events = self.stream(self.make(server), "hi")
        texts = [e["text"] for e in events if e["type"] == "text"]
        assert len(texts) == 4 and "".join(texts) == "Hello there, friend."
        assert events[-1] == {
            "type": "done",
            "result": _result("Hello there, friend.", [], "end_turn", self.usage()),
        }

    @pytest.mark.parametrize("interleave", [False, True])
    def test_stream_parallel_calls_in_fragments(
        self, server: MockLLMServer, interleave: bool
    ) -> None:
        calls = [
            {"id": ID_A, "name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}},
            {"id": ID_B, "name": "get_time", "arguments": {"city": "Tokyo", "format": "24h"}},
        ]
        server.enqueue(
            self.provider, text="Checking.", tool_calls=calls, fragments=5, interleave=interleave
        )
        events = self.stream(self.make(server), "hi", tools=[WEATHER, TIME])
        assert [e["tool_call"] for e in events if e["type"] == "tool_call"] == calls
        assert events[-1]["result"] == _result("Checking.", calls, "tool_use", self.usage())

    def test_stream_no_argument_call(self, server: MockLLMServer) -> None:
        server.enqueue(
            self.provider, tool_calls=[{"id": ID_A, "name": "get_time", "arguments": {}}]
        )
        events = self.stream(self.make(server), "hi", tools=[TIME])
        assert events[-1]["result"]["tool_calls"] == [
            {"id": ID_A, "name": "get_time", "arguments": {}}
        ]

    def test_stream_invalid_argument_json(self, server: MockLLMServer) -> None:
        server.enqueue(
            self.provider,
            tool_calls=[{"id": ID_A, "name": "get_time", "arguments": '{"city": '}],
            fragments=3,
        )
        events = self.stream(self.make(server), "hi", tools=[TIME])
        call = {"id": ID_A, "name": "get_time", "arguments": {"_raw": '{"city": '}}
        assert [e["tool_call"] for e in events if e["type"] == "tool_call"] == [call]

    def test_stream_max_tokens(self, server: MockLLMServer) -> None:
        server.enqueue(self.provider, text="Once upon a", stop_reason="max_tokens", fragments=3)
        events = self.stream(self.make(server), "hi", max_tokens=3)
        assert events[-1]["result"] == _result("Once upon a", [], "max_tokens", self.usage())

    @pytest.mark.parametrize(
        "script",
        [
            {"text": "Only text here."},
            {"text": "Both.", "tool_calls": _calls("get_weather", "get_time")},
            {"tool_calls": _calls("get_weather"), "native_stop_reason": "stop"},
            {"text": "cut", "stop_reason": "max_tokens"},
        ],
        ids=["text", "text+calls", "stop-with-calls", "max_tokens"],
    )
    async def test_stream_done_equals_generate(
        self, server: MockLLMServer, script: dict[str, Any]
    ) -> None:
        llm = self.make(server)
        tools = [WEATHER, TIME]
        server.enqueue(self.provider, **script)
        generated = llm.generate("hi", tools=tools)
        server.enqueue(self.provider, fragments=3, **script)
        assert self.stream(llm, "hi", tools=tools)[-1]["result"] == generated
        server.enqueue(self.provider, fragments=3, **script)
        events = [e async for e in llm.stream_async("hi", tools=tools)]
        assert events[-1]["result"] == generated

    def test_stream_cut_keeps_partial_text(self, server: MockLLMServer) -> None:
        server.enqueue(self.provider, text="abcdefghij", fragments=5, cut_after=3)
        events = self.stream(self.make(server), "hi")
        done = events[-1]["result"]
        assert done["stop_reason"] == "error"
        assert done["error"]["type"] == "connection"
        assert done["content"] == "".join(e["text"] for e in events if e["type"] == "text")
        assert done["content"]

    def test_stream_error_event(self, server: MockLLMServer) -> None:
        error = {"status": 503, "message": "overloaded"}
        server.enqueue(self.provider, text="abcdefghij", fragments=5, stream_error=error)
        done = self.stream(self.make(server), "hi")[-1]["result"]
        assert done["content"] == "abcdefghij"
        assert (done["stop_reason"], done["error"]["type"]) == ("error", "server")
        assert "overloaded" in done["error"]["message"]

    def test_stream_http_error_before_start(self, server: MockLLMServer) -> None:
        server.enqueue_error(401, self.provider, message="nope")
        events = self.stream(self.make(server), "hi")
        assert [e["type"] for e in events] == ["done"]
        assert events[0]["result"]["error"]["type"] == "authentication"

    def test_stream_raise_errors_after_partial_text(self, server: MockLLMServer) -> None:
        server.enqueue(self.provider, text="abcdefghij", fragments=5, cut_after=3)
        seen: list[str] = []
        with pytest.raises(errors.ConnectionError):
            for event in self.make(server, raise_errors=True).stream("hi"):
                seen.append(event["text"])
        assert seen and "abcdefghij".startswith("".join(seen))

    async def test_stream_async_cut_keeps_partial_text(self, server: MockLLMServer) -> None:
        server.enqueue(self.provider, text="abcdefghij", fragments=5, cut_after=3)
        events = [e async for e in self.make(server).stream_async("hi")]
        assert events[-1]["result"]["stop_reason"] == "error"
        assert events[-1]["result"]["content"]

    def test_breaking_out_closes_the_response(self, server: MockLLMServer) -> None:
        llm = self.make(server)
        closed: list[bool] = []
        original = llm._open_stream

        @contextmanager
        def spy(kwargs: dict[str, Any]) -> Iterator[Any]:
            try:
                with original(kwargs) as chunks:
                    yield chunks
            finally:
                closed.append(True)

        llm._open_stream = spy
        server.enqueue(self.provider, text="a" * 40, fragments=20, chunk_delay=0.01)
        stream = llm.stream("hi")
        assert next(stream)["type"] == "text"
        stream.close()
        assert closed == [True]
