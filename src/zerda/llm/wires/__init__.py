"""One folder per wire protocol, library side (docs/architecture.md).

Each folder holds its interface, mapping, stream reading, errors, fast path and batch
mapping. Nothing outside these folders imports them but the registry's lazy class lookup
(``ProviderSpec.interface_class``) and the documented import paths in
:mod:`zerda.llm.providers`.
"""
