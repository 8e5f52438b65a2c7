"""Test helpers: a local server speaking every LLM provider's wire protocol.

from zerda.testing import MockLLMServer

with MockLLMServer() as server:
    server.enqueue("openai", text="hi")
    ...  # point an SDK or zerda at server.base_url("openai")
"""

from __future__ import annotations

from zerda.testing._modellike import model_like_answer
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
from zerda.testing.wires.gemini.render import THOUGHT_SIGNATURE as GEMINI_THOUGHT_SIGNATURE

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
    "model_like_answer",
]
