"""What the three OpenAI-shaped providers (OpenAI, Groq, Mistral) share beyond the provider
contract (contract.py, which every registry row runs: round trips, errors, retries, streams,
histories, parity, bad input).

``OpenAILikeContract`` holds what is particular to Chat Completions bodies and results:
the exact request bodies (``RequestBodies``, driven by the class's data: max_tokens field,
tool_choice "required" value, what the SDK adds, the ids each producer's history is sent
with), native stop reasons, arguments sent as broken JSON text, and stream closing. Each
provider's test module subclasses it (``provider = "groq"``), sets its data, and adds its
recorded exchanges, checked with :func:`check_recorded`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.llm.providers.histories import TOOLS as TOOLS_UNIFIED
from tests.llm.providers.histories import history_from
from zerda.llm import errors
from zerda.llm.providers import create_interface
from zerda.llm.tools import _parse_json_arguments
from zerda.llm.wires.openai.compat import _map_stop_reason
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


USER = [{"role": "user", "content": "hi"}]
NAMED = {"type": "function", "function": {"name": "get_time"}}


class RequestBodies:
    """Exact request bodies received by MockLLMServer (mixed into the contract)."""

    provider: ClassVar[str]
    max_tokens_field: ClassVar[str]
    required_choice: ClassVar[str]
    body_extra: ClassVar[dict[str, Any]]
    mistral_messages: ClassVar[bool]
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

    @pytest.mark.parametrize("producer", ["own", "anthropic", "gemini", "ollama"])
    def test_history_exact_body(self, server: MockLLMServer, producer: str) -> None:
        producer = self.provider if producer == "own" else producer
        ids = self.history_ids[producer]
        body = self.body_for(server, history_from(producer), tools=TOOLS_UNIFIED)
        messages = history_messages(*ids, mistral=self.mistral_messages)
        assert body == self.expected(messages=messages, tools=HISTORY_TOOLS)


class OpenAILikeContract(RequestBodies):
    """Subclasses set ``provider`` and what their API's bodies hold differently."""

    provider: ClassVar[str] = ""
    max_tokens_field: ClassVar[str] = "max_completion_tokens"
    required_choice: ClassVar[str] = "required"
    body_extra: ClassVar[dict[str, Any]] = {}  # fields the SDK adds to every body
    mistral_messages: ClassVar[bool] = False
    native_example: ClassVar[dict[str, Any]] = {"seed": 7}  # an argument Zerda does not model
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

    # --- streaming ---

    def stream(self, llm: Any, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        return list(llm.stream(*args, **kwargs))

    def test_stream_invalid_argument_json(self, server: MockLLMServer) -> None:
        server.enqueue(
            self.provider,
            tool_calls=[{"id": ID_A, "name": "get_time", "arguments": '{"city": '}],
            fragments=3,
        )
        events = self.stream(self.make(server), "hi", tools=[TIME])
        call = {"id": ID_A, "name": "get_time", "arguments": {"_raw": '{"city": '}}
        assert [e["tool_call"] for e in events if e["type"] == "tool_call"] == [call]

    @pytest.mark.parametrize(
        "script",
        # The scripts every provider shares are in contract.py (ROUND_TRIPS); this one is
        # OpenAI's: "stop" with calls present.
        [{"tool_calls": _calls("get_weather"), "native_stop_reason": "stop"}],
        ids=["stop-with-calls"],
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
