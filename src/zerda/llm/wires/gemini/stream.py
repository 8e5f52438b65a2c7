"""Gemini's stream on the fast path, read as the JSON the API sends (issue 37).

``streamGenerateContent`` with ``alt=sse`` sends each chunk as one SSE ``data:`` event
holding a whole ``GenerateContentResponse`` JSON object
(https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent).
google-genai's ``generate_content_stream`` makes each of them a pydantic
``GenerateContentResponse`` (most of a stream's CPU): Zerda reads the parsed JSON as it is,
as its OpenAI and Anthropic wires do, and checks the few fields it reads
(:func:`first_candidate`, :func:`candidate_parts`, :func:`signature`...): a chunk that does
not fit the API's shapes is a malformed response, as google-genai's refusal was.

:class:`Hops` is google-genai 3.x's automatic continuation of a stream
(``_extra_utils.StreamContinuation``, which reads its pydantic chunks) over the JSON
chunks: a stream that ends or drops after a checkpoint ``continuationToken`` is asked for
again from it, its hops' usage summed, an intermediate finish reason cleared, exactly as
``generate_content_stream`` does (tests/llm/providers/test_gemini_continuation.py and
tests/llm/wires/gemini/test_stream_json.py compare the two).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from zerda.llm.errors import excerpt

Chunk = dict[str, Any]

# google-genai's MAX_STREAM_RECONNECTS_WITHOUT_PROGRESS: hops in a row that bring no new
# checkpoint before the stream gives up.
MAX_RECONNECTS = 3
# Candidate.finishReason CONTINUATION: "the model stopped at a checkpoint; continue with
# the continuation token" (google-genai's FinishReason).
CONTINUATION = "CONTINUATION"


# --- reading a chunk's JSON -----------------------------------------------------------------


class BadChunk(ValueError):
    """A chunk that does not fit the API's shapes: the interface's _map_error makes it the
    row's malformed response (errors.malformed_response)."""


def _bad(what: str, value: Any) -> BadChunk:
    return BadChunk(f"{what} is not as the API sends it: {excerpt(value)}")


def checked(chunk: Any) -> Chunk:
    """One chunk: a JSON object (the Go SDK's integer-enum array, for one, is not)."""
    if not isinstance(chunk, dict):
        raise _bad("a stream chunk", chunk)
    return chunk


def first_candidate(chunk: Chunk) -> Chunk | None:
    """``candidates[0]`` (Zerda asks for one candidate), None when there is none."""
    candidates = chunk.get("candidates")
    if not candidates:
        return None
    if not isinstance(candidates, list) or not isinstance(candidates[0], dict):
        raise _bad("candidates", candidates)
    return candidates[0]


def candidate_parts(candidate: Chunk | None) -> list[Chunk]:
    """The candidate's ``content.parts``, each a JSON object."""
    content = candidate.get("content") if candidate is not None else None
    if content is None:
        return []
    parts = content.get("parts") if isinstance(content, dict) else content
    if parts is None:
        return []
    if not isinstance(parts, list) or not all(isinstance(p, dict) for p in parts):
        raise _bad("content.parts", parts)
    return parts


def finish_reason(candidate: Chunk | None) -> str | None:
    """``finishReason``: an enum's name (the Go SDK's integer enums are not)."""
    reason = candidate.get("finishReason") if candidate is not None else None
    if reason is not None and not isinstance(reason, str):
        raise _bad("finishReason", reason)
    return reason or None


def block_reason(chunk: Chunk) -> str | None:
    """``promptFeedback.blockReason``: why the prompt was blocked, if it was."""
    feedback = chunk.get("promptFeedback")
    if feedback is None:
        return None
    reason = feedback.get("blockReason") if isinstance(feedback, dict) else feedback
    if reason is not None and not isinstance(reason, str):
        raise _bad("promptFeedback", feedback)
    return reason or None


def decoded(text: Any, what: str) -> bytes:
    """A protobuf ``bytes`` field's JSON text: standard or URL-safe base64, padding
    optional (https://protobuf.dev/programming-guides/json/), as google-genai reads it."""
    if not isinstance(text, str):
        raise _bad(what, text)
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        raise _bad(what, text) from None


def signature(part: Chunk) -> str | None:
    """A part's ``thoughtSignature`` as the standard, padded base64 generate gives."""
    text = part.get("thoughtSignature")
    if not text:
        return None
    raw = decoded(text, "thoughtSignature")
    return base64.b64encode(raw).decode("ascii") if raw else None


def function_call(part: Chunk) -> Chunk | None:
    """A part's ``functionCall``: ``name`` text, ``args`` an object (Gemini never sends
    argument text), ``id`` text when there."""
    call = part.get("functionCall")
    if call is None:
        return None
    args = call.get("args") if isinstance(call, dict) else None
    if (
        not isinstance(call, dict)
        or not isinstance(call.get("name"), str)
        or not isinstance(args, (dict, type(None)))
        or not isinstance(call.get("id"), (str, type(None)))
    ):
        raise _bad("functionCall", call)
    return call


_USAGE_KEYS = (
    "promptTokenCount",
    "toolUsePromptTokenCount",
    "candidatesTokenCount",
    "thoughtsTokenCount",
    "cachedContentTokenCount",
    "totalTokenCount",
)


def usage_counts(chunk: Chunk) -> dict[str, int | None] | None:
    """``usageMetadata``'s counts (https://ai.google.dev/api/generate-content#UsageMetadata),
    None without usage; each an integer or absent."""
    usage = chunk.get("usageMetadata")
    if usage is None:
        return None
    if not isinstance(usage, dict):
        raise _bad("usageMetadata", usage)
    counts = {key: usage.get(key) for key in _USAGE_KEYS}
    if any(v is not None and (type(v) is not int) for v in counts.values()):
        raise _bad("usageMetadata", usage)
    return counts


def is_empty(chunk: Chunk) -> bool:
    """No candidates, no prompt feedback and no usage (as the interface's _is_empty)."""
    return (
        not chunk.get("candidates")
        and chunk.get("promptFeedback") is None
        and chunk.get("usageMetadata") is None
    )


# --- continuation -------------------------------------------------------------------------


class _Hop:
    """What one hop (HTTP request) of a stream brought (google-genai's ``_StreamHop``). A
    plain class: a dataclass costs its import time to every interface built."""

    __slots__ = ("start", "token", "finish", "feedback", "content", "received", "usage")

    def __init__(self, start: bytes | None = None) -> None:
        self.start = start  # the token it was asked with
        self.token: bytes | None = None  # the latest checkpoint it sent
        self.finish: str | None = None
        self.feedback = False
        self.content = False  # it yielded candidate parts
        self.received = False  # it yielded any chunk
        self.usage: Chunk | None = None  # the stream's usage so far (earlier hops' + its own)


class Hops:
    """google-genai's ``StreamContinuation`` over JSON chunks: :meth:`start` gives a hop's
    token, :meth:`observe` each chunk (returned as it is, or a copy with the usage summed
    over the hops and an intermediate finish reason cleared, as google-genai yields it),
    :meth:`end` whether another hop follows (else the hop's error is raised)."""

    def __init__(self, continuation: bool) -> None:
        self.enabled = continuation
        self.summed: Chunk | None = None  # the finished hops' usage
        self.resume: bytes | None = None
        self.reconnects = 0
        self.last_error: Exception | None = None
        self.hop = _Hop()

    def start(self) -> bytes | None:
        self.hop = _Hop(start=self.resume)
        return self.resume

    def observe(self, chunk: Any) -> Chunk:
        hop = self.hop
        hop.received = True
        chunk = checked(chunk)
        if chunk.get("promptFeedback") is not None:
            hop.feedback = True
        candidate = first_candidate(chunk)
        if candidate is not None:
            chunk = self._checkpoint(chunk, candidate)
        usage = chunk.get("usageMetadata")
        if usage is not None:
            if self.summed is not None:
                usage = summed_usage(self.summed, usage)
                chunk = {**chunk, "usageMetadata": usage}
            hop.usage = usage
        return chunk

    def _checkpoint(self, chunk: Chunk, candidate: Chunk) -> Chunk:
        """The candidate's content, finish reason and checkpoint token; the chunk without
        its finish reason where the stream goes on (clear_intermediate_finish_reason)."""
        hop = self.hop
        if candidate_parts(candidate):
            hop.content = True
        finish = finish_reason(candidate)
        if finish:
            hop.finish = finish
        token = candidate.get("continuationToken")
        if token:
            hop.token = decoded(token, "continuationToken")
        elif finish and not _resumable(finish):
            hop.token = None
        if not (finish and self._resumes(hop.token, finish, False)):
            return chunk
        cleared = {**candidate, "finishReason": None}
        return {**chunk, "candidates": [cleared, *chunk["candidates"][1:]]}

    def _resumes(self, token: bytes | None, finish: str | None, feedback: bool) -> bool:
        return bool(self.enabled and token and not feedback and _resumable(finish))

    def end(self, error: Exception | None) -> bool:
        """After a hop: True to start another; else the hop's error, or the last one since
        the stream made progress when it gave up, is raised (StreamContinuation.end_hop)."""
        from google.genai import errors

        hop = self.hop
        if hop.usage is not None:
            self.summed = hop.usage
        if isinstance(error, errors.APIError) and not hop.received:
            raise error  # refused before streaming: the interface's retries decide
        if error is not None:
            self.last_error = error
        elif hop.content or (hop.token and hop.token != hop.start):
            self.last_error = None
        self.resume, self.reconnects = self._next_resume()
        if self._resumes(self.resume, hop.finish, hop.feedback):
            return True
        if error is not None:
            raise error
        if hop.finish is None and not hop.feedback and self.last_error is not None:
            raise self.last_error
        return False

    def _next_resume(self) -> tuple[bytes | None, int]:
        """(the token the next hop resumes from, or None; hops in a row without progress):
        a new checkpoint, else the hop's own start while it yielded nothing."""
        hop = self.hop
        if hop.finish is not None or hop.feedback:
            new = hop.token and hop.token != hop.start
            if hop.finish == CONTINUATION and not hop.feedback and new:
                return hop.token, 0
            return None, 0
        if hop.token and hop.token != hop.start:
            return hop.token, 0
        if hop.content or self.reconnects >= MAX_RECONNECTS:
            return None, self.reconnects
        return hop.start, self.reconnects + 1


def _resumable(finish: str | None) -> bool:
    return finish is None or finish == CONTINUATION


def summed_usage(before: Chunk, usage: Chunk) -> Chunk:
    """Two hops' ``usageMetadata``: counts added, per-modality details added by modality,
    anything else the latest hop's (google-genai's merge_pydantic_models)."""
    merged = {**before, **usage}
    for key, value in usage.items():
        earlier = before.get(key)
        if earlier is None or value is None:
            merged[key] = value if earlier is None else earlier
        elif key.endswith(("Count", "Sum")) and _number(earlier) and _number(value):
            merged[key] = earlier + value
        elif key.endswith("Details") and isinstance(earlier, list) and isinstance(value, list):
            merged[key] = _modalities(earlier + value)
    return merged


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _modalities(details: list[Any]) -> list[Chunk]:
    """``ModalityTokenCount`` entries, one per modality, their ``tokenCount`` added."""
    counts: dict[Any, int] = {}
    for item in details:
        item = item if isinstance(item, dict) else {}
        modality = item.get("modality")
        counts[modality] = counts.get(modality, 0) + (item.get("tokenCount") or 0)
    return [{"modality": m, "tokenCount": n} for m, n in counts.items()]
