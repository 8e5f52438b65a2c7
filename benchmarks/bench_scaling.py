"""History scaling: what one call costs as the history grows (10, 100, 1,000 tool round
trips), Zerda against the raw SDK's documented call and against a floor, in one run.

- Zerda: ``llm.generate(history, system=..., tools=[2 tools], max_tokens=256)``.
- raw: the SDK's documented call (``chat.completions.create``, ``chat.complete``,
  ``Client.chat``, ``messages.create``, ``converse``, ``models.generate_content``) with the
  keyword arguments Zerda built for the same history (``llm._native_request``; for Gemini,
  whose native request is the REST body, the arguments that send that body, derived once
  outside the timing), so both sides ask for exactly the same thing and the raw side does
  no conversion of its own.
- floor: what any client must do: ``json.dumps`` of the body Zerda put on the wire, and one
  POST of it on a kept-alive loopback connection (``httpx.Client``), its answer read.

The three sides run in rotating blocks (A B C, B C A, C A B ...), CPU time per call
(``time.process_time``); ratios are medians over rounds of one side's per-call time
divided by another's in the same round.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable
from typing import Any

from bench_data import MODELS, QUESTION, TOOL_OUTPUT, zerda_kwargs
from bench_timing import Plan, _timed, _warm_up

from zerda.llm import create_interface
from zerda.testing import MockLLMServer

SIZES = (10, 100, 1000)
GOAL_FLOOR = 4.0  # at 1,000 round trips, Zerda within 4x of the floor
GOAL_RAW = 1.0  # never more CPU than the raw SDK (1.10x allowed at 10 round trips)
GOAL_RAW_SMALL = 1.10


def history(round_trips: int) -> list[dict[str, Any]]:
    """``round_trips`` times: a user question, the assistant's tool call, its result
    (3 messages each). Ids are 9 alphanumerics: valid on every provider as they are."""
    messages: list[dict[str, Any]] = []
    for i in range(round_trips):
        call_id = f"r{i:08d}"
        args = {"city": f"City {i}", "unit": "celsius"}
        messages += [
            {"role": "user", "content": f"{QUESTION} ({i})"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": call_id, "name": "get_weather", "arguments": args}],
            },
            {
                "role": "tool",
                "tool_call_id": call_id,
                "name": "get_weather",
                "content": {**TOOL_OUTPUT, "round": i},
            },
        ]
    return messages


def raw_call(provider: str, kwargs: dict[str, Any]) -> tuple[Callable[[Any], Any], Any]:
    """(send, client): ``send(native)`` makes the SDK's documented call with ``native``."""
    if provider in ("openai", "groq"):
        import groq
        import openai

        client = (openai.OpenAI if provider == "openai" else groq.Groq)(**kwargs)
        return (lambda native: client.chat.completions.create(**native)), client
    if provider == "mistral":
        from mistralai.client import Mistral

        mistral = Mistral(**kwargs)
        return (lambda native: mistral.chat.complete(**native)), mistral
    if provider == "ollama":
        import ollama

        ollama_client = ollama.Client(**kwargs)
        return (lambda native: ollama_client.chat(**native)), ollama_client
    if provider == "anthropic":
        import anthropic

        claude = anthropic.Anthropic(**kwargs)
        return (lambda native: claude.messages.create(**native)), claude
    if provider == "bedrock":
        import boto3

        bedrock = boto3.client(**kwargs)
        return (lambda native: bedrock.converse(**native)), bedrock
    from google import genai

    gemini = genai.Client(**kwargs)
    return (lambda native: gemini.models.generate_content(**native)), gemini


def _documented_kwargs(provider: str, native: dict[str, Any]) -> dict[str, Any]:
    """Zerda's native request as the documented call's keyword arguments (they are that
    already, bar Ollama's ``stream`` flag, which ``Client.chat`` sets itself, and Gemini,
    where Zerda builds the REST body: ``models.generate_content`` gets the contents as they
    are, camelCase, and a GenerateContentConfig of the other fields, which send the same
    body, with its automatic function calling off, as before)."""
    if provider == "ollama":
        return {k: v for k, v in native.items() if k != "stream"}
    if provider == "gemini":
        from google.genai import types

        from zerda.llm.wires.gemini.sdk import sdk_kwargs

        kwargs = sdk_kwargs(native["model"], native["body"])
        afc = {"automatic_function_calling": types.AutomaticFunctionCallingConfig(disable=True)}
        return {**kwargs, "config": kwargs["config"].model_copy(update=afc)}
    return native


class Floor:
    """JSON encoding of the wire body plus one kept-alive loopback POST, its answer read."""

    def __init__(self, url: str, headers: dict[str, str], body: Any) -> None:
        import httpx

        self.url, self.body = url, body
        skip = {"host", "content-length", "transfer-encoding", "connection", "accept-encoding"}
        self.headers = {k: v for k, v in headers.items() if k.lower() not in skip}
        self.client = httpx.Client(timeout=120)

    def __call__(self) -> None:
        data = json.dumps(self.body).encode()
        response = self.client.post(self.url, content=data, headers=self.headers)
        response.read()
        if response.status_code != 200:
            raise RuntimeError(f"floor POST: HTTP {response.status_code}: {response.text[:200]}")

    def close(self) -> None:
        self.client.close()


def _wire(provider: str, send: Callable[[], Any]) -> tuple[str, dict[str, str], Any]:
    """(path with query, headers, JSON body) of what ``send`` puts on the wire, on a
    private server answering as the benchmark server does."""
    from bench_data import RESPONSE

    with MockLLMServer() as server:
        server.set_default(provider, **RESPONSE)
        send(server)
        req = server.last_request(provider)
    query = "&".join(f"{k}={v}" for k, v in (req.query or {}).items())
    path = req.path.split("?", 1)[0] + (f"?{query}" if query else "")
    return path, dict(req.headers), req.body


PAIRS = (("zerda", "floor"), ("raw", "floor"), ("zerda", "raw"))


def rotate(
    sides: dict[str, Callable[[int], Any]],
    plan: Plan,
    pairs: tuple[tuple[str, str], ...] = PAIRS,
    wall_ratios: bool = False,
) -> dict[str, Any]:
    """Per-call CPU of each side (medians over blocks) and paired ratios (``a_vs_b`` for
    each of ``pairs``; ``a_vs_b_wall`` too with ``wall_ratios``), the sides run in rotating
    order, each block sized to last about ``plan.block_s`` on its own. The peers'
    benchmark (benchmarks/peers) runs its sides through it too."""
    names = list(sides)
    n = {}
    for name in names:
        one = _warm_up(sides[name], plan.warmup_s)
        n[name] = max(1, round(plan.block_s / one)) if one > 0 else 1
    cpu: dict[str, list[float]] = {name: [] for name in names}
    wall: dict[str, list[float]] = {name: [] for name in names}
    for i in range(plan.blocks):
        order = names[i % len(names) :] + names[: i % len(names)]
        for name in order:
            c, w = _timed(sides[name], n[name])
            cpu[name].append(c / n[name])
            wall[name].append(w / n[name])
    out: dict[str, Any] = {
        name: {
            "cpu_us": statistics.median(cpu[name]) * 1e6,
            "wall_us": statistics.median(wall[name]) * 1e6,
            "n_per_block": n[name],
        }
        for name in names
    }
    for a, b in pairs:
        out[f"{a}_vs_{b}"] = _paired(cpu[a], cpu[b])
        if wall_ratios:
            out[f"{a}_vs_{b}_wall"] = _paired(wall[a], wall[b])
    out["blocks"] = plan.blocks
    return out


def _paired(a: list[float], b: list[float]) -> float:
    return statistics.median(x / y for x, y in zip(a, b, strict=True) if y > 0)


def bench_scaling(provider: str, port: int, quick: bool) -> dict[str, Any]:
    plan = Plan(0.05, 2, 0.05) if quick else Plan(0.6, 7, 0.3)
    addr = MockLLMServer(port=port)  # unstarted: its address helpers only
    llm = create_interface(provider, model=MODELS[provider], **addr.client_options(provider))
    send_raw, raw_client = raw_call(provider, addr.sdk_client_kwargs(provider))
    kwargs = zerda_kwargs()
    out: dict[str, Any] = {"sizes": {}}
    try:
        for size in SIZES:
            messages = history(size)
            native = _documented_kwargs(provider, llm._native_request(messages, kwargs))

            def zerda_on(server: MockLLMServer, messages: list[dict[str, Any]] = messages) -> None:
                options = server.client_options(provider)
                with create_interface(provider, model=MODELS[provider], **options) as private:
                    private.generate(messages, raise_errors=True, **kwargs)

            path, headers, body = _wire(provider, zerda_on)
            floor = Floor(f"{addr.url}/{provider}{path}", headers, body)
            result = llm.generate(messages, **kwargs)
            if result["stop_reason"] == "error":
                raise RuntimeError(f"zerda at {size}: {result['error']}")

            def zerda(k: int, messages: list[dict[str, Any]] = messages) -> None:
                for _ in range(k):
                    llm.generate(messages, **kwargs)

            def raw(k: int, native: dict[str, Any] = native) -> None:
                for _ in range(k):
                    send_raw(native)

            def floor_side(k: int, floor: Floor = floor) -> None:
                for _ in range(k):
                    floor()

            try:
                timed = rotate({"zerda": zerda, "raw": raw, "floor": floor_side}, plan)
            finally:
                floor.close()
            timed["messages"] = len(messages)
            timed["body_bytes"] = len(json.dumps(body))
            out["sizes"][str(size)] = timed
    finally:
        llm.close()
        close = getattr(raw_client, "close", None)
        if callable(close):
            close()
    return out
