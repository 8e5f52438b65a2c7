"""Kept importable here (the documented import path): the module is ``zerda.llm.wires.bedrock.interface``.

Importing this name gives that very module object, so attributes read or patched through
either name are the same.
"""

import sys

from zerda.llm.wires.bedrock import interface as _module
from zerda.llm.wires.bedrock.interface import AWSInterface as AWSInterface

sys.modules[__name__] = _module
