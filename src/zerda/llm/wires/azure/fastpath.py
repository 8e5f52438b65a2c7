"""Azure OpenAI's fast paths (DESIGN §22): the OpenAI ones (wires/openai/fastpath.py) on
``openai.AzureOpenAI``. Chat Completions' ``client.post`` to ``/chat/completions`` gets the
``/deployments/{model}`` prefix only because the Azure client's request builder adds it for
the paths it lists, which is not documented either."""

from __future__ import annotations

from zerda.llm._fastpath import PrivateName
from zerda.llm.wires.openai.fastpath import stainless_names

_CLIENTS = ("AzureOpenAI", "AsyncAzureOpenAI")

PRIVATE_NAMES: tuple[PrivateName, ...] = (
    *stainless_names("openai", _CLIENTS, ("chat", "Completions")),
    PrivateName(
        "openai.lib.azure",
        "_deployments_endpoints",
        "the paths AzureOpenAI prefixes with /deployments/{model}, client.post's among them",
    ),
)

# The azure-responses row: POST /openai/responses, no deployment prefix.
RESPONSES_NAMES: tuple[PrivateName, ...] = stainless_names(
    "openai", _CLIENTS, ("responses", "Responses")
)
