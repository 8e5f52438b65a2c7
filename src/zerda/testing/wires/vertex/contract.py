"""The contract suite's data about Gemini on Vertex AI: Gemini's."""

from __future__ import annotations

from typing import Any

from zerda.testing._wire import WireContract
from zerda.testing.wires.gemini.contract import GOOGLE_CODES, call_data, call_ids


def credentials(token: str) -> Any:
    """Google credentials holding ``token`` (the Google SDKs then never look for real ADC)."""
    from google.oauth2.credentials import Credentials

    return Credentials(token=token)


# No API key on Vertex AI: the secret is the access token of the credentials given.
CONTRACT = WireContract(
    call_ids,
    error_codes=GOOGLE_CODES,
    error_message="{code}: {message}",
    secret_option="credentials",
    secret_value=credentials,
    sdk_errors="google.genai",
    usage_counts=frozenset({"cache_read_tokens", "reasoning_tokens"}),
    call_data=call_data,  # the Gemini provider's own key, on Vertex AI too
)
