"""The Responses API's fast path (DESIGN §22): the body through ``client.post`` to
``/responses`` as Chat Completions' goes (wires/openai/fastpath.py), its keywords checked
against ``responses.create()``."""

from __future__ import annotations

from zerda.llm._fastpath import PrivateName
from zerda.llm.wires.openai.fastpath import stainless_names

PRIVATE_NAMES: tuple[PrivateName, ...] = stainless_names(
    "openai", ("OpenAI", "AsyncOpenAI"), ("responses", "Responses")
)
