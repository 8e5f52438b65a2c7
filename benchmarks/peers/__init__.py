"""``make bench-peers``: Zerda beside LiteLLM, any-llm, pydantic-ai and aisuite (and the raw
SDK) on the OpenAI, Anthropic and Gemini wires, against the same MockLLMServer as
``make bench``. See benchmarks/README.md ("Peers").

- :mod:`peers.adapters`: one adapter per peer, how it makes the benchmark's call;
- :mod:`peers.worker`: one (wire, peer) comparison, run in its own process;
- :mod:`peers.report`: the tables, and the RESULTS.md / README.md sections they go in;
- ``benchmarks/peers/run_peers.py``: the entry point.

Nothing here imports a peer at module level: without the peers installed, every adapter
reports itself "n/a: not installed" and the report writer still works.
"""
