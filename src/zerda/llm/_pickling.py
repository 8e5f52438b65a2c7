"""How an interface travels to another process (docs/scale.md, "Pickling").

A pickle holds what the interface was built from (model, base_url, timeout, options, the
registry row by name) and none of its live objects (``_live_attributes``: SDK modules and
clients, locks, thread pools, event loops); they are rebuilt where the pickle is loaded,
clients lazily on first use. An API key read from the environment is left out and read again
from the environment of the process that loads the pickle; a key given as ``api_key=``
travels inside it, as any other argument would.

An interface built around a caller's ``client=`` (or ``async_client=``) cannot be pickled:
that client is a live object whose settings Zerda cannot know.
"""

from __future__ import annotations

import pickle
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from zerda.llm.base import BaseLLMInterface

__all__ = ["interface_state", "restore_interface"]


def interface_state(llm: BaseLLMInterface) -> dict[str, Any]:
    """What ``pickle`` stores for ``llm``."""
    name = type(llm).__name__
    if llm.__dict__.get("_client_given"):
        raise TypeError(
            f"{name} cannot be pickled: it was built with a ready SDK client (client= or "
            "async_client=), a live object; build it from options (base_url, api_key, "
            "timeout...) to send it to another process, or build it there"
        )
    state = {k: v for k, v in llm.__dict__.items() if k not in llm._live_attributes}
    if state.get("_key_from_environment"):
        state["_api_key"] = None  # read again from the loading process's environment
    for option, value in state.get("options", {}).items():
        _check_picklable(name, option, value)
    return state


def restore_interface(llm: BaseLLMInterface, state: dict[str, Any]) -> None:
    """The inverse of :func:`interface_state`, in the process that loads the pickle."""
    llm.__dict__.update(state)
    llm._restore_live()
    if state.get("_key_from_environment"):
        from zerda.llm.base import Secret

        key = llm._key_from_env()
        llm._api_key = Secret(key) if key else None


def _check_picklable(owner: str, option: str, value: Any) -> None:
    """An option that cannot travel (an ``http_client``, a botocore session...) is named
    here, not by pickle's "cannot pickle '_thread.RLock' object" from deep inside it."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return
    try:
        pickle.dumps(value)
    except Exception as exc:
        raise TypeError(
            f"{owner} cannot be pickled: its option {option!r} ({type(value).__name__}) "
            f"cannot be ({type(exc).__name__}: {exc}); build the interface in the worker, "
            "or pass options that can be pickled"
        ) from None
