"""Groq's fast path (DESIGN §22): the OpenAI-shaped one (wires/openai/fastpath.py) on the
``groq`` SDK, a Stainless SDK like ``openai``, so the same names under its module."""

from __future__ import annotations

from zerda.llm._fastpath import PrivateName
from zerda.llm.wires.openai.fastpath import stainless_names

PRIVATE_NAMES: tuple[PrivateName, ...] = stainless_names(
    "groq", ("Groq", "AsyncGroq"), ("chat", "Completions")
)
