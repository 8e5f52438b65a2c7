"""Pickling an interface (docs/scale.md, "Pickling"; the rules: :mod:`zerda.llm._pickling`)."""

from __future__ import annotations

import threading
from typing import Any, ClassVar

from zerda.llm.interface._host import Host
from zerda.llm.interface.arguments import fast_path_taken
from zerda.llm.interface.clients import new_loop_clients, require_sdk


class Pickling(Host):
    """``__getstate__`` / ``__setstate__`` and the live attributes a pickle leaves out."""

    # Attributes holding live objects (SDK modules and clients, locks, event loops): left out
    # of a pickle and rebuilt, lazily where they are clients, where it is loaded. A subclass
    # that owns more (Bedrock: a boto3 session, a thread pool) extends the tuple and
    # ``_restore_live``.
    _live_attributes: ClassVar[tuple[str, ...]] = (
        "sdk",
        "_client",
        "_async_client",
        "_loop_clients",
        "_lock",
        "_rate_limiter",
        "_fast_taken",
    )

    @property
    def _fast(self) -> bool:
        """Whether this interface takes its wire's fast path (DESIGN §22): decided on first
        use, not in the constructor, because checking the wire's table of private names
        imports SDK modules (a Stainless SDK's ``resources.chat``) that building the client
        does not need; the raw SDK loads them on its first call too. Left out of a pickle, so
        decided again where it is loaded (that SDK may lack a listed name)."""
        taken = self.__dict__.get("_fast_taken")
        if taken is None:
            taken = self.__dict__["_fast_taken"] = fast_path_taken(self)
        return bool(taken)

    def __getstate__(self) -> dict[str, Any]:
        from zerda.llm._pickling import interface_state

        return interface_state(self)  # type: ignore[arg-type]

    def __setstate__(self, state: dict[str, Any]) -> None:
        from zerda.llm._pickling import restore_interface

        restore_interface(self, state)  # type: ignore[arg-type]

    def _restore_live(self) -> None:
        """The live attributes of an unpickled interface: the SDK module imported again,
        a new lock, no client yet (built on first use, as in a new interface)."""
        for name in self._live_attributes:
            setattr(self, name, None)
        self._owns_client = self._owns_async = False
        self._loop_clients = new_loop_clients()
        spec = self.spec
        if spec.sdk_module:
            self.sdk = require_sdk(spec.sdk_module, spec.extra, spec.sdk_package)
        self._lock = threading.RLock()
