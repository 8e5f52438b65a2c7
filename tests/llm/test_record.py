"""zerda.llm._record: frozen records behave as ``@dataclass(frozen=True)`` does."""

from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Callable
from dataclasses import FrozenInstanceError, field
from typing import Any, ClassVar

import pytest

from zerda.llm._record import fields_of, hot_record, record, replace

DECORATORS = {"record": record, "hot_record": hot_record}


def _point_class(decorate: Callable[[type], type]) -> Any:
    class Point:
        kind: ClassVar[str] = "point"
        x: int
        y: int = 0
        tags: list[str] = field(default_factory=list)

        def norm(self) -> int:
            return abs(self.x) + abs(self.y)

    return decorate(Point)


def _dataclass_point() -> Any:
    return _point_class(dataclasses.dataclass(frozen=True))


@pytest.fixture(params=list(DECORATORS))
def Point(request: pytest.FixtureRequest) -> Any:  # noqa: N802 - a class
    return _point_class(DECORATORS[request.param])


def test_fields_are_the_annotated_names_in_order_without_classvars(Point: Any) -> None:
    assert fields_of(Point) == ("x", "y", "tags") == Point.__match_args__
    assert Point.kind == "point"


def test_arguments_bind_as_a_dataclass_binds_them(Point: Any) -> None:
    Reference = _dataclass_point()
    for args, kwargs in [((1,), {}), ((1, 2), {}), ((), {"x": 1, "tags": ["a"]}), ((1,), {"y": 5})]:
        ours, theirs = Point(*args, **kwargs), Reference(*args, **kwargs)
        assert (ours.x, ours.y, ours.tags) == (theirs.x, theirs.y, theirs.tags)
        assert repr(ours) == repr(theirs)
    assert hash(Point(1, 2, ())) == hash(Reference(1, 2, ()))


def test_a_default_factory_gives_each_instance_its_own_value(Point: Any) -> None:
    a, b = Point(1), Point(1)
    assert a.tags == [] and a.tags is not b.tags


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((), {}, "missing .*'x'"),
        ((1, 2, [], 4), {}, "positional arguments"),
        ((1,), {"x": 2}, "multiple values for argument 'x'"),
        ((1,), {"z": 2}, "unexpected keyword argument 'z'"),
    ],
)
def test_bad_arguments_are_a_type_error(
    Point: Any, args: tuple[Any, ...], kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(TypeError, match=message):
        Point(*args, **kwargs)


def test_an_instance_is_frozen(Point: Any) -> None:
    p = Point(1)
    with pytest.raises(FrozenInstanceError, match="cannot assign to field 'x'"):
        p.x = 2
    with pytest.raises(FrozenInstanceError, match="cannot delete field 'y'"):
        del p.y
    assert p.x == 1


def test_equality_is_by_class_and_fields(Point: Any) -> None:
    assert Point(1, 2) == Point(1, 2)
    assert Point(1, 2) != Point(1, 3)
    assert Point(1, 2) != (1, 2, [])
    assert Point(1, 2).__eq__(_dataclass_point()(1, 2)) is NotImplemented


def test_methods_of_the_class_are_kept(Point: Any) -> None:
    assert Point(-3, 4).norm() == 7


def test_replace_copies_with_changes_and_refuses_unknown_fields(Point: Any) -> None:
    p = Point(1, 2, ["a"])
    assert replace(p, y=9) == Point(1, 9, ["a"])
    assert p.y == 2
    with pytest.raises(TypeError, match=r"no field\(s\) \['z'\]"):
        replace(p, z=1)


def test_replace_takes_a_dataclass_too() -> None:
    p = _dataclass_point()(1, 2)
    copy = replace(p, x=5)
    assert (type(copy), copy.x, copy.y, p.x) == (type(p), 5, 2, 1)


def test_an_instance_pickles() -> None:
    # A module-level record (a local class cannot be pickled by reference).
    from zerda.llm._traits import Hosted

    hosted = Hosted("web_search_20250305", frozenset({"max_uses"}), versions=(("x", "y"),))
    assert pickle.loads(pickle.dumps(hosted)) == hosted


@pytest.mark.parametrize("decorate", list(DECORATORS.values()), ids=list(DECORATORS))
def test_a_required_field_after_a_default_is_refused(decorate: Callable[[type], type]) -> None:
    class Bad:
        a: int = 0
        b: int

    with pytest.raises(TypeError, match="non-default field 'b' follows a default"):
        decorate(Bad)


def test_the_core_builds_no_dataclass_at_import() -> None:
    """The import cost this module exists for: the registry's and the request's types are
    records (ToolCall, which the specification makes a dataclass, is the one left)."""
    from zerda.llm import _fastpath, _request, _schema_walk, _traits
    from zerda.llm.registry import profiles, spec

    types = [_traits.Traits, _traits.Media, _traits.Hosted, spec.ProviderSpec]
    types += [profiles.Family, profiles.Profile, _fastpath.PrivateName, _request.Request]
    types += [_schema_walk.SchemaContext]
    assert [t.__name__ for t in types if dataclasses.is_dataclass(t)] == []
    assert all(fields_of(t) for t in types)
