"""Kept importable here (the documented import path): the module is ``zerda.llm.wires.anthropic.cloud``.

Importing this name gives that very module object, so attributes read or patched through
either name are the same.
"""

import sys

from zerda.llm.wires.anthropic import cloud as _module
from zerda.llm.wires.anthropic.cloud import AnthropicBedrockInterface as AnthropicBedrockInterface
from zerda.llm.wires.anthropic.cloud import AnthropicVertexInterface as AnthropicVertexInterface

sys.modules[__name__] = _module
