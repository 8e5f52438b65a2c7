"""A Bedrock call's own ``timeout=``, without a boto3 client per value.

botocore takes its timeouts per client (``Config(read_timeout=, connect_timeout=)``,
https://docs.aws.amazon.com/botocore/latest/reference/config.html). Since its per-invocation
read timeouts (botocore PR #3770), a request whose context holds ``read_timeout`` is sent
with that read timeout: on the clients Zerda builds, a call's timeout travels as a private
parameter of ``converse`` / ``converse_stream`` that a ``provide-client-params`` handler
(botocore's event system,
https://boto3.amazonaws.com/v1/documentation/api/latest/guide/events.html) moves into the
request's context, so one client serves every timeout: ``timeout=deadline - now`` on each
call opens nothing new. A new connection is still opened within the client's connect timeout
(the interface's ``timeout``, else 60 s).

On a botocore without them (:data:`fastpath.CALL_TIMEOUT_NAMES` missing), a call's timeout
uses a client built with it, and only the last :data:`KEPT` are kept: the one let go is
closed (a call still running on it finishes: urllib3 closes a connection given back to a
closed pool, and a closed client opens a new pool if used again).
"""

from __future__ import annotations

import functools
import logging
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from zerda.llm._fastpath import missing
from zerda.llm.wires.bedrock.fastpath import CALL_TIMEOUT_NAMES

logger = logging.getLogger("zerda")

# Not a Converse field: taken out of the parameters before botocore validates or serializes
# them (provide-client-params is the first event of a call).
_PARAMETER = "ZerdaCallReadTimeout"
_OPERATIONS = ("Converse", "ConverseStream")
KEPT = 4  # clients built for other timeouts, on an older botocore


@functools.lru_cache(maxsize=1)
def per_request_timeouts() -> bool:
    """Whether the installed botocore sends a request with its context's read timeout."""
    absent = missing(CALL_TIMEOUT_NAMES)
    if absent:
        logger.debug(
            "zerda: botocore lacks %s: a Bedrock call's own timeout uses a client built with it",
            ", ".join(n.qualified for n in absent),
        )
    return not absent


def register(client: Any) -> None:
    """Lets ``client`` (one Zerda built) take a call's read timeout (:func:`with_timeout`)."""
    events = client.meta.events
    for operation in _OPERATIONS:
        events.register(f"provide-client-params.bedrock-runtime.{operation}", _take_timeout)


def with_timeout(arguments: dict[str, Any], timeout: float) -> dict[str, Any]:
    """``converse`` / ``converse_stream`` arguments that send the request with ``timeout``
    as its read timeout, on a client :func:`register` prepared."""
    return {**arguments, _PARAMETER: timeout}


def _take_timeout(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
    timeout = params.pop(_PARAMETER, None)
    if timeout is not None:
        context["read_timeout"] = timeout


class TimeoutClients:
    """On an older botocore: clients built for a timeout each, the last :data:`KEPT` used
    kept (callers hold the interface's lock)."""

    def __init__(self) -> None:
        self._clients: OrderedDict[float, Any] = OrderedDict()

    def get(self, timeout: float, build: Callable[[float], Any]) -> Any:
        client = self._clients.get(timeout)
        if client is None:
            client = self._clients[timeout] = build(timeout)
            while len(self._clients) > KEPT:
                _, oldest = self._clients.popitem(last=False)
                oldest.close()
        self._clients.move_to_end(timeout)
        return client

    def take_all(self) -> list[Any]:
        """The clients kept, for closing; none is kept after."""
        clients = list(self._clients.values())
        self._clients.clear()
        return clients
