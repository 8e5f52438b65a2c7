"""Gemini on Vertex AI: the Gemini API's generateContent rules, on Vertex AI's paths."""

from __future__ import annotations

from zerda.testing._validate_gemini import rules_for

__all__ = ["rules_for"]
