"""Fixtures for every test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest


@pytest.fixture(scope="module")
def interfaces(server: Any) -> Iterator[Callable[..., Any]]:
    """``interfaces(provider, model, **options)``: an interface on the module's ``server``,
    made once per module and arguments and closed at its end. For the many small tests of
    a module (one recording, one option, one scenario each) that call the same few
    interfaces: an interface is made to serve many calls, and building its SDK client per
    test would cost more than the test's calls. Its async clients belong to each test's
    event loop and are closed as that loop ends."""
    from zerda.llm import create_interface

    made: dict[tuple[str, str, str], Any] = {}

    def get(provider: str, model: str = "m", **options: Any) -> Any:
        key = (provider, model, repr(sorted(options.items())))
        if key not in made:
            options = {**server.client_options(provider), **options}
            made[key] = create_interface(provider, model=model, **options)
        return made[key]

    yield get
    for llm in made.values():
        llm.close()
