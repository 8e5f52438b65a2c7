"""Fixtures for every test under tests/llm."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def gemini_wire_oracle(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every Gemini request a test builds is checked against google-genai's own converter
    (tests/llm/providers/gemini_oracle.py): the fast path's REST body is byte for byte, in
    JSON terms, what ``generate_content`` sent (a difference fails the test even where the
    call's errors are caught). Not while a profiler counts calls
    (test_history_linear)."""
    if "google.genai" not in sys.modules:
        try:
            import google.genai  # noqa: F401
        except ImportError:
            yield
            return
    from tests.llm.providers import gemini_oracle
    from zerda.llm.wires.gemini.interface import GeminiInterface

    build = GeminiInterface._build_request

    def checked(self: Any, req: Any) -> dict[str, Any]:
        native = build(self, req)
        # Off the fast path (no "body") google-genai writes the body itself.
        if sys.getprofile() is None and "body" in native:
            try:
                gemini_oracle.check(self, req, native)
            except Exception as exc:  # pytest.fail: not caught as a failed call would be
                pytest.fail(f"the Gemini body differs from google-genai's: {exc!r}")
        return native

    monkeypatch.setattr(GeminiInterface, "_build_request", checked)
    yield
