"""``python -m zerda.llm.registry [ROOT]``: rewrites the generated docs tables of the
checkout at ROOT (default: the current directory) after a row is added or changed."""

from __future__ import annotations

import sys
from pathlib import Path

from zerda.llm.registry.docs import write

for page in write(Path(sys.argv[1] if len(sys.argv) > 1 else ".")):
    print(f"rewrote {page}")
