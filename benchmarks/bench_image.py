"""Image payload: the memory an 8 MiB image costs through Zerda against the raw SDK.

    .venv/bin/python benchmarks/bench_image.py [--providers a,b] [--write]

For each provider, in a fresh process per side (tracemalloc counts every allocation of the
process), the same 8 MiB PNG, already in memory as bytes, is sent in one user message
("What is in this image?" + the image) to a MockLLMServer running in another process:

- raw: the request written by hand as the provider's documentation shows (base64 data URL,
  base64 source, raw bytes for boto3 and google-genai), sent with the SDK;
- zerda: ``generate([{"role": "user", "content": [text, zerda.llm.image(png)]}])``.

Peak is tracemalloc's peak above what was allocated before the image was wrapped (the image
bytes themselves are outside both figures). Base64 encodings of the payload (any call of
``base64.b64encode`` on 1 MiB or more) are counted by caller: the raw side's own code,
Zerda's, and the SDK's (botocore encodes the bytes it is given, on both sides alike;
google-genai encodes in pydantic-core, which this count does not see).
``--write`` puts the table in RESULTS.md under "## Image payload".
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "src")]

from bench_data import MODELS, PROVIDERS  # noqa: E402
from bench_server import child_env, serve  # noqa: E402

SIZE = 8 * 1024 * 1024
QUESTION = "What is in this image?"
GOAL = 1.00  # issue 37: at or below the raw SDK's own peak
CPU_GOAL = 1.00  # issue 37: the CPU of one send at or below the raw SDK's
# A model that takes images on each row (Groq's text model refuses them before sending:
# https://console.groq.com/docs/vision uses Llama 4 Scout); both sides send the same one.
MODELS = {**MODELS, "groq": "meta-llama/llama-4-scout-17b-16e-instruct"}
SECTION = "## Image payload"
DESCRIPTION = (
    "An 8 MiB PNG (already in memory as bytes) sent once in a user message, against "
    "MockLLMServer in another process; `python benchmarks/bench_image.py`. Peak is "
    "tracemalloc's peak of the client process while wrapping and sending it, above "
    "what was allocated before (the image's own bytes are in neither figure); the "
    "mock runs with `strict=False`, as Anthropic (5 MB) and Bedrock (3.75 MB) refuse "
    "images this large. CPU is the client's `time.process_time()` for one send (the "
    "best of 9, untraced). The raw side writes the request as each SDK's documentation "
    "shows (its own base64 data URL or base64 source; boto3 and google-genai take the "
    "bytes and encode them). Goal (issue 37): at most "
    f"{GOAL:.2f}x the raw SDK's peak and {CPU_GOAL:.2f}x its CPU, and one base64 "
    "encoding by Zerda. Encodings count `base64.b64encode` calls on 1 MiB or more, by "
    "caller. Zerda encodes the image once (the part's base64 text, which the history "
    "holds: 10.7 MiB; its peak, 21.3 MiB, is that encoding, the bytes and the text "
    "side by side) and never copies that text whole again: the body is written around "
    "it and sent in pieces, the text a slice at a time (OpenAI-shaped APIs' data URL "
    "is never built); where an SDK takes only whole bytes (botocore; google-genai, "
    "whose request is given the bytes in place of its dict) they are written a slice "
    "at a time into one buffer. Gemini gets the standard base64 text as it is, which "
    "the API's protobuf JSON takes as google-genai's URL-safe form. Ollama's raw side "
    "is higher because `ollama.Client.chat` validates the body "
    "through its pydantic models, which Zerda's Ollama module bypasses."
)


def payload() -> bytes:
    """An 8 MiB "PNG": the signature, then incompressible bytes (the size is what counts)."""
    return b"\x89PNG\r\n\x1a\n" + random.Random(0).randbytes(SIZE - 8)


# --- counting base64 encodings -------------------------------------------------------------

ENCODINGS = {"zerda": 0, "caller": 0, "sdk": 0}


def _count_encodings() -> None:
    original = base64.b64encode

    def counted(data: Any, altchars: Any = None) -> bytes:
        if len(data) >= 1024 * 1024:
            caller = sys._getframe(1).f_globals.get("__name__", "")
            side = "caller" if caller == "__main__" else "sdk"
            ENCODINGS["zerda" if caller.startswith("zerda") else side] += 1
        return original(data, altchars)

    base64.b64encode = counted  # type: ignore[assignment]


# --- the raw SDK side: the request as each provider's documentation writes it --------------------


def _data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode()


def raw_sender(provider: str, kwargs: dict[str, Any]) -> Callable[[bytes], Any]:
    """A function sending one image with the provider's SDK (its client built once)."""
    model = MODELS[provider]
    if provider in ("openai", "groq"):
        import groq
        import openai

        chat = (openai.OpenAI if provider == "openai" else groq.Groq)(**kwargs).chat

        def send(png: bytes) -> Any:
            content = [
                {"type": "text", "text": QUESTION},
                {"type": "image_url", "image_url": {"url": _data_url(png)}},
            ]
            return chat.completions.create(model=model, messages=[_user(content)])

    elif provider == "mistral":
        from mistralai.client import Mistral

        mistral = Mistral(**kwargs)

        def send(png: bytes) -> Any:
            content = [
                {"type": "text", "text": QUESTION},
                {"type": "image_url", "image_url": {"url": _data_url(png)}},
            ]
            return mistral.chat.complete(model=model, messages=[_user(content)])

    elif provider == "ollama":
        import ollama

        client = ollama.Client(**kwargs)

        def send(png: bytes) -> Any:
            image = base64.b64encode(png).decode()
            return client.chat(model=model, messages=[{**_user(QUESTION), "images": [image]}])

    elif provider == "anthropic":
        import anthropic

        messages = anthropic.Anthropic(**kwargs).messages

        def send(png: bytes) -> Any:
            data = base64.b64encode(png).decode()
            source = {"type": "base64", "media_type": "image/png", "data": data}
            content = [{"type": "text", "text": QUESTION}, {"type": "image", "source": source}]
            return messages.create(model=model, max_tokens=4096, messages=[_user(content)])

    elif provider == "bedrock":
        import boto3

        bedrock = boto3.client(**kwargs)

        def send(png: bytes) -> Any:
            content = [{"text": QUESTION}, {"image": {"format": "png", "source": {"bytes": png}}}]
            return bedrock.converse(modelId=model, messages=[_user(content)])

    else:
        from google import genai
        from google.genai import types

        gemini = genai.Client(**kwargs)  # held: a collected Client closes its HTTP client

        def send(png: bytes) -> Any:
            image = types.Part.from_bytes(data=png, mime_type="image/png")
            content = types.Content(role="user", parts=[types.Part(text=QUESTION), image])
            return gemini.models.generate_content(model=model, contents=[content])

    return send


def _user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content}


def zerda_sender(provider: str, options: dict[str, Any]) -> Callable[[bytes], Any]:
    from zerda.llm import create_interface, image

    llm = create_interface(provider, model=MODELS[provider], raise_errors=True, **options)

    def send(png: bytes) -> Any:
        return llm.generate([_user([{"type": "text", "text": QUESTION}, image(png)])])

    return send


# --- one measurement, in its own process -------------------------------------------------------


def measure(provider: str, side: str, port: int) -> dict[str, Any]:
    """Peak bytes allocated while sending the image once (clients built and one warm-up
    call made with a tiny image first, so imports and set-up are outside the figure)."""
    from zerda.testing import MockLLMServer

    addr = MockLLMServer(port=port)  # unstarted: its address helpers only
    tiny = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
    if side == "raw":
        send = raw_sender(provider, addr.sdk_client_kwargs(provider))
    else:
        send = zerda_sender(provider, addr.client_options(provider))
    send(tiny)
    png = payload()
    cpu = []
    for _ in range(9):  # CPU first, untraced (tracemalloc slows every allocation down)
        start = time.process_time()
        send(png)
        cpu.append(time.process_time() - start)
    _count_encodings()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    send(png)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return {"peak": peak, "cpu_s": min(cpu), **ENCODINGS}


def run_child(provider: str, side: str, port: int) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", provider, side, str(port)],
        capture_output=True,
        text=True,
        env=child_env(),
        check=False,
    )
    if out.returncode:
        return {"error": (out.stderr.strip().splitlines() or ["failed"])[-1]}
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def mib(n: int) -> str:
    return f"{n / 1024 / 1024:.1f}"


def table(rows: dict[str, dict[str, dict[str, Any]]]) -> str:
    lines = [
        "| provider | raw SDK peak MiB | Zerda peak MiB | ratio | raw SDK CPU ms | Zerda CPU ms "
        "| CPU ratio | base64 encodings, raw: caller + SDK | base64 encodings, Zerda: Zerda + SDK |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for provider, sides in rows.items():
        raw, zerda = sides["raw"], sides["zerda"]
        if "error" in raw or "error" in zerda:
            lines.append(
                f"| {provider} | failed: {raw.get('error') or zerda.get('error')} ||||||||"
            )
            continue
        ratio = zerda["peak"] / raw["peak"]
        mark = " ⚠" if ratio > GOAL else ""  # bytes: no noise to round away
        cpu = ""
        if "cpu_s" in raw and "cpu_s" in zerda:
            cpu_ratio = zerda["cpu_s"] / raw["cpu_s"] if raw["cpu_s"] else float("nan")
            cpu = f"{raw['cpu_s'] * 1e3:,.1f} | {zerda['cpu_s'] * 1e3:,.1f} | {cpu_ratio:.2f}x" + (
                " ⚠" if round(cpu_ratio, 2) > CPU_GOAL else ""
            )
        else:
            cpu = " |  | "
        lines.append(
            f"| {provider} | {mib(raw['peak'])} | {mib(zerda['peak'])} | {ratio:.2f}x{mark} "
            f"| {cpu} | {raw['caller']} + {raw['sdk']} | {zerda['zerda']} + {zerda['sdk']} |"
        )
    return "\n".join(lines)


def write_section(text: str, path: Path = HERE / "RESULTS.md") -> None:
    """RESULTS.md's "## Image payload" section replaced (or appended)."""
    current = path.read_text()
    head, found, rest = current.partition(SECTION)
    tail = rest[rest.find("\n## ") :] if found and "\n## " in rest else ""
    path.write_text(head.rstrip() + "\n\n" + text.rstrip() + "\n" + tail)


def run_all(providers: list[str]) -> dict[str, dict[str, dict[str, Any]]]:
    """Both sides of every provider, each in its own process, against one lenient mock."""
    rows: dict[str, dict[str, dict[str, Any]]] = {}
    # Lenient: Anthropic (5 MB) and Bedrock (3.75 MB) take smaller images than this one,
    # and the strict mock refuses it as they do; the client's memory is what is measured.
    with serve(strict=False) as port:
        for provider in providers:
            rows[provider] = {side: run_child(provider, side, port) for side in ("raw", "zerda")}
            print(f"[image] {provider}: {rows[provider]}", file=sys.stderr, flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--providers", default=",".join(PROVIDERS))
    parser.add_argument("--write", action="store_true", help="update RESULTS.md")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        provider, side, port = args.child
        print(json.dumps(measure(provider, side, int(port))))
        return 0
    rows = run_all(args.providers.split(","))
    text = "\n\n".join([SECTION, DESCRIPTION, table(rows)])
    print(text)
    if args.write:
        write_section(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
