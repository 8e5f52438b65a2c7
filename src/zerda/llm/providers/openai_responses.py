"""Kept importable here (the documented import path): the module is ``zerda.llm.wires.openai_responses.interface``.

Importing this name gives that very module object, so attributes read or patched through
either name are the same.
"""

import sys

from zerda.llm.wires.openai_responses import interface as _module
from zerda.llm.wires.openai_responses.interface import (
    OpenAIResponsesInterface as OpenAIResponsesInterface,
)

sys.modules[__name__] = _module
