"""The Berkeley Function Calling Leaderboard's real tool schemas, read from the data files
of the ``bfcl-eval`` package (extra ``bfcl``; ``make install`` installs it with --no-deps).

BFCL writes Python-style type names (``dict``, ``float``, ``tuple``, ``any``...); its own
OpenAI handler (``bfcl_eval.model_handler.utils.convert_to_tool``, which cannot be imported
without the package's heavy dependencies) maps them with its ``GORILLA_TO_OPENAPI`` table,
unknown ones to ``string``. :func:`openai_schema` applies the same table at every depth.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any


def _functions_of(entry: Any) -> list[dict[str, Any]]:
    if not isinstance(entry, dict):
        return []
    if "function" in entry:
        fns = entry["function"]
        return [f for f in (fns if isinstance(fns, list) else [fns]) if isinstance(f, dict)]
    return [entry] if "parameters" in entry and "name" in entry else []


@cache
def bfcl_functions() -> tuple[dict[str, Any], ...]:
    """Every distinct function declaration in the package's data, in file order; () when
    bfcl-eval is not installed."""
    try:
        data = resources.files("bfcl_eval") / "data"
    except ModuleNotFoundError:
        return ()
    files = [f for f in data.iterdir() if f.name.endswith(".json")]
    docs = data / "multi_turn_func_doc"
    files += [f for f in docs.iterdir() if f.name.endswith(".json")] if docs.is_dir() else []
    seen: dict[str, dict[str, Any]] = {}
    for path in sorted(files, key=lambda f: f.name):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            for fn in _functions_of(entry):
                seen.setdefault(json.dumps(fn, sort_keys=True), fn)
    return tuple(seen.values())


def openai_schema(parameters: dict[str, Any]) -> dict[str, Any]:
    """BFCL parameters with OpenAPI type names (a new dict), the root an object."""
    from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI

    def convert(node: Any) -> Any:
        if isinstance(node, list):
            return [convert(item) for item in node]
        if not isinstance(node, dict):
            return node
        out = {k: convert(v) for k, v in node.items()}
        if "type" in node and isinstance(node["type"], str):
            out["type"] = GORILLA_TO_OPENAPI.get(node["type"], "string")
        if "properties" in node and isinstance(node["properties"], dict):
            out["properties"] = {
                name: {"type": "string", **convert(sub)} if isinstance(sub, dict) else sub
                for name, sub in node["properties"].items()
            }
        return out

    return {**convert(parameters), "type": "object"}
