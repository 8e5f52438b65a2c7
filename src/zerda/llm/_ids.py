"""Tool-call id rules: the id each provider is sent for a history tool call and its result.

A registry row names its rule (``Traits.tool_id``); the shared base applies it once per
request through :func:`zerda.llm.messages.resolve_tool_ids`, so a call and its result always
get the same id. Every rule is deterministic: the same history gives the same ids.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable

IdRule = Callable[[str | None, int, int], str | None]

# Anthropic: tool_use.id must match ^[a-zA-Z0-9_-]+$
# (https://docs.anthropic.com/en/api/messages, tool_use content block).
_ANTHROPIC_BAD = re.compile(r"[^a-zA-Z0-9_-]")
# Bedrock toolUseId: the Converse model allows [a-zA-Z0-9_.:-]{1,64}, but models behind
# Converse (Anthropic's) accept only [a-zA-Z0-9_-]; ids outside the stricter rule are mapped.
_BEDROCK_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
# https://docs.mistral.ai/capabilities/function_calling/ - ids the API accepts.
_MISTRAL_ID = re.compile(r"[a-zA-Z0-9]{9}")
_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def keep(orig: str | None, index: int, j: int) -> str | None:
    """Keeps an existing id; synthesises a deterministic one for an id-less call."""
    return orig if orig else f"call_{index}_{j}"


def optional(orig: str | None, index: int, j: int) -> str | None:
    """Providers that need no ids (Gemini, Ollama): a call's own id is sent back, an id-less
    call stays id-less and its result is matched by position."""
    return orig or None


def anthropic(orig: str | None, index: int, j: int) -> str | None:
    """Foreign ids outside ``^[a-zA-Z0-9_-]+$`` have their other characters replaced."""
    if orig and _ANTHROPIC_BAD.search(orig):
        return _ANTHROPIC_BAD.sub("_", orig)
    return keep(orig, index, j)


def bedrock(orig: str | None, index: int, j: int) -> str | None:
    """``[a-zA-Z0-9_-]{1,64}``: bad characters replaced, a long id shortened with a digest."""
    if not orig:
        return f"tooluse_{index}_{j}"
    if _BEDROCK_ID.fullmatch(orig):
        return orig
    cleaned = _ANTHROPIC_BAD.sub("_", orig)
    if len(cleaned) <= 64 and cleaned != orig:
        return cleaned
    digest = hashlib.sha256(orig.encode("utf-8")).hexdigest()[:12]
    return f"{cleaned[:51]}_{digest}"


def mistral(orig: str | None, index: int, j: int) -> str | None:
    """A 9-character ``[a-zA-Z0-9]`` id: Mistral's own ids unchanged, any other id (or an
    id-less call's position) mapped deterministically, so a call and its result agree."""
    if orig and _MISTRAL_ID.fullmatch(orig):
        return orig
    seed = orig if orig else f"call_{index}_{j}"
    number = int.from_bytes(hashlib.sha256(seed.encode("utf-8")).digest()[:8], "big")
    chars = []
    for _ in range(9):
        number, digit = divmod(number, len(_ALPHABET))
        chars.append(_ALPHABET[digit])
    return "".join(chars)


ID_RULES: dict[str, IdRule] = {
    "keep": keep,
    "optional": optional,
    "anthropic": anthropic,
    "bedrock": bedrock,
    "mistral": mistral,
}
