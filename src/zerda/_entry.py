"""The ``zerda`` console script (and ``python -m zerda``): the command line lives in
:mod:`zerda.cli`, which needs the ``cli`` extra (click). Without it the command prints one line
saying what to install instead of a traceback ending in ``No module named 'click'``."""

from __future__ import annotations

import sys

HINT = 'zerda: the command line needs the cli extra: pip install "zerda-llm[cli]"'


def main() -> None:
    try:
        from zerda.cli import main as cli_main
    except ModuleNotFoundError as exc:
        if exc.name != "click":
            raise
        print(HINT, file=sys.stderr)
        raise SystemExit(1) from None
    cli_main()
