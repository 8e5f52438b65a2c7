"""Frozen records: what ``@dataclass(frozen=True)`` gives the core's types, at a tenth of
its import cost.

On CPython 3.10-3.12, ``dataclass`` compiles every method it writes (``__init__``,
``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``, ``__delattr__``) with an ``exec``
of its own: 1.1-3 ms per frozen class, measured on the benchmark machine. The core's nine
records (the registry's row types, the request, the fast-path names, the schema walk's
context) took about 15 ms that way, half of ``import zerda.llm`` and most of what it adds
to boto3's light import (docs/decisions.md, "The core's types are records"). Here a
table's type (:func:`record`) binds its arguments by name and compiles nothing; a type
built on every call (:func:`hot_record`) compiles its ``__init__`` once, so an instance
costs what a dataclass's does. The other methods are shared functions that read the
class's field names. :class:`zerda.llm.tools.ToolCall` stays a dataclass: the
specification says so.

A record takes ``dataclasses.field(default=..., default_factory=...)`` for a default, as a
dataclass does, and is changed with :func:`replace` (``dataclasses.replace`` refuses it:
it is not a dataclass). Inheritance between records is not supported (none is needed).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import MISSING, Field, FrozenInstanceError, field
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_: Any) -> Any:
        return lambda decorated: decorated


T = TypeVar("T")
_FACTORY = object()  # the default of a parameter whose default comes from a factory


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def record(cls: type[T]) -> type[T]:
    """Makes ``cls`` a frozen record of its annotated fields, in their order: a table's
    type, built a few dozen times at import. Its ``__init__`` binds the arguments by the
    field names (a few microseconds a call; nothing compiled)."""
    return _finish(cls, _generic_init)


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def hot_record(cls: type[T]) -> type[T]:
    """:func:`record` for a type built on every call (the request, the schema walk's
    context): its ``__init__`` is compiled once for the class, as fast as a dataclass's."""
    return _finish(cls, _compiled_init)


# A field: (name, default, default factory), MISSING where there is none.
_Field = tuple[str, Any, Any]


def _finish(cls: type[T], make_init: Callable[[type, list[_Field]], Any]) -> type[T]:
    names = tuple(n for n, kind in cls.__annotations__.items() if not _is_classvar(kind))
    fields = [(name, *_default_of(cls, name)) for name in names]
    required = [name for name, default, factory in fields if default is factory is MISSING]
    if required and names.index(required[-1]) >= len(required):
        raise TypeError(f"{cls.__name__}: non-default field {required[-1]!r} follows a default")
    attributes = {"__init__": make_init(cls, fields), "__record_fields__": names}
    attributes |= {"__match_args__": names, "__repr__": _repr, "__eq__": _eq, "__hash__": _hash}
    attributes |= {"__setattr__": _setattr, "__delattr__": _delattr}
    for key, value in attributes.items():
        type.__setattr__(cls, key, value)
    return cls


def _generic_init(cls: type, fields: list[_Field]) -> Callable[..., None]:
    names = tuple(name for name, _, _ in fields)
    defaults = {name: (d, f) for name, d, f in fields if d is not MISSING or f is not MISSING}
    title = f"{cls.__name__}()"

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(names):
            raise TypeError(f"{title} takes {len(names)} positional arguments, {len(args)} given")
        values = dict(zip(names[: len(args)], args, strict=True))
        for key, value in kwargs.items():
            if key in values:
                raise TypeError(f"{title} got multiple values for argument {key!r}")
            values[key] = value
        for name in names:
            if name in values:
                value = values.pop(name)
            elif name in defaults:
                default, factory = defaults[name]
                value = default if factory is MISSING else factory()
            else:
                raise TypeError(f"{title} missing required argument {name!r}")
            object.__setattr__(self, name, value)
        if values:
            raise TypeError(f"{title} got an unexpected keyword argument {next(iter(values))!r}")

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    return __init__


def _compiled_init(cls: type, fields: list[_Field]) -> Any:
    namespace: dict[str, Any] = {"_set": object.__setattr__, "_FACTORY": _FACTORY}
    params, body = [], []
    for i, (name, default, factory) in enumerate(fields):
        if factory is not MISSING:
            namespace[f"_f{i}"] = factory
            params.append(f"{name}=_FACTORY")
            body.append(f"    _set(self, {name!r}, _f{i}() if {name} is _FACTORY else {name})")
            continue
        if default is not MISSING:
            namespace[f"_d{i}"] = default
        params.append(name if default is MISSING else f"{name}=_d{i}")
        body.append(f"    _set(self, {name!r}, {name})")
    source = f"def __init__(self, {', '.join(params)}) -> None:\n" + "\n".join(body or ["  pass"])
    exec(source, namespace)  # noqa: S102 - the source is built above from field names only
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    return init


def _is_classvar(annotation: Any) -> bool:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar"))


def _default_of(cls: type, name: str) -> tuple[Any, Any]:
    """(default, factory) of field ``name``, MISSING where none; removes a ``field()``
    object from the class, as dataclass does, leaving a plain default in its place."""
    value = cls.__dict__.get(name, MISSING)
    if not isinstance(value, Field):
        return value, MISSING
    if value.default is MISSING:
        type.__delattr__(cls, name)
    else:
        type.__setattr__(cls, name, value.default)
    return value.default, value.default_factory


def fields_of(obj: Any) -> tuple[str, ...]:
    """The field names of a record (class or instance), in order."""
    names: tuple[str, ...] = obj.__record_fields__
    return names


def replace(obj: T, /, **changes: Any) -> T:
    """A copy of record ``obj`` with ``changes``: ``dataclasses.replace`` for records; a
    dataclass goes to ``dataclasses.replace`` itself."""
    if not hasattr(obj, "__record_fields__"):
        return dataclasses.replace(obj, **changes)  # type: ignore[type-var]
    unknown = set(changes) - set(fields_of(obj))
    if unknown:
        raise TypeError(f"{type(obj).__name__} has no field(s) {sorted(unknown)}")
    values = {name: getattr(obj, name) for name in fields_of(obj)}
    return type(obj)(**(values | changes))


def _values(obj: Any) -> tuple[Any, ...]:
    return tuple(getattr(obj, name) for name in obj.__record_fields__)


def _repr(self: Any) -> str:
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__record_fields__)
    return f"{type(self).__qualname__}({shown})"


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is not self.__class__:
        return NotImplemented
    return _values(self) == _values(other)


def _hash(self: Any) -> int:
    return hash(_values(self))


def _setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")
