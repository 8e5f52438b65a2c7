"""Script files: queued responses in a small JSON or YAML file, for ``zerda mock-server
--script`` and ``MockLLMServer.load_script``.

The file holds a list of responses, or an object ``{"responses": [...], "default": {...}}``.
Each response is a dict of ``Script`` fields (``text``, ``tool_calls``, ``stop_reason``,
``usage``...), or ``{"error": {"status", "message", "retry_after", "error_type", "fields"}}``, with an
optional ``"provider"`` (default: the shared queue, for whichever provider asks next).
``default`` (Script fields, optional ``provider``) answers once the queues are empty.
A file named ``*.yaml`` / ``*.yml`` is read with PyYAML when it is installed (it is not a
Zerda dependency: ``pip install pyyaml``); any other name is JSON.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from zerda.testing._server import MockLLMServer

_ERROR_FIELDS = frozenset({"status", "message", "retry_after", "error_type", "delay", "fields"})


class ScriptFileError(ValueError):
    """A script file that cannot be read: the message names the file and the entry."""


def load_script(server: MockLLMServer, path: str | os.PathLike[str]) -> int:
    """Queue the responses of the script file at ``path`` on ``server``; return how many."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptFileError(f"{file}: {exc}") from exc
    data = _parse(file, text)
    responses, default = _parts(file, data)
    for index, entry in enumerate(responses):
        _queue(server, file, index, entry)
    if default is not None:
        fields = dict(default)
        provider = fields.pop("provider", None)
        _checked(file, "default", lambda: server.set_default(provider, **fields))
    return len(responses)


def _parse(file: Path, text: str) -> Any:
    if file.suffix.lower() not in (".yaml", ".yml"):
        try:
            return json.loads(text)
        except ValueError as exc:
            raise ScriptFileError(f"{file}: {exc}") from exc
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError:
        raise ScriptFileError(
            f"{file}: reading a YAML script file needs PyYAML (pip install pyyaml); "
            "or write it as JSON"
        ) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ScriptFileError(f"{file}: {exc}") from exc


def _parts(file: Path, data: Any) -> tuple[list[Any], dict[str, Any] | None]:
    if isinstance(data, list):
        return data, None
    if isinstance(data, dict) and set(data) <= {"responses", "default"}:
        responses = data.get("responses", [])
        default = data.get("default")
        if isinstance(responses, list) and (default is None or isinstance(default, dict)):
            return responses, default
    raise ScriptFileError(
        f'{file}: expected a list of responses or {{"responses": [...], "default": {{...}}}}'
    )


def _queue(server: MockLLMServer, file: Path, index: int, entry: Any) -> None:
    where = f"responses[{index}]"
    if not isinstance(entry, dict):
        raise ScriptFileError(f"{file}: {where} is not an object")
    fields = dict(entry)
    provider = fields.pop("provider", None)
    error = fields.pop("error", None)
    if error is None:
        _checked(file, where, lambda: server.enqueue(provider, **fields))
        return
    if fields or not isinstance(error, dict) or not set(error) <= _ERROR_FIELDS:
        raise ScriptFileError(
            f"{file}: {where}.error takes only {', '.join(sorted(_ERROR_FIELDS))}"
        )
    options = dict(error)
    status = options.pop("status", 500)
    _checked(file, where, lambda: server.enqueue_error(int(status), provider, **options))


def _checked(file: Path, where: str, queue: Any) -> None:
    try:
        queue()
    except (TypeError, ValueError, KeyError) as exc:
        raise ScriptFileError(f"{file}: {where}: {exc}") from exc
