"""Zerda: one way to call LLMs with tools on every provider, through their official SDKs.

Importing ``zerda`` imports no provider SDK; see :mod:`zerda.llm`.
"""

from __future__ import annotations

__version__ = "0.1.0"


def _warn_if_shadowed() -> None:
    """One warning at import when PyPI's unrelated ``zerda`` distribution is installed beside
    ``zerda-llm``: both ship a top-level ``zerda`` package, so each overwrites the other's
    files. Its metadata folder (``zerda-<version>.dist-info``; ours is ``zerda_llm-...``) on
    ``sys.path`` says so without importing ``importlib.metadata``."""
    import os
    import sys

    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:  # a zip file, a missing folder
            continue
        found = [n for n in names if n.startswith("zerda-") and n.endswith(".dist-info")]
        if found:
            import warnings

            warnings.warn(
                f"the 'zerda' distribution ({found[0]}) is installed beside "
                "zerda-llm: it is an unrelated project that ships a package of the same name, "
                "and the two overwrite each other's files. Uninstall it: pip uninstall zerda, "
                'then pip install --force-reinstall "zerda-llm"',
                stacklevel=3,
            )
            return


_warn_if_shadowed()
