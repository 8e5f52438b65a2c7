"""What MockLLMServer knows about one wire protocol, declared once in that wire's folder.

Every wire of the registry (``zerda.llm.registry.wires()``) has a package
``zerda.testing.wires.<wire>`` (``-`` written ``_``) whose ``WIRE`` is a :class:`MockWire`:
its routes, how a test client is pointed at the mock, where its renderer, validation and
batch API live, its error and request-id conventions, and the data the provider contract
suite needs about it (:class:`WireContract`). The server reads these fields and never a
wire's name, so a new wire is one new folder.

The renderer, validation and batch modules are named, not imported: each is imported the
first time its wire is called, so a broken module only breaks its own wire.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from zerda.testing._script import ErrorReply, Raw, RecordedRequest

Options = Callable[[str], dict[str, Any]]  # the mock's base URL for a row -> keyword arguments
UnknownPath = Callable[[str, RecordedRequest], "ErrorReply | Raw"]


def key_options(base: str) -> dict[str, Any]:
    """Most SDKs: a base URL and an API key."""
    return {"base_url": base, "api_key": "test-key"}


def generic_unknown_path(provider: str, req: RecordedRequest) -> ErrorReply | Raw:
    """The mock's own 404 for a path a wire does not serve (no recorded body to copy)."""
    message = f"MockLLMServer: unknown path for {provider}: {req.method} {req.path}"
    return ErrorReply(404, message, fields={"code": None})


def hex_request_id() -> str:
    """``req_`` and 32 hex digits, as OpenAI's and Groq's ``x-request-id``."""
    return "req_" + uuid.uuid4().hex


@dataclass(frozen=True)
class WireContract:
    """What a wire protocol does its own way, as data, for ``tests/llm/providers/contract.py``."""

    call_ids: Callable[[dict[str, Any]], list[str | None]]  # history call ids, rules checked
    stream_fields: Mapping[str, Any] = field(default_factory=dict)  # added to stream bodies
    error_codes: Mapping[int, str] = field(default_factory=dict)  # native code sent per status
    error_message: str = "{message}"  # how Zerda shows the server's message and code
    secret_option: str = "api_key"  # the constructor option holding the secret
    # The option's value for a secret text (a credentials object holding it as its token).
    secret_value: Callable[[str], Any] = str
    sdk_errors: str = ""  # the module the SDK's exceptions come from (empty: the wire's name)
    # The cache and reasoning counts of a script's usage the wire carries to the result,
    # and those it reports as 0 when the script gives none (None: left out). MockLLMServer
    # sends them as the provider's recordings do.
    usage_counts: frozenset[str] = frozenset()
    usage_zeros: Mapping[str, int] = field(default_factory=dict)
    # The provider_data a turn of N calls comes back with (None: none), as the mock sends it.
    call_data: Callable[[int], dict[str, Any] | None] = lambda n: None
    # False where the SDK's documented call (``fast_path=False``) cannot carry tool-call ids
    # either way: the id checks of the contract are then skipped, with that reason.
    documented_call_keeps_ids: bool = True


@dataclass(frozen=True)
class MockWire:
    """One wire protocol on MockLLMServer (see the module docstring)."""

    routes: tuple[re.Pattern[str], ...]  # the endpoints its SDK calls, under /<provider>
    renderer: str  # the module rendering its answers (another wire's when they match)
    validator: str | None  # the module of its validation rules (None: not validated)
    contract: WireContract  # the contract suite's data about the wire
    base_path: str = ""  # what base_url(provider) adds after /<provider> (OpenAI's /v1)
    client_options: Options = key_options  # create_interface's keyword arguments
    sdk_client_kwargs: Options = key_options  # the SDK client constructor's
    required_query: str | None = None  # a query parameter the API refuses to answer without
    batch_paths: re.Pattern[str] | None = None  # its batch API's paths (None: no batch API)
    # Its token-counting endpoint's paths (None: none). A request there is validated, then
    # answered by the renderer's ``render_count`` from the next queued answer (a Script's
    # ``usage["input_tokens"]`` is the count) or, with nothing queued, from the request.
    count_paths: re.Pattern[str] | None = None
    batches: str | None = None  # the module serving them
    unknown_path: UnknownPath = generic_unknown_path  # the answer to a path it does not serve
    # Response headers carrying a request id (all set to one value) and how it is made.
    request_id_headers: tuple[str, ...] = ()
    request_id: Callable[[], str] = hex_request_id
    # The request body member holding the tool definitions (`zerda demo` shows them).
    tools_field: str = "tools"
    # The module reading a request as a model would (``read(req) -> RequestView``:
    # ``_modellike.py``), for ``MockLLMServer.answer_like_a_model`` (another wire's when
    # the bodies match; None: that mode answers the wire with text only).
    view: str | None = None


__all__ = [
    "MockWire",
    "Options",
    "UnknownPath",
    "WireContract",
    "generic_unknown_path",
    "hex_request_id",
    "key_options",
]
