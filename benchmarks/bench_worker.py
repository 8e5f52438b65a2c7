"""One provider's benchmarks, run in a subprocess of ``run.py`` so that a provider that
crashes, hangs or fails to import costs only its own rows.

``python benchmarks/bench_worker.py PROVIDER PORT SECTIONS [--quick] [--profile DIR]``
prints one JSON object: ``{section: result | {"failed": reason}}``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import json
import pstats
import sys
import traceback
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from bench_data import MESSAGES, MODELS, RESPONSE, long_conversation, many_tools, zerda_kwargs
from bench_raw import RAW
from bench_scaling import bench_scaling
from bench_timing import Plan, compare, throughput

from zerda.llm import create_interface
from zerda.testing import MockLLMServer

CONCURRENCY = (1, 16, 256)
# Tool-call parsers by provider (the OpenAI-shaped three share OpenAI's).
PARSERS = {
    "openai": "parse_openai_tool_calls",
    "groq": "parse_openai_tool_calls",
    "mistral": "parse_openai_tool_calls",
    "ollama": "parse_ollama_tool_calls",
    "anthropic": "parse_anthropic_tool_calls",
    "bedrock": "parse_bedrock_tool_calls",
    "gemini": "parse_gemini_tool_calls",
}


def plans(quick: bool) -> dict[str, Plan]:
    if quick:
        return {"sync": Plan(0.05, 2, 0.05), "async": Plan(0.05, 2, 0.05)}
    # 60 pairs of short blocks rather than 10 long ones: the median of the paired ratios
    # moves less from run to run on a shared machine (Bedrock's short call, a few per cent
    # below raw boto3, read 0.91x to 1.10x over runs with 10 pairs; within a few per cent
    # of it, 0.98x to 1.11x over full runs with 30, where the same code's section run
    # alone read 1.03x-1.05x four times: one pair's ratio spreads ±14%). Async likewise: 16
    # pairs of 0.4 s rather than 6 of 0.8 s. At 256 concurrent calls a block is one round
    # (256 calls, about 0.6 s), ramp-up and stragglers included; with 6 pairs the median
    # of the same code's Bedrock and Ollama ×256 ratios read 0.77x to 1.17x between runs.
    return {"sync": Plan(1.0, 60, 0.2), "async": Plan(1.0, 16, 0.4)}


def _interface(provider: str, port: int) -> Any:
    return create_interface(
        provider, model=MODELS[provider], **_addr(port).client_options(provider)
    )


def _addr(port: int) -> MockLLMServer:
    """An unstarted MockLLMServer: only its address helpers, for the server process's port."""
    return MockLLMServer(port=port)


def check(result: dict[str, Any], what: str) -> None:
    """A benchmark of a failing call would time the error path: refuse to."""
    if result.get("stop_reason") == "error":
        err = result.get("error") or {}
        raise RuntimeError(f"{what}: {err.get('type')}: {err.get('message')}")
    expected = [c["name"] for c in RESPONSE["tool_calls"]]
    if [c["name"] for c in result["tool_calls"]] != expected or not result["content"]:
        raise RuntimeError(f"{what}: unexpected result {result!r:.200}")


# --- wire check ------------------------------------------------------------------------


def same_request(provider: str) -> dict[str, Any]:
    """Whether Zerda and the raw side send the same body (untimed, on a private server)."""
    with MockLLMServer() as server:
        server.set_default(provider, **RESPONSE)
        raw = RAW[provider](server.sdk_client_kwargs(provider))
        iface = create_interface(
            provider, model=MODELS[provider], **server.client_options(provider)
        )
        out = {}
        try:
            for kind, send_raw, send_zerda in (
                ("generate", raw.generate, lambda: iface.generate(MESSAGES, **zerda_kwargs())),
                ("stream", raw.stream, lambda: list(iface.stream(MESSAGES, **zerda_kwargs()))),
            ):
                send_raw()
                a = server.last_request(provider)
                send_zerda()
                b = server.last_request(provider)
                out[kind] = {
                    "same_body": a.body == b.body and a.path == b.path,
                    "raw_bytes": len(a.raw_body),
                    "zerda_bytes": len(b.raw_body),
                }
        finally:
            raw.close()
        return out


# --- Zerda's own work, measured apart from the SDK and the network --------------------


def own_cost(iface: Any, kwargs: dict[str, Any], stream: bool, quick: bool) -> dict[str, Any]:
    """CPU time of Zerda's own code per call: checking and converting the request
    (``_checked_request``, what generate and stream run) and mapping the SDK's response back
    (``_map_response``, or feeding every captured stream chunk through ``_feed`` and
    building the done result). Steady where the end-to-end ratio is noisy: it is the
    numerator of the overhead, alone. Not ``_native_request``: that one also makes every
    data URL a string for an SDK's documented call or a batch file (``with_urls``, a walk of
    the whole request), which the fast paths never do."""
    from zerda.llm._stream import StreamAccumulator

    native = iface._checked_request(MESSAGES, kwargs)[1]
    if stream:
        with iface._open_stream(native) as chunks:
            captured = list(chunks)

        def respond(n: int) -> None:
            for _ in range(n):
                acc = StreamAccumulator()
                for chunk in captured:
                    iface._feed(acc, chunk)
                acc.end_all_calls()
                acc.result(iface._make_result)
    else:
        response = iface._call(native)

        def respond(n: int) -> None:
            for _ in range(n):
                iface._map_response(response)

    def request(n: int) -> None:
        for _ in range(n):
            iface._checked_request(MESSAGES, kwargs)

    n, repeats = (20, 3) if quick else (300, 7)
    req = throughput(request, n, repeats)["us_per_op"]
    resp = throughput(respond, n, repeats)["us_per_op"]
    return {"request_us": req, "response_us": resp, "total_us": req + resp}


# --- sections --------------------------------------------------------------------------


def bench_overhead(provider: str, port: int, quick: bool) -> dict[str, Any]:
    iface = _interface(provider, port)
    raw = RAW[provider](_addr(port).sdk_client_kwargs(provider))
    kwargs = zerda_kwargs()
    check(iface.generate(MESSAGES, **kwargs), "zerda generate")

    def zerda(n: int) -> None:
        for _ in range(n):
            iface.generate(MESSAGES, **kwargs)

    def sdk(n: int) -> None:
        for _ in range(n):
            raw.generate()

    try:
        result = compare(zerda, sdk, plans(quick)["sync"])
    finally:
        raw.close()
    result["zerda_own"] = own_cost(iface, kwargs, False, quick)
    result["wire"] = same_request(provider)
    return result


def bench_stream(provider: str, port: int, quick: bool) -> dict[str, Any]:
    iface = _interface(provider, port)
    raw = RAW[provider](_addr(port).sdk_client_kwargs(provider))
    kwargs = zerda_kwargs()
    events = list(iface.stream(MESSAGES, **kwargs))
    check(events[-1]["result"], "zerda stream")

    def zerda(n: int) -> None:
        for _ in range(n):
            for _event in iface.stream(MESSAGES, **kwargs):
                pass

    def sdk(n: int) -> None:
        for _ in range(n):
            raw.stream()

    try:
        result = compare(zerda, sdk, plans(quick)["sync"])
        result["raw_chunks"] = raw.stream()
    finally:
        raw.close()
    result["zerda_events"] = len(events)
    result["zerda_own"] = own_cost(iface, kwargs, True, quick)
    return result


async def _rounds(call: Callable[[], Coroutine[Any, Any, Any]], tasks: int, rounds: int) -> None:
    """``tasks`` concurrent tasks, each making ``rounds`` calls one after the other: the
    concurrency holds at ``tasks`` for the whole run (bar the last stragglers)."""

    async def task() -> None:
        for _ in range(rounds):
            await call()

    await asyncio.gather(*(task() for _ in range(tasks)))


def bench_async(provider: str, port: int, quick: bool) -> dict[str, Any]:
    """Each timed block starts from fresh clients on both sides, built and warmed with one
    call outside the timing (:func:`_fresh`): an SDK's connection pool otherwise carries a
    state of its own from block to block (at 256 concurrent calls, how many connections it
    kept alive sets the CPU of a round, on either side, by up to half: benchmarks/README.md,
    "Async ×256 on httpx pools")."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    kwargs = zerda_kwargs()
    sides: dict[str, Any] = {"zerda": _interface(provider, port), "raw": None}
    check(loop.run_until_complete(sides["zerda"].generate_async(MESSAGES, **kwargs)), "zerda async")
    _fresh(loop, sides, "raw", provider, port)

    def zerda_call() -> Coroutine[Any, Any, Any]:
        return sides["zerda"].generate_async(MESSAGES, **kwargs)

    def raw_call() -> Coroutine[Any, Any, Any]:
        return sides["raw"].generate_async()  # type: ignore[no-any-return]

    def before(side: str) -> None:
        _fresh(loop, sides, side, provider, port)

    out: dict[str, Any] = {}
    try:
        for c in CONCURRENCY:
            # One operation is a round: c calls, one per task.
            def zerda(n: int, c: int = c) -> None:
                loop.run_until_complete(_rounds(zerda_call, c, n))

            def sdk(n: int, c: int = c) -> None:
                loop.run_until_complete(_rounds(raw_call, c, n))

            result = compare(zerda, sdk, plans(quick)["async"], before)
            for side in ("zerda", "raw"):
                result[side]["calls_per_s"] = c * 1e6 / result[side]["wall_us"]
                result[side]["cpu_us_per_call"] = result[side]["cpu_us"] / c
            result["calls_per_block"] = c * result["n_per_block"]
            out[str(c)] = result
    finally:
        sides["raw"].close()
        with contextlib.suppress(Exception):
            loop.run_until_complete(sides["zerda"].aclose())
        with contextlib.suppress(Exception):
            loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
    return out


def _fresh(
    loop: asyncio.AbstractEventLoop, sides: dict[str, Any], side: str, provider: str, port: int
) -> None:
    """``side``'s client replaced by a new one, warmed with one call (one connection in its
    pool); the old one closed (Zerda's interface) or let go (the raw SDK's async clients,
    whose connections close as they are collected; Bedrock's thread pool is shut down)."""
    old = sides[side]
    if side == "zerda":
        new = _interface(provider, port)
        loop.run_until_complete(new.generate_async(MESSAGES, **zerda_kwargs()))
        loop.run_until_complete(old.aclose())
    else:
        new = RAW[provider](_addr(port).sdk_client_kwargs(provider))
        loop.run_until_complete(new.generate_async())
        if old is not None:
            old.close()
    sides[side] = new


def _sdk_tool_calls(provider: str, n: int) -> Any:
    """n tool calls as the SDK hands them to Zerda's parser (real SDK objects)."""
    calls = [
        (f"call{i:05d}", "get_weather", {"city": f"City {i}", "unit": "celsius"}) for i in range(n)
    ]
    if provider in ("openai", "groq", "mistral"):
        tool_calls = [
            {"id": i, "type": "function", "function": {"name": name, "arguments": json.dumps(a)}}
            for i, name, a in calls
        ]
        message = {"role": "assistant", "content": None, "tool_calls": tool_calls}
        return _openai_like_message(provider, message)
    if provider == "ollama":
        import ollama

        ollama_calls = [{"function": {"name": name, "arguments": a}} for _, name, a in calls]
        return ollama.Message.model_validate(
            {"role": "assistant", "content": "", "tool_calls": ollama_calls}
        )
    if provider == "anthropic":
        from anthropic.types import Message

        blocks = [{"type": "tool_use", "id": i, "name": name, "input": a} for i, name, a in calls]
        return Message.model_validate(
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": MODELS["anthropic"],
                "content": blocks,
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 1, "output_tokens": 1},
            }
        ).content
    if provider == "bedrock":  # boto3 hands back plain dicts
        return [{"toolUse": {"toolUseId": i, "name": name, "input": a}} for i, name, a in calls]
    from google.genai import types

    parts = [{"function_call": {"id": i, "name": name, "args": a}} for i, name, a in calls]
    return types.GenerateContentResponse.model_validate(
        {"candidates": [{"content": {"role": "model", "parts": parts}, "finish_reason": "STOP"}]}
    )


def _openai_like_message(provider: str, message: dict[str, Any]) -> Any:
    response = {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": MODELS[provider],
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
    if provider == "openai":
        from openai.types.chat import ChatCompletion

        return ChatCompletion.model_validate(response).choices[0].message
    if provider == "groq":
        from groq.types.chat import ChatCompletion as GroqCompletion

        return GroqCompletion.model_validate(response).choices[0].message
    from mistralai.client.models import ChatCompletionResponse

    return ChatCompletionResponse.model_validate(response).choices[0].message


def bench_convert(provider: str, quick: bool) -> dict[str, Any]:
    from zerda.llm import tools as zt

    repeats, n = (3, 2) if quick else (7, 10)
    to_tools = getattr(zt, f"to_{provider}_tools")
    parse = getattr(zt, PARSERS[provider])
    tools = many_tools(1000)
    sdk_calls = _sdk_tool_calls(provider, 1000)
    if len(parse(sdk_calls)) != 1000:
        raise RuntimeError(f"{PARSERS[provider]} did not return 1000 calls")
    iface = create_interface(provider, model=MODELS[provider], **_addr(1).client_options(provider))
    history = long_conversation(200)
    history_tools = zerda_kwargs()["tools"]

    def convert_tools(k: int) -> None:
        for _ in range(k):
            to_tools(tools)

    def parse_calls(k: int) -> None:
        for _ in range(k):
            parse(sdk_calls)

    def convert_history(k: int) -> None:
        for _ in range(k):
            iface._build_request(iface._prepare(history, tools=history_tools))

    return {
        "tools_1000": throughput(convert_tools, n, repeats),
        "parse_1000": throughput(parse_calls, n, repeats),
        "history_200": throughput(convert_history, n * 5, repeats),
        "to_tools": to_tools.__name__,
        "parser": PARSERS[provider],
    }


# --- profiling (--profile): where Zerda's time goes ------------------------------------


def profile(provider: str, port: int, kind: str, out_dir: Path, calls: int = 300) -> dict[str, Any]:
    """cProfile of Zerda's generate or stream; the stats go to ``out_dir`` and the summary
    gives the share of time spent in Zerda's own functions."""
    iface = _interface(provider, port)
    kwargs = zerda_kwargs()

    def one() -> None:
        if kind == "stream":
            for _ in iface.stream(MESSAGES, **kwargs):
                pass
        else:
            iface.generate(MESSAGES, **kwargs)

    for _ in range(20):
        one()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        one()
    prof.disable()
    stats = pstats.Stats(prof)
    path = out_dir / f"profile_{provider}_{kind}.txt"
    with path.open("w") as fh:
        pstats.Stats(prof, stream=fh).sort_stats("tottime").print_stats(40)
    raw_stats: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    total = sum(v[2] for v in raw_stats.values())
    own = [(k, v) for k, v in raw_stats.items() if "/zerda/" in k[0]]
    own.sort(key=lambda kv: -kv[1][2])
    return {
        "calls": calls,
        "total_us_per_call": total / calls * 1e6,
        "zerda_own_us_per_call": sum(v[2] for _, v in own) / calls * 1e6,
        "top_zerda": [
            {
                "function": f"{Path(k[0]).name}:{k[1]}({k[2]})",
                "tottime_us_per_call": v[2] / calls * 1e6,
                "cumtime_us_per_call": v[3] / calls * 1e6,
            }
            for k, v in own[:12]
        ],
        "file": f"profiles/{path.name}",
    }


# --- entry point -----------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("provider")
    parser.add_argument("port", type=int)
    parser.add_argument("sections")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--profile", type=Path, default=None)
    args = parser.parse_args()
    out: dict[str, Any] = {}
    for section in args.sections.split(","):
        try:
            out[section] = run_section(section, args)
        except Exception as exc:  # reported as the section's result, the others go on
            traceback.print_exc(file=sys.stderr)
            out[section] = {"failed": f"{type(exc).__name__}: {exc}"[:300]}
    print(json.dumps(out))


def run_section(section: str, args: argparse.Namespace) -> Any:
    p, port, quick = args.provider, args.port, args.quick
    if section == "overhead":
        return bench_overhead(p, port, quick)
    if section == "stream":
        return bench_stream(p, port, quick)
    if section == "async":
        return bench_async(p, port, quick)
    if section == "convert":
        return bench_convert(p, quick)
    if section == "scaling":
        return bench_scaling(p, port, quick)
    if section.startswith("profile-"):
        return profile(p, port, section.removeprefix("profile-"), args.profile)
    raise ValueError(f"unknown section {section!r}")


if __name__ == "__main__":
    main()
