"""Zerda: one way to call LLMs with tools on every provider, through their official SDKs.

Importing ``zerda`` imports no provider SDK; see :mod:`zerda.llm`.
"""

__version__ = "0.1.0"
