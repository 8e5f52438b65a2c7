"""BaseLLMInterface's shared machinery, through a minimal provider that needs no SDK.

Provider behaviour over real SDKs is tested per provider; this file pins what base.py does
for all of them: checks before sending, the error shape, typed errors, key redaction, the
stream loop.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from zerda.llm import (
    AuthenticationError,
    BaseLLMInterface,
    InvalidRequestError,
    RateLimitError,
    ZerdaError,
    create_interface,
)
from zerda.llm.base import Request, require_sdk
from zerda.llm.providers import canonical_name
from zerda.llm.registry import ProviderSpec, Traits
from zerda.llm.tools import ToolCall

KEY = "sk-SECRET-zerda-1234"
TOOLS = [{"name": "get_weather", "parameters": {"type": "object", "properties": {}}}]


class SdkFailure(Exception):
    pass


class Echo(BaseLLMInterface):
    """Answers with the request it was given; fails with the exception it is told to."""

    provider = "echo"
    spec = ProviderSpec(
        name="echo",
        cls="tests.llm.test_base:Echo",
        extra="echo",
        sdk_module="",  # needs no SDK
        sdk_package="",
        env_keys=("ECHO_API_KEY",),
        default_base_url=None,
        wire="openai",
        demo_model="m",
        title="Echo",
        traits=Traits(parallel_tool_calls=True),
    )

    def __init__(self, *args: Any, fail: BaseException | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fail = fail
        self.sent: list[dict[str, Any]] = []

    def _make_client(self) -> object:
        return object()

    def _make_async_client(self) -> object:
        return object()

    def _build_request(self, req: Request) -> dict[str, Any]:
        return {"req": req}

    def _call(self, kwargs: dict[str, Any]) -> Any:
        assert self.client is not None
        self.sent.append(kwargs)
        if self.fail:
            raise self.fail
        return kwargs["req"]

    async def _call_async(self, kwargs: dict[str, Any]) -> Any:
        return self._call(kwargs)

    def _map_response(self, raw: Request) -> dict[str, Any]:
        return self._make_result(raw.messages[-1]["content"], [], "stop", None)

    def _map_stop_reason(self, native: Any) -> str:
        return {"stop": "end_turn"}.get(native, "other")

    def _map_error(self, exc: BaseException) -> ZerdaError | None:
        if isinstance(exc, SdkFailure):
            return RateLimitError(f"slow down ({KEY})", status_code=429)
        return None

    @contextlib.contextmanager
    def _open_stream(self, kwargs: dict[str, Any]) -> Iterator[Iterator[Any]]:
        self.sent.append(kwargs)

        def chunks() -> Iterator[Any]:
            yield "Hel"
            yield "lo"
            if self.fail:
                raise self.fail
            yield ToolCall("c1", "get_weather", {})

        try:
            yield chunks()
        finally:
            self.closed = True

    def _open_stream_async(self, kwargs: dict[str, Any]) -> Any:
        raise NotImplementedError  # the async stream is tested per provider

    def _feed(self, acc: Any, chunk: Any) -> list[dict[str, Any]]:
        if isinstance(chunk, ToolCall):
            acc.finished = True  # the last chunk: the stream is complete
            return acc.whole_call(chunk.id, chunk.name, chunk.arguments)
        return acc.text(chunk)


def test_repr_and_str_hide_the_key() -> None:
    llm = Echo("m", api_key=KEY)
    assert repr(llm) == "Echo(model='m', base_url=None, api_key='***')"
    assert KEY not in str(llm) and KEY not in repr(vars(llm))
    assert llm.api_key == KEY


def test_the_key_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ECHO_API_KEY", KEY)
    assert Echo("m").api_key == KEY


def test_a_missing_key_is_an_authentication_error_result(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ECHO_API_KEY", raising=False)
    result = Echo("m").generate("hi")
    assert result["error"] == {
        "type": "authentication",
        "message": "no API key for echo: set ECHO_API_KEY or pass api_key=",
        "status_code": None,
        "provider": "echo",
        "retryable": False,
    }


def test_a_model_is_required() -> None:
    with pytest.raises(ValueError, match="Echo needs a model"):
        Echo(api_key=KEY)


def test_generate_result_shape() -> None:
    assert Echo("m", api_key=KEY).generate("hi") == {
        "content": "hi",
        "tool_calls": [],
        "stop_reason": "end_turn",
        "usage": None,
        "reasoning": None,
        "message": {"role": "assistant", "content": "hi", "tool_calls": []},
        "cost": None,  # Echo's row has no price provider
    }


async def test_generate_async_equals_generate() -> None:
    llm = Echo("m", api_key=KEY)
    assert await llm.generate_async("hi", system="s") == llm.generate("hi", system="s")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tools": [{"description": "no name"}]}, "tools[1]: Each tool must have a 'name'."),
        ({"tools": [{"name": "get_weather"}]}, "tools[1]: duplicate tool name 'get_weather'"),
        (
            {"tool_choice": "get_time"},
            "tool_choice names 'get_time', which is not in tools (given: get_weather)",
        ),
        ({"tool_choice": {"name": ""}}, "tool_choice {'name': ''}: a dict must name a tool"),
        (
            {"tool_choice": 3},
            "tool_choice must be 'auto', 'none', 'required' or a tool name, not 3",
        ),
        ({"messages": [{"role": "robot", "content": "x"}]}, "messages[0]: unknown role 'robot'"),
        ({"system": 5}, "system must be a string"),
    ],
)
def test_bad_input_is_refused_before_sending(kwargs: dict[str, Any], message: str) -> None:
    llm = Echo("m", api_key=KEY)
    messages = kwargs.pop("messages", "hi")
    tools = TOOLS + kwargs.pop("tools", [])
    result = llm.generate(messages, tools=tools, **kwargs)
    assert result["stop_reason"] == "error"
    assert result["error"]["type"] == "invalid_request"
    assert result["error"]["message"].startswith(message)
    assert llm.sent == []


def test_tool_choice_forms_are_normalised() -> None:
    llm = Echo("m", api_key=KEY)
    for choice, expected in [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "required"),
        ("get_weather", {"name": "get_weather"}),
        ({"name": "get_weather"}, {"name": "get_weather"}),
        ({"type": "function", "function": {"name": "get_weather"}}, {"name": "get_weather"}),
    ]:
        llm.generate("hi", tools=TOOLS, tool_choice=choice)
        assert llm.sent[-1]["req"].tool_choice == expected


def test_openai_style_tool_dicts_are_accepted() -> None:
    llm = Echo("m", api_key=KEY)
    openai_style = {
        "type": "function",
        "function": {"name": "f", "description": "d", "parameters": {"type": "object"}},
    }
    llm.generate("hi", tools=[openai_style, {"name": "g", "input_schema": {"type": "object"}}])
    assert llm.sent[-1]["req"].tools == [
        {"name": "f", "description": "d", "parameters": {"type": "object"}},
        {"name": "g", "description": "", "parameters": {"type": "object"}},
    ]


def test_request_carries_the_unified_options() -> None:
    llm = Echo("m", api_key=KEY)
    llm.generate(
        [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}],
        system="first",
        max_tokens=5,
        temperature=0.5,
        top_p=0.9,
        stop="END",
        parallel_tool_calls=False,
        seed=7,
    )
    assert llm.sent[-1]["req"] == Request(
        system="first\n\nsys",
        messages=[{"role": "user", "content": "hi"}],
        tools=None,
        tool_choice=None,
        max_tokens=5,
        temperature=0.5,
        top_p=0.9,
        stop=["END"],
        parallel_tool_calls=False,
        native={"seed": 7},
    )


def test_sdk_errors_become_the_error_shape_with_the_key_redacted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    result = Echo("m", api_key=KEY, fail=SdkFailure()).generate("hi")
    assert result == {
        "content": None,
        "tool_calls": [],
        "stop_reason": "error",
        "usage": None,
        "reasoning": None,
        "message": None,
        "cost": None,
        "error": {
            "type": "rate_limit",
            "message": "slow down (***)",
            "status_code": 429,
            "provider": "echo",
            "retryable": True,
        },
    }
    assert KEY not in caplog.text


def test_unknown_exceptions_become_unknown_errors() -> None:
    result = Echo("m", api_key=KEY, fail=KeyError("boom")).generate("hi")
    assert result["error"]["type"] == "unknown"
    assert result["error"]["message"] == "KeyError: 'boom'"


def test_raise_errors_raises_the_typed_exception_chained_to_the_sdk_one() -> None:
    failure = SdkFailure()
    with pytest.raises(RateLimitError) as info:
        Echo("m", api_key=KEY, fail=failure, raise_errors=True).generate("hi")
    assert info.value.__cause__ is failure
    assert info.value.to_dict()["status_code"] == 429
    assert KEY not in str(info.value)


async def test_raise_errors_per_call_overrides_the_constructor() -> None:
    llm = Echo("m", api_key=KEY, fail=SdkFailure())
    with pytest.raises(RateLimitError):
        await llm.generate_async("hi", raise_errors=True)
    with pytest.raises(InvalidRequestError):
        llm.generate([{"role": "x"}], raise_errors=True)


def test_stream_yields_text_tool_calls_then_done() -> None:
    events = list(Echo("m", api_key=KEY).stream("hi"))
    assert events == [
        {"type": "text", "text": "Hel"},
        {"type": "text", "text": "lo"},
        {
            "type": "tool_call_delta",
            "index": 0,
            "id": "c1",
            "name": "get_weather",
            "arguments": "{}",
        },
        {"type": "tool_call", "tool_call": {"id": "c1", "name": "get_weather", "arguments": {}}},
        {
            "type": "done",
            "result": {
                "content": "Hello",
                "tool_calls": [{"id": "c1", "name": "get_weather", "arguments": {}}],
                "stop_reason": "tool_use",
                "usage": None,
                "reasoning": None,
                "message": {
                    "role": "assistant",
                    "content": "Hello",
                    "tool_calls": [{"id": "c1", "name": "get_weather", "arguments": {}}],
                },
                "cost": None,
            },
        },
    ]


def test_a_failing_stream_ends_with_an_error_done_keeping_partial_text() -> None:
    events = list(Echo("m", api_key=KEY, fail=SdkFailure()).stream("hi"))
    assert [e["type"] for e in events] == ["text", "text", "done"]
    done = events[-1]["result"]
    assert done["content"] == "Hel" + "lo"
    assert done["stop_reason"] == "error" and done["error"]["type"] == "rate_limit"


def test_a_failing_stream_with_raise_errors_raises_after_yielding_the_text() -> None:
    seen = []
    with pytest.raises(RateLimitError):
        for event in Echo("m", api_key=KEY, fail=SdkFailure()).stream("hi", raise_errors=True):
            seen.append(event)
    assert [e["type"] for e in seen] == ["text", "text"]


def test_breaking_out_of_a_stream_closes_it() -> None:
    llm = Echo("m", api_key=KEY)
    stream = llm.stream("hi")
    next(stream)
    stream.close()
    assert llm.closed is True


def test_invalid_input_in_a_stream_ends_with_an_error_done() -> None:
    events = list(Echo("m", api_key=KEY).stream("hi", tool_choice="missing"))
    assert len(events) == 1 and events[0]["result"]["error"]["type"] == "invalid_request"


def test_require_sdk_names_the_extra() -> None:
    with pytest.raises(ImportError, match=r'pip install "zerda-llm\[nothing\]"'):
        require_sdk("zerda_no_such_sdk", "nothing", "no-such-sdk")


def test_create_interface_rejects_unknown_providers() -> None:
    with pytest.raises(ValueError, match="unknown provider 'nope'"):
        create_interface("nope:model")


def test_provider_aliases() -> None:
    assert canonical_name("aws") == "bedrock"
    assert canonical_name("google") == "gemini"
    assert canonical_name("OpenAI") == "openai"


def test_zerda_error_fields() -> None:
    err = AuthenticationError("bad key", status_code=401, provider="openai")
    assert err.to_dict() == {
        "type": "authentication",
        "message": "bad key",
        "status_code": 401,
        "provider": "openai",
        "retryable": False,
    }
    assert isinstance(err, ZerdaError)


# --- one body for a sync method and its async twin (zerda.llm._drive) ----------------------


class _Target:
    """Records each call; ``fail`` raises, in the sync call and in its async twin alike."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def double(self, x: int) -> int:
        self.calls.append(("double", x))
        return 2 * x

    async def double_async(self, x: int) -> int:
        self.calls.append(("double_async", x))
        return 2 * x

    def fail(self, error: BaseException) -> None:
        raise error

    async def fail_async(self, error: BaseException) -> None:
        raise error


def _body(target: _Target, error: BaseException) -> Any:
    first = yield target, "double", (3,), {}
    try:
        yield target, "fail", (error,), {}
    except ValueError as exc:  # thrown in where the call was made
        caught = f"caught {exc}"
    return first, caught


def test_drive_makes_the_calls_and_throws_their_failures_into_the_body() -> None:
    from zerda.llm._drive import drive

    target = _Target()
    assert drive(_body(target, ValueError("no"))) == (6, "caught no")
    assert target.calls == [("double", 3)]


def test_drive_async_awaits_the_async_twins_with_the_same_body() -> None:
    import asyncio

    from zerda.llm._drive import drive_async

    target = _Target()
    assert asyncio.run(drive_async(_body(target, ValueError("no")))) == (6, "caught no")
    assert target.calls == [("double_async", 3)]


@pytest.mark.parametrize("error", [KeyError("k"), KeyboardInterrupt()])
def test_a_failure_the_body_does_not_catch_leaves_both_drivers_as_it_is(
    error: BaseException,
) -> None:
    import asyncio

    from zerda.llm._drive import drive, drive_async

    with pytest.raises(type(error)) as sync:
        drive(_body(_Target(), error))
    with pytest.raises(type(error)) as in_async:
        asyncio.run(drive_async(_body(_Target(), error)))
    assert sync.value is error and in_async.value is error
