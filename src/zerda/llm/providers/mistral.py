"""Kept importable here (the documented import path): the module is ``zerda.llm.wires.mistral.interface``.

Importing this name gives that very module object, so attributes read or patched through
either name are the same.
"""

import sys

from zerda.llm.wires.mistral import interface as _module
from zerda.llm.wires.mistral.interface import MistralInterface as MistralInterface

sys.modules[__name__] = _module
