"""What the mixins of BaseLLMInterface read of the interface and of each other.

For the type checker only: each mixin subclasses :class:`Host`, which declares the instance
attributes ``BaseLLMInterface.__init__`` sets and the methods one concern calls on another.
At runtime it is an empty base class; the methods are the concern modules' own.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    import asyncio
    from types import ModuleType

    from zerda.llm import registry
    from zerda.llm._fastpath import PrivateName
    from zerda.llm._ratelimit import RateLimiter
    from zerda.llm.errors import ZerdaError
    from zerda.llm.interface.arguments import Secret
    from zerda.llm.interface.clients import _LoopCloser


class Host:
    """The attributes and cross-concern methods of an interface (see the module docstring)."""

    provider: str
    spec: registry.ProviderSpec
    model: str | None
    sdk: ModuleType | None
    base_url: str | None
    timeout: float | None
    max_retries: int
    raise_errors: bool
    fast_path: bool
    fast_path_wire: ClassVar[str]
    fast_path_names: ClassVar[tuple[PrivateName, ...]]
    options: dict[str, Any]
    rate_limit: Mapping[str, float] | RateLimiter | None
    _api_key: Secret | None
    _key_from_environment: bool
    _client_given: bool
    _rate_limiter: RateLimiter | None
    _client: Any
    _owns_client: bool
    _async_client: Any
    _owns_async: bool
    _loop_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopCloser]
    _closed: bool
    _lock: threading.RLock

    if TYPE_CHECKING:

        @property
        def api_key(self) -> str | None: ...

        @property
        def env_keys(self) -> tuple[str, ...]: ...

        @property
        def traits(self) -> registry.Traits: ...

        @property
        def client(self) -> Any: ...

        @property
        def async_client(self) -> Any: ...

        def _check_open(self) -> None: ...

        def _key_from_env(self) -> str | None: ...

        def _to_error(self, exc: BaseException) -> ZerdaError: ...

        def _map_error(self, exc: BaseException) -> ZerdaError | None: ...

        def _map_response(self, raw: Any) -> dict[str, Any]: ...

        def _map_stop_reason(self, native: Any) -> str: ...

        def _build_request(self, req: Any) -> dict[str, Any]: ...

        def _native_request(self, messages: Any, kwargs: dict[str, Any]) -> dict[str, Any]: ...

        def _make_client(self) -> Any: ...

        def _make_async_client(self) -> Any: ...
