"""The ``zerda`` command: demo, chat, tools convert, mock-server (DESIGN.md §10).

Errors are printed as one line on stderr with a non-zero exit code, never a traceback.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click

from zerda.llm import registry


def _fail(message: str) -> NoReturn:
    raise click.ClickException(message)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="zerda-llm")
def main() -> None:
    """Zerda: one way to call LLMs with tools on every provider."""
    # A failed call is printed as one error line; without a handler the library's WARNING
    # log record would reach stderr too (through logging's last resort).
    logging.getLogger("zerda").addHandler(logging.NullHandler())


# --- demo ---------------------------------------------------------------------------


def get_weather(city: str, unit: str = "celsius") -> dict[str, Any]:
    """Current weather for a city.

    Args:
        city: The city, e.g. "Paris".
        unit: "celsius" or "fahrenheit".
    """
    return {
        "city": city,
        "temperature": 18 if unit == "celsius" else 64,
        "unit": unit,
        "sky": "sunny",
    }


def _native_tools(provider: str, body: Any) -> Any:
    """The tool definitions as the provider's SDK put them on the wire."""
    if not isinstance(body, dict):
        return None
    from zerda.testing.wires import mock_wire

    return body.get(mock_wire(registry.get(provider).wire).tools_field)


def _demo_one(server: Any, provider: str) -> dict[str, Any]:
    from zerda.llm import create_interface

    server.enqueue(provider, tool_calls=[{"name": "get_weather", "arguments": {"city": "Paris"}}])
    server.enqueue(provider, text="It is 18 °C and sunny in Paris.")
    llm = create_interface(
        provider,
        model=registry.get(provider).demo_model,
        max_retries=0,
        **server.client_options(provider),
    )
    result = llm.run("What's the weather in Paris?", tools=[get_weather])
    first = server.requests_for(provider)[0]
    calls: list[Any] = next(
        (
            m["tool_calls"]
            for m in result["messages"]
            if m["role"] == "assistant" and m.get("tool_calls")
        ),
        [],
    )
    return {"result": result, "native_tools": _native_tools(provider, first.body), "calls": calls}


@main.command()
@click.option("--provider", "providers", multiple=True, help="Only these providers (repeatable).")
@click.option("--verbose", is_flag=True, help="Also print the native tool shape each SDK sent.")
def demo(providers: tuple[str, ...], verbose: bool) -> None:
    """Offline tool-calling round trip through every provider on the built-in mock server:
    one line per provider."""
    from zerda.testing import MockLLMServer

    try:
        chosen = [registry.canonical_name(p) for p in providers] or list(registry.NAMES)
    except ValueError as exc:
        _fail(str(exc))
    width = max(len(p) for p in chosen)
    ok = 0
    with MockLLMServer() as server:
        for provider in chosen:
            passed, line = _demo_line(server, provider, verbose)
            click.echo(f"{provider:<{width}}  {line}")
            ok += passed
    click.echo(f"{ok}/{len(chosen)} providers completed a tool-calling round trip")
    if ok != len(chosen):
        sys.exit(1)


def _demo_line(server: Any, provider: str, verbose: bool) -> tuple[bool, str]:
    """(whether the round trip completed, the provider's line of the demo)."""
    try:
        out = _demo_one(server, provider)
    except Exception as exc:  # the demo reports every provider, whatever fails
        return False, f"failed: {type(exc).__name__}: {exc}"
    result = out["result"]
    passed = result["stop_reason"] == "end_turn" and bool(out["calls"])
    calls = ", ".join(f"{c['name']}({json.dumps(c['arguments'])})" for c in out["calls"])
    line = (
        f"{'ok' if passed else 'FAILED'}  {calls} -> {result['content']}  ({result['turns']} turns)"
    )
    if verbose:
        line += "\n  native tool shape sent: " + json.dumps(out["native_tools"])
    return passed, line


# --- chat ---------------------------------------------------------------------------


def _load_function(spec: str) -> Callable[..., Any]:
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        _fail(f"--tool {spec!r}: expected module:function")
    # The `zerda` console script's sys.path starts with its own bin folder, not the current
    # one: a tools module next to the user (python -m's behaviour) is found too.
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        fn = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        _fail(f"--tool {spec!r}: {exc}")
    if not callable(fn):
        _fail(f"--tool {spec!r} is not callable")
    return fn  # type: ignore[no-any-return]


@main.command()
@click.argument("target", metavar="PROVIDER:MODEL")
@click.argument("prompt")
@click.option(
    "--tool",
    "tool_specs",
    multiple=True,
    metavar="MODULE:FUNCTION",
    help="A Python function the model may call (repeatable); runs the tool loop.",
)
@click.option("--system", help="System prompt.")
@click.option("--stream", is_flag=True, help="Print text as it arrives.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole result as JSON.")
@click.option(
    "--base-url", help="Send requests to this URL (a proxy, a local server, MockLLMServer)."
)
@click.option(
    "--api-key", envvar=None, help="API key (default: the provider's environment variable)."
)
@click.option("--max-tokens", type=int, help="Token limit for the answer.")
@click.option("--max-turns", type=int, default=10, show_default=True, help="Tool loop limit.")
@click.option(
    "--region", help="The region (Bedrock, Claude on Bedrock or Vertex) or location (Vertex)."
)
def chat(
    target: str,
    prompt: str,
    tool_specs: tuple[str, ...],
    system: str | None,
    stream: bool,
    as_json: bool,
    base_url: str | None,
    api_key: str | None,
    max_tokens: int | None,
    max_turns: int,
    region: str | None,
) -> None:
    """A real call to PROVIDER:MODEL (keys from the environment); runs the tool loop with --tool."""
    from zerda.llm import create_interface

    if ":" not in target:
        _fail(f"{target!r}: expected PROVIDER:MODEL, e.g. openai:gpt-4o-mini")
    options = _chat_options(target.split(":", 1)[0], base_url, api_key, region)
    try:
        llm = create_interface(target, **options)
    except (ValueError, ImportError) as exc:
        _fail(str(exc))
    tools = [_load_function(s) for s in tool_specs]
    kwargs: dict[str, Any] = {"system": system, "max_tokens": max_tokens}
    if tools:  # the tool loop does not stream: --stream prints the answer once, at the end
        result = llm.run(prompt, tools=tools, max_turns=max_turns, **kwargs)
        if not as_json:
            _print_tools_run(result.get("messages") or [])
    elif stream:
        result = _stream(llm, prompt, as_json, kwargs)
    else:
        result = llm.generate(prompt, **kwargs)
    _print_result(result, as_json, printed=stream and not tools)


def _chat_options(
    provider: str, base_url: str | None, api_key: str | None, region: str | None
) -> dict[str, Any]:
    """The interface options of ``chat``; ``--region`` goes to the option the row names."""
    options: dict[str, Any] = {"base_url": base_url} if base_url else {}
    if api_key:
        options["api_key"] = api_key
    if region:
        try:
            option = registry.get(provider).region_option
        except ValueError as exc:
            _fail(str(exc))
        if option is None:
            takes = ", ".join(p.name for p in registry.REGISTRY.values() if p.region_option)
            _fail(f"--region: {provider} takes no region (rows that do: {takes})")
        options[option] = region
    return options


def _print_tools_run(messages: list[dict[str, Any]]) -> None:
    """One line on stderr per tool the loop ran (stdout keeps the answer alone)."""
    pending: list[dict[str, Any]] = []
    for message in messages:
        if message.get("role") == "assistant":
            pending = list(message.get("tool_calls") or [])
        elif message.get("role") == "tool":
            call = _answered_call(pending, message.get("tool_call_id"))
            output = message["content"]
            shown = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
            status = "error" if message.get("is_error") else "ran"
            arguments = json.dumps(call.get("arguments", {}), ensure_ascii=False)
            click.echo(f"{status} {message['name']}({arguments}) -> {_cut(shown)}", err=True)


def _answered_call(pending: list[dict[str, Any]], call_id: Any) -> dict[str, Any]:
    """The call a tool message answers: by id, else the turn's next call (DESIGN §4)."""
    call = next((c for c in pending if call_id is not None and c["id"] == call_id), None)
    if call is None and pending:
        call = pending[0]
    if call is not None:
        pending.remove(call)
    return call or {}


def _cut(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _stream(llm: Any, prompt: str, as_json: bool, kwargs: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for event in llm.stream(prompt, **kwargs):
        if event["type"] == "text" and not as_json:
            click.echo(event["text"], nl=False)
        elif event["type"] == "done":
            result = event["result"]
    if not as_json:
        click.echo()
    return result


def _print_result(result: dict[str, Any], as_json: bool, printed: bool) -> None:
    if as_json:
        click.echo(json.dumps(result, indent=2, ensure_ascii=False))
    elif not printed and result.get("stop_reason") != "error":
        click.echo(result.get("content") or "")
        for call in result.get("tool_calls") or []:
            click.echo(f"tool call: {call['name']}({json.dumps(call['arguments'])})")
    if result.get("stop_reason") == "error":
        error = result["error"]
        _fail(f"{error['provider']} {error['type']}: {error['message']}")


# --- tools convert ------------------------------------------------------------------


@main.group()
def tools() -> None:
    """Tool definition utilities."""


@tools.command("convert")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--to",
    "provider",
    required=True,
    help=f"Target provider ({', '.join(registry.NAMES)}).",
)
def convert(file: Path, provider: str) -> None:
    """Unified (or OpenAI-style) tool definitions in FILE to the provider's native shape, with
    the tool names the provider refuses mapped as generate maps them (listed on stderr)."""
    from zerda.llm import _names
    from zerda.llm import tools as converters
    from zerda.llm._request import normalize_tools
    from zerda.llm.errors import ZerdaError

    try:
        spec = registry.get(provider)
        data = json.loads(file.read_text())
        unified = normalize_tools(data if isinstance(data, list) else [data])
        traits = spec.traits
        names = [t["name"] for t in unified or ()]
        mapping = _names.name_map(names, traits.tool_name, traits.tool_name_rule, spec.name)
        renamed = _names.rename_tools(unified, mapping)
        # the wire protocol says the native shape
        native = getattr(converters, f"to_{spec.wire.replace('-', '_')}_tools")(renamed)
    except (ValueError, ZerdaError) as exc:
        _fail(f"{file}: {exc}")
    click.echo(json.dumps(native, indent=2, ensure_ascii=False))
    for original, sent in mapping.items():
        click.echo(f"tool name {original!r} is sent to {spec.name} as {sent!r}", err=True)


# --- mock-server --------------------------------------------------------------------


DEFAULT_MOCK_ANSWER = "Hello from MockLLMServer."


@main.command("mock-server")
@click.option(
    "--port",
    type=int,
    default=8080,
    show_default=True,
    help="Port on 127.0.0.1 (0: any free port).",
)
@click.option(
    "--script",
    "script",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A JSON file of responses to queue (see docs/testing.md, Script files).",
)
@click.option(
    "--default-text",
    default=DEFAULT_MOCK_ANSWER,
    show_default=True,
    help="The answer once the queue is empty (a script's own default wins).",
)
@click.option("--lenient", is_flag=True, help="Do not validate requests (strict=False).")
def mock_server(port: int, script: Path | None, default_text: str, lenient: bool) -> None:
    """Run MockLLMServer in the foreground, printing each provider's base URL."""
    from zerda.testing import MockLLMServer

    server = MockLLMServer(port=port, strict=not lenient)
    server.set_default(text=default_text)
    queued = 0
    if script is not None:
        try:
            queued = server.load_script(script)
        except ValueError as exc:
            _fail(str(exc))
    try:
        server.start()
    except OSError as exc:
        _fail(f"cannot listen on 127.0.0.1:{port}: {exc}")
    click.echo(f"MockLLMServer on {server.url} (Ctrl-C to stop)", nl=False)
    click.echo(f"; {queued} queued response(s) from {script}" if script else "")
    for provider in registry.NAMES:
        click.echo(f"  {provider:<10} {server.base_url(provider)}")
    try:
        while True:  # the server runs in its thread; wait here for Ctrl-C
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":  # pragma: no cover
    main()
