"""BaseLLMInterface, cut by concern (import it from ``zerda.llm.base``, its documented home).

``api`` holds the public API (generate, stream, run, batch, close, the context managers) and
the abstract hooks a wire writes; each other module is one concern, a mixin of the class:
``clients`` (SDK clients, per event loop, and closing them), ``retrying``, ``failures``
(the error shape and redaction), ``arguments`` (constructor arguments and options),
``request`` (checking and converting a request), ``results`` (the result shape),
``calls`` (one call's course, shared by each sync method and its async twin), ``limits``
(rate limits), ``pickling``, ``batch`` (the job API over a wire's :class:`BatchProtocol`)
and ``counting`` (``count_tokens``, over a wire's :class:`TokenCounter`).
``_host`` lists, for the type checker only, what the mixins read of each other.

Nothing is imported here: ``zerda.llm.base`` imports ``api``, which imports the rest.
"""
