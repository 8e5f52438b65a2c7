"""Tool-call ids in each provider's own style, for scripts that give none."""

from __future__ import annotations

import secrets
import string

_ALNUM = string.ascii_letters + string.digits


def _alnum(n: int) -> str:
    return "".join(secrets.choice(_ALNUM) for _ in range(n))


def openai_call_id() -> str:
    """``call_`` + 24 alphanumerics, as OpenAI and Groq send."""
    return "call_" + _alnum(24)


def mistral_call_id() -> str:
    """9 characters ``[a-zA-Z0-9]``, the only form Mistral accepts back."""
    return _alnum(9)


def anthropic_call_id() -> str:
    """``toolu_01`` + 22 alphanumerics."""
    return "toolu_01" + _alnum(22)


def bedrock_call_id() -> str:
    """``tooluse_`` + 22 characters."""
    return "tooluse_" + _alnum(22)


def completion_id(prefix: str = "chatcmpl-") -> str:
    """A response id such as OpenAI's ``chatcmpl-…``."""
    return prefix + _alnum(29)


def message_id(prefix: str = "msg_01") -> str:
    """A message id such as Anthropic's ``msg_01…``."""
    return prefix + _alnum(22)
