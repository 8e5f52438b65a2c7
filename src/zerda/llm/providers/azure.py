"""Kept importable here (the documented import path): the module is ``zerda.llm.wires.azure.interface``.

Importing this name gives that very module object, so attributes read or patched through
either name are the same.
"""

import sys

from zerda.llm.wires.azure import interface as _module
from zerda.llm.wires.azure.interface import AzureOpenAIInterface as AzureOpenAIInterface
from zerda.llm.wires.azure.interface import AzureResponsesInterface as AzureResponsesInterface

sys.modules[__name__] = _module
