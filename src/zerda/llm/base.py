"""BaseLLMInterface: everything the providers share (its documented import path).

A provider subclass is a registry row (``zerda.llm.registry``) plus small hooks, each one
idea. The hooks every provider must write are abstract, so a class missing one cannot be
instantiated: ``_make_client``/``_make_async_client``, ``_build_request`` (unified
:class:`Request` -> the SDK call's keyword arguments), ``_call``/``_call_async`` (the only
sync/async difference), ``_map_response``, ``_map_stop_reason`` and, for streaming,
``_open_stream``/``_open_stream_async`` and ``_feed``. Optional hooks have defaults:
``_map_error``, ``_retry_delay``, ``_option_names`` (what ``**options`` may hold),
``_close_client``/``_aclose_client``, ``_batch_protocol``.

The class is built in :mod:`zerda.llm.interface`, one concern a module (the public API and
the abstract hooks in ``interface.api``); this module names it and what the first rounds
imported from here. The waits between retries are looked up here (``_sleep``,
``_sleep_async``), so that a test may replace them.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from zerda.llm import _lazy

# ``X as X``: importable from here as before the cut (the names wires and tests read; the
# truncation rule is looked up here when it applies, so a test may record its calls).
from zerda.llm._signatures import signature_options
from zerda.llm.errors import stream_ended_early as stream_ended_early
from zerda.llm.interface.api import BaseLLMInterface
from zerda.llm.interface.arguments import Secret
from zerda.llm.interface.arguments import _check_arguments as _check_arguments
from zerda.llm.interface.arguments import _fast_path_setting as _fast_path_setting
from zerda.llm.interface.arguments import _own_parameters as _own_parameters
from zerda.llm.interface.batch import BatchProtocol as BatchProtocol
from zerda.llm.interface.clients import _LoopCloser as _LoopCloser
from zerda.llm.interface.clients import _running_loop as _running_loop
from zerda.llm.interface.clients import require_sdk
from zerda.llm.interface.clients import without_sdk_retries as without_sdk_retries
from zerda.llm.interface.failures import _refused_argument as _refused_argument
from zerda.llm.interface.failures import _scrub_exception as _scrub_exception
from zerda.llm.interface.retrying import _RETRY_BUDGET as _RETRY_BUDGET

if TYPE_CHECKING:
    from zerda.llm._request import (
        MAX_SCHEMA_DEPTH,
        TOOL_CHOICES,
        Request,
        normalize_tool_choice,
        normalize_tools,
    )
    from zerda.llm.messages import tool_output_text as tool_output_text

# Kept importable from here for callers of the first round.
__all__ = [
    "MAX_SCHEMA_DEPTH",
    "TOOL_CHOICES",
    "BaseLLMInterface",
    "Request",
    "Secret",
    "normalize_tool_choice",
    "normalize_tools",
    "require_sdk",
    "signature_options",
]


# Loaded on first access, with the request checks: building an interface needs none of them
# (docs/decisions.md, "Building an interface loads only what building needs").
_LAZY = {
    "MAX_SCHEMA_DEPTH": "zerda.llm._request",
    "TOOL_CHOICES": "zerda.llm._request",
    "Request": "zerda.llm._request",
    "normalize_tool_choice": "zerda.llm._request",
    "normalize_tools": "zerda.llm._request",
    "tool_output_text": "zerda.llm.messages",
}


__getattr__ = _lazy.attributes(__name__, _LAZY)


# Waits between retries; tests replace it to record the waits instead of sleeping.
def _sleep(seconds: float) -> None:
    time.sleep(seconds)  # looked up per call, so a test may patch either name


async def _sleep_async(seconds: float) -> None:
    import asyncio  # already loaded: this runs on an event loop

    await asyncio.sleep(seconds)
