"""Test helpers: a local server speaking seven LLM providers' wire protocols.

from zerda.testing import MockLLMServer

with MockLLMServer() as server:
    server.enqueue("openai", text="hi")
    ...  # point an SDK or zerda at server.base_url("openai")
"""

from __future__ import annotations

from zerda.testing._render_gemini import THOUGHT_SIGNATURE as GEMINI_THOUGHT_SIGNATURE
from zerda.testing._script import (
    ErrorReply,
    Fault,
    Raw,
    RecordedRequest,
    Reply,
    Responder,
    Script,
    ScriptedCall,
)
from zerda.testing._server import PROVIDERS, MockLLMServer

__all__ = [
    "GEMINI_THOUGHT_SIGNATURE",
    "PROVIDERS",
    "ErrorReply",
    "Fault",
    "MockLLMServer",
    "Raw",
    "RecordedRequest",
    "Reply",
    "Responder",
    "Script",
    "ScriptedCall",
]
