"""The private google-genai names Gemini's fast path (:mod:`zerda.llm.wires.gemini.sdk`)
relies on, as one table (DESIGN §22), walked by tests/llm/wires/test_private_names.py.

An interface built with ``fast_path=False``, or on a google-genai lacking one of them,
calls ``client.models.generate_content`` / ``generate_content_stream`` (and their
``client.aio`` twins) instead: :mod:`zerda.llm.wires.gemini.documented`.
"""

from __future__ import annotations

from zerda.llm._fastpath import PrivateName

_REQUEST = ("http_method", "path", "request_dict", "http_options")
_CONVERTER = ("from_object", "parent_object", "root_object")
_API = "google.genai._api_client"

GENERATE_NAMES: tuple[PrivateName, ...] = (
    PrivateName(
        "google.genai.client",
        "Client.__init__",
        "the client's API client, which posts Zerda's body",
        assigns=("_api_client",),
    ),
    PrivateName(
        "google.genai.client",
        "AsyncClient.__init__",
        "as Client's",
        assigns=("_api_client",),
    ),
    PrivateName(_API, "BaseApiClient.vertexai", "which API the body is written for"),
    PrivateName(
        _API,
        "BaseApiClient.request",
        "posts generateContent, and countTokens (count.py)",
        keywords=_REQUEST,
    ),
    PrivateName(_API, "BaseApiClient.async_request", "as request", keywords=_REQUEST),
    PrivateName(_API, "SdkHttpResponse", "the answer's body and headers"),
    # generateContent's body goes as Zerda's bytes (sdk.py's _post): request()'s two
    # steps, its HttpRequest's data the bytes, which the sender sends as they are, where
    # request() writes its dict as JSON text and bytes (an image's text copied twice).
    PrivateName(_API, "BaseApiClient._build_request", "request()'s first step", keywords=_REQUEST),
    PrivateName(
        _API,
        "BaseApiClient._request",
        "request()'s second step: sends it",
        keywords=("http_request", "http_options", "stream"),
    ),
    PrivateName(
        _API,
        "BaseApiClient._async_request",
        "as _request",
        keywords=("http_request", "http_options", "stream"),
    ),
    PrivateName(
        _API,
        "BaseApiClient.__init__",
        "the client's http_options (an extra_body there is merged into the dict)",
        assigns=("_http_options",),
    ),
    PrivateName(_API, "HttpRequest", "data: bytes sent as they are", keywords=("data",)),
    PrivateName(_API, "HttpResponse", "the answer's text", keywords=("headers", "response_stream")),
    PrivateName(
        "google.genai._transformers",
        "t_model",
        "the model's path on each API (generateContent's, countTokens')",
        keywords=("client", "model"),
    ),
    PrivateName(
        "google.genai.models",
        "_GenerateContentConfig_to_mldev",
        "converts **native and the tools as generate_content does (Gemini API)",
        keywords=("api_client", *_CONVERTER),
    ),
    PrivateName(
        "google.genai.models",
        "_GenerateContentConfig_to_vertex",
        "as _GenerateContentConfig_to_mldev (Vertex AI)",
        keywords=("api_client", *_CONVERTER),
    ),
    PrivateName(
        "google.genai.models",
        "_GenerateContentResponse_from_mldev",
        "the answer's JSON as generate_content reads it (Gemini API)",
        keywords=_CONVERTER,
    ),
    PrivateName(
        "google.genai.models",
        "_GenerateContentResponse_from_vertex",
        "as _GenerateContentResponse_from_mldev (Vertex AI)",
        keywords=_CONVERTER,
    ),
    PrivateName(
        "google.genai.types",
        "GenerateContentResponse._from_response",
        "the GenerateContentResponse generate_content makes",
        keywords=("response", "kwargs"),
    ),
    PrivateName(
        "google.genai._common",
        "convert_to_dict",
        "the converted config as plain JSON data",
    ),
    PrivateName(
        "google.genai._common",
        "encode_unserializable_types",
        "bytes in the converted config as URL-safe base64",
    ),
    PrivateName(
        "google.genai._extra_utils",
        "should_continue_generation",
        "google-genai 3.x's automatic continuation of an answer",
        keywords=("response",),
    ),
    PrivateName(
        "google.genai._extra_utils",
        "merge_continuation_responses",
        "the continued answer's hops merged",
        keywords=("responses", "config"),
    ),
    # streamGenerateContent (sdk.py's _chunks, stream.py): request_streamed's own steps,
    # _build_request then _request(stream=True), the answer's SSE events read as JSON by
    # its HttpResponse, an error event raised as request_streamed raises it.
    PrivateName(_API, "HttpResponse.segments", "each SSE event's JSON, parsed"),
    PrivateName(_API, "HttpResponse.async_segments", "as segments"),
    PrivateName(
        "google.genai.errors",
        "APIError.raise_error",
        "an error event mid-stream as its APIError",
        keywords=("status_code", "response_json", "response"),
    ),
    PrivateName(
        "google.genai.errors",
        "APIError.raise_error_async",
        "as raise_error",
        keywords=("status_code", "response_json", "response"),
    ),
)
# A batch of file input (over the API's 20 MB inline limit) writes each JSONL line with the
# SDK's own inline converter. These names have no documented twin: a google-genai lacking one
# refuses such a batch before anything is sent, naming them (inline batches and every other
# call are unaffected).
BATCH_FILE_NAMES: tuple[PrivateName, ...] = (
    PrivateName(
        "google.genai.batches",
        "_InlinedRequest_to_mldev",
        "one batch line's GenerateContentRequest JSON, as an inline request is converted",
    ),
    PrivateName("google.genai._common", "convert_to_dict", "that JSON as plain dicts"),
    PrivateName("google.genai._common", "encode_unserializable_types", "its bytes as base64 text"),
)
# The one table of the wire (the canary walks it): the fast path decides on GENERATE_NAMES.
PRIVATE_NAMES: tuple[PrivateName, ...] = GENERATE_NAMES + BATCH_FILE_NAMES
