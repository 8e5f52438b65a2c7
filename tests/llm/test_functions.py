"""zerda.llm.functions: tools from Python functions and pydantic models (golden outputs)."""

from __future__ import annotations

import copy
import enum
import functools
import json
from collections.abc import Callable
from typing import Annotated, Any, Literal, Optional

import pytest
from pydantic import BaseModel, Field

from zerda.llm import InvalidRequestError, functions
from zerda.llm.base import normalize_tools
from zerda.llm.functions import (
    callable_registry,
    to_tool,
    tool_from_function,
    tool_from_model,
    validate_arguments,
)

# Types the tools below refer to live at module level: with `from __future__ import
# annotations` the hints are strings resolved against the module's globals.


class Unit(str, enum.Enum):
    """Temperature unit."""

    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


class Address(BaseModel):
    """A postal address."""

    street: str
    city: str = Field(description="City name.")


class Forecast(BaseModel):
    """Ask for a weather forecast.

    Shown to the model as the tool description.

    Attributes:
        city: The city to forecast.
        days: Ignored: the Field description wins.
    """

    city: str
    days: int = Field(3, description="How many days ahead.", ge=1)


class Plain(BaseModel):
    x: int


ADDRESS_DEF = {
    "description": "A postal address.",
    "type": "object",
    "properties": {
        "street": {"type": "string"},
        "city": {"description": "City name.", "type": "string"},
    },
    "required": ["street", "city"],
}

UNIT_DEF = {
    "description": "Temperature unit.",
    "enum": ["celsius", "fahrenheit"],
    "type": "string",
}


def get_weather(city: str, days: int = 3, unit: Unit = Unit.CELSIUS) -> str:
    """Get the weather forecast for a city.

    Uses the national weather service.

    Args:
        city: The city name, e.g. Paris.
        days: How many days ahead.

    Returns:
        The forecast as text.
    """
    return f"{city}: sunny for {days} days in {unit.value}"


GET_WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Get the weather forecast for a city.\n\nUses the national weather service.",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"description": "The city name, e.g. Paris.", "type": "string"},
            "days": {"default": 3, "description": "How many days ahead.", "type": "integer"},
            "unit": {"$ref": "#/$defs/Unit", "default": "celsius"},
        },
        "required": ["city"],
        "$defs": {"Unit": UNIT_DEF},
    },
}


# --- docstring styles ---------------------------------------------------------------------


def test_google_docstring_gives_description_and_parameter_docs() -> None:
    assert tool_from_function(get_weather) == GET_WEATHER_TOOL


def test_numpy_docstring_and_optional_with_default() -> None:
    def search(query: str, limit: Optional[int] = None) -> list[str]:  # noqa: UP045
        """Search the catalogue.

        Parameters
        ----------
        query : str
            Words to look for.
        limit : int, optional
            Most results to return.

        Returns
        -------
        list of str
        """
        return []

    assert tool_from_function(search) == {
        "name": "search",
        "description": "Search the catalogue.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"description": "Words to look for.", "type": "string"},
                "limit": {
                    "anyOf": [{"type": "integer"}, {"type": "null"}],
                    "default": None,
                    "description": "Most results to return.",
                },
            },
            "required": ["query"],
        },
    }


def test_rest_docstring_and_literal() -> None:
    def sort_rows(column: str, order: Literal["asc", "desc"] = "asc") -> None:
        """Sort the table.

        :param column: Column to sort by.
        :param order: Sort direction.
        :returns: Nothing.
        """

    assert tool_from_function(sort_rows) == {
        "name": "sort_rows",
        "description": "Sort the table.",
        "parameters": {
            "type": "object",
            "properties": {
                "column": {"description": "Column to sort by.", "type": "string"},
                "order": {
                    "default": "asc",
                    "description": "Sort direction.",
                    "enum": ["asc", "desc"],
                    "type": "string",
                },
            },
            "required": ["column"],
        },
    }


def test_no_docstring_gives_empty_description_and_no_parameter_docs() -> None:
    def ping(host: str) -> bool:
        return True

    assert tool_from_function(ping) == {
        "name": "ping",
        "description": "",
        "parameters": {
            "type": "object",
            "properties": {"host": {"type": "string"}},
            "required": ["host"],
        },
    }


def test_docstring_for_unknown_parameter_is_ignored_and_sections_are_left_out() -> None:
    def act(x: int) -> None:
        """Do it.

        Args:
            x: The x.
            y: No such parameter.

        Raises:
            ValueError: Never.
        """

    assert tool_from_function(act) == {
        "name": "act",
        "description": "Do it.",
        "parameters": {
            "type": "object",
            "properties": {"x": {"description": "The x.", "type": "integer"}},
            "required": ["x"],
        },
    }


def test_function_without_parameters() -> None:
    def now() -> str:
        """Current time."""
        return ""

    assert tool_from_function(now) == {
        "name": "now",
        "description": "Current time.",
        "parameters": {"type": "object", "properties": {}, "required": []},
    }


# --- types --------------------------------------------------------------------------------


def test_optional_without_default_is_required_and_nullable() -> None:
    def tag(label: str | None) -> None:
        pass

    assert tool_from_function(tag)["parameters"] == {
        "type": "object",
        "properties": {"label": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
        "required": ["label"],
    }


def test_enum_parameter_becomes_a_def() -> None:
    def convert(unit: Unit) -> None:
        pass

    assert tool_from_function(convert)["parameters"] == {
        "type": "object",
        "properties": {"unit": {"$ref": "#/$defs/Unit"}},
        "required": ["unit"],
        "$defs": {"Unit": UNIT_DEF},
    }


def test_nested_model_keeps_defs_without_titles() -> None:
    def ship(to: Address, express: bool = False) -> None:
        """Ship a parcel.

        Args:
            to: Where to.
        """

    assert tool_from_function(ship)["parameters"] == {
        "type": "object",
        "properties": {
            "to": {"$ref": "#/$defs/Address", "description": "Where to."},
            "express": {"default": False, "type": "boolean"},
        },
        "required": ["to"],
        "$defs": {"Address": ADDRESS_DEF},
    }


def test_list_of_models_and_dict_of_ints() -> None:
    def stock(addresses: list[Address], counts: dict[str, int]) -> None:
        pass

    assert tool_from_function(stock)["parameters"] == {
        "type": "object",
        "properties": {
            "addresses": {"items": {"$ref": "#/$defs/Address"}, "type": "array"},
            "counts": {"additionalProperties": {"type": "integer"}, "type": "object"},
        },
        "required": ["addresses", "counts"],
        "$defs": {"Address": ADDRESS_DEF},
    }


def test_annotated_field_description_wins_over_docstring_and_keeps_constraints() -> None:
    def find(
        query: Annotated[str, Field(description="Text to find.", min_length=1)],
        page: Annotated[int, Field(ge=1)] = 1,
    ) -> None:
        """Find things.

        Args:
            query: Overridden by the Field description.
            page: Page number.
        """

    assert tool_from_function(find)["parameters"] == {
        "type": "object",
        "properties": {
            "query": {"description": "Text to find.", "minLength": 1, "type": "string"},
            "page": {"default": 1, "description": "Page number.", "minimum": 1, "type": "integer"},
        },
        "required": ["query"],
    }


def test_field_as_default_value() -> None:
    def top(n: int = Field(5, description="How many.", le=10)) -> None:
        pass

    assert tool_from_function(top)["parameters"] == {
        "type": "object",
        "properties": {
            "n": {"default": 5, "description": "How many.", "maximum": 10, "type": "integer"}
        },
        "required": [],
    }


def test_title_is_removed_only_where_it_is_a_schema_keyword() -> None:
    def note(title: str, meta: dict[str, Any] = {"title": "kept"}) -> None:  # noqa: B006
        pass

    assert tool_from_function(note)["parameters"] == {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "meta": {"additionalProperties": True, "default": {"title": "kept"}, "type": "object"},
        },
        "required": ["title"],
    }


def test_parameter_names_that_clash_with_basemodel_attributes() -> None:
    def export(json: str, model_config: int, schema: bool = True) -> None:
        pass

    assert tool_from_function(export)["parameters"] == {
        "type": "object",
        "properties": {
            "json": {"type": "string"},
            "model_config": {"type": "integer"},
            "schema": {"default": True, "type": "boolean"},
        },
        "required": ["json", "model_config"],
    }
    assert validate_arguments(export, {"json": "x", "model_config": "2"}) == {
        "json": "x",
        "model_config": 2,
    }


async def get_weather_async(city: str, days: int = 3, unit: Unit = Unit.CELSIUS) -> str:
    """Get the weather forecast for a city.

    Uses the national weather service.

    Args:
        city: The city name, e.g. Paris.
        days: How many days ahead.
    """
    return city


def test_async_function_gives_the_same_tool() -> None:
    assert tool_from_function(get_weather_async) == {
        **GET_WEATHER_TOOL,
        "name": "get_weather_async",
    }


# --- parameters that cannot be tools ------------------------------------------------------


def test_missing_type_hint_names_function_and_parameter() -> None:
    def lookup(key, default: str = "") -> str:  # type: ignore[no-untyped-def]
        return default

    with pytest.raises(ValueError) as excinfo:
        tool_from_function(lookup)
    assert str(excinfo.value) == (
        "tool function 'lookup': parameter 'key' has no type hint; annotate it "
        "(e.g. `key: str`) so a JSON schema can be built"
    )


def test_unresolvable_hint_is_a_value_error() -> None:
    def broken(x: NoSuchType) -> None:  # type: ignore[name-defined]  # noqa: F821
        pass

    with pytest.raises(ValueError, match=r"tool function 'broken': cannot resolve its type hints"):
        tool_from_function(broken)


def test_any_and_object_give_an_empty_schema() -> None:
    def store(value: Any, extra: object) -> None:
        pass

    assert tool_from_function(store)["parameters"] == {
        "type": "object",
        "properties": {"value": {}, "extra": {}},
        "required": ["value", "extra"],
    }


class Opaque:
    """A class pydantic has no schema for."""


def take_opaque(count: int, thing: Opaque) -> None:
    pass


def take_callback(callback: Callable[[int], int]) -> None:
    pass


@pytest.mark.parametrize(
    ("fn", "start"),
    [
        (
            take_opaque,
            "tool function 'take_opaque': cannot build a schema for parameter 'thing': "
            "Unable to generate pydantic-core schema for",
        ),
        (
            take_callback,
            "tool function 'take_callback': cannot build a schema for parameter 'callback': "
            "Cannot generate a JsonSchema for core_schema.CallableSchema",
        ),
    ],
)
def test_type_without_schema_names_the_parameter(fn: Any, start: str) -> None:
    with pytest.raises(ValueError) as excinfo:
        tool_from_function(fn)
    assert str(excinfo.value).startswith(start)
    assert "\n" not in str(excinfo.value)


def test_variadic_parameters_are_left_out_and_kwargs_pass_through() -> None:
    def log(message: str, *args: str, level: int = 0, **extra: str) -> None:
        pass

    assert tool_from_function(log)["parameters"] == {
        "type": "object",
        "properties": {
            "message": {"type": "string"},
            "level": {"default": 0, "type": "integer"},
        },
        "required": ["message"],
    }
    assert validate_arguments(log, {"message": "hi", "user": "ann"}) == {
        "message": "hi",
        "user": "ann",
    }


def test_positional_only_parameter_is_rejected() -> None:
    def square(x: int, /) -> int:
        return x * x

    with pytest.raises(ValueError) as excinfo:
        tool_from_function(square)
    assert str(excinfo.value) == (
        "tool function 'square': parameter 'x' is positional-only; "
        "tools are called with keyword arguments"
    )


class Calculator:
    def add(self, a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @classmethod
    def zero(cls, like: float) -> float:
        """Zero of a type."""
        return 0.0


def test_bound_methods_skip_self_and_cls() -> None:
    expected_add = {
        "name": "add",
        "description": "Add two numbers.",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    }
    assert tool_from_function(Calculator().add) == expected_add
    assert tool_from_function(Calculator.zero) == {
        "name": "zero",
        "description": "Zero of a type.",
        "parameters": {
            "type": "object",
            "properties": {"like": {"type": "number"}},
            "required": ["like"],
        },
    }
    assert validate_arguments(Calculator().add, {"a": "1", "b": 2}) == {"a": 1, "b": 2}


def test_unbound_method_is_rejected() -> None:
    with pytest.raises(ValueError) as excinfo:
        tool_from_function(Calculator.add)
    assert str(excinfo.value) == (
        "tool function 'add': first parameter 'self' looks like an unbound method; "
        "pass the bound method (instance.method or Class.classmethod)"
    )


@pytest.mark.parametrize("unnamed", [lambda x: x, functools.partial(get_weather, "Paris")])
def test_callables_without_a_usable_name_are_rejected(unnamed: Any) -> None:
    with pytest.raises(ValueError, match=r"^cannot name a tool after .*: pass a function defined"):
        tool_from_function(unnamed)


# --- caching ------------------------------------------------------------------------------


def test_results_are_cached_per_function_but_never_shared() -> None:
    def cached(x: int) -> None:
        pass

    before = functions._cached_function_tool.cache_info()
    first = tool_from_function(cached)
    first["parameters"]["properties"]["x"]["type"] = "mutated"
    second = tool_from_function(cached)
    after = functions._cached_function_tool.cache_info()
    assert second["parameters"]["properties"]["x"] == {"type": "integer"}
    assert (after.misses - before.misses, after.hits - before.hits) == (1, 1)


def test_methods_of_new_instances_hit_the_cache() -> None:
    tool_from_function(Calculator().add)
    before = functions._cached_function_tool.cache_info()
    tool_from_function(Calculator().add)
    after = functions._cached_function_tool.cache_info()
    assert (after.misses - before.misses, after.hits - before.hits) == (0, 1)


# --- pydantic models ----------------------------------------------------------------------


def test_tool_from_model_uses_class_docstring_and_attribute_docs() -> None:
    assert tool_from_model(Forecast) == {
        "name": "Forecast",
        "description": "Ask for a weather forecast.\n\nShown to the model as the tool description.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"description": "The city to forecast.", "type": "string"},
                "days": {
                    "default": 3,
                    "description": "How many days ahead.",
                    "minimum": 1,
                    "type": "integer",
                },
            },
            "required": ["city"],
        },
    }


def test_tool_from_model_without_docstring_does_not_inherit_basemodel_doc() -> None:
    assert tool_from_model(Plain) == {
        "name": "Plain",
        "description": "",
        "parameters": {
            "type": "object",
            "properties": {"x": {"type": "integer"}},
            "required": ["x"],
        },
    }


def test_tool_from_model_rejects_other_classes() -> None:
    with pytest.raises(ValueError, match=r"^tool_from_model expects a pydantic model class"):
        tool_from_model(Calculator)  # type: ignore[arg-type]


# --- normalize_tools ----------------------------------------------------------------------

UNIFIED = {
    "name": "lookup",
    "description": "Look up a key.",
    "input_schema": {"type": "object", "properties": {"key": {"type": "string"}}},
}
OPENAI_STYLE = {
    "type": "function",
    "function": {
        "name": "add_numbers",
        "description": "Add.",
        "parameters": {"type": "object", "properties": {"a": {"type": "number"}}},
        "strict": True,
    },
}


def test_normalize_mixed_list_without_touching_inputs() -> None:
    # zerda.llm.base.normalize_tools is the one normaliser: functions and models reach it
    # through to_tool.
    tools = [UNIFIED, OPENAI_STYLE, get_weather, Plain]
    snapshot = copy.deepcopy(tools)

    result = normalize_tools(tools)

    assert result == [
        {"name": "lookup", "description": "Look up a key.", "parameters": UNIFIED["input_schema"]},
        {
            "name": "add_numbers",
            "description": "Add.",
            "parameters": {"type": "object", "properties": {"a": {"type": "number"}}},
            "strict": True,  # kept: OpenAI-shaped providers send function.strict
        },
        GET_WEATHER_TOOL,
        tool_from_model(Plain),
    ]
    assert tools == snapshot


def test_normalize_none_and_empty() -> None:
    assert normalize_tools(None) is None
    assert normalize_tools([]) is None


def test_openai_style_without_description_or_parameters() -> None:
    assert normalize_tools([{"type": "function", "function": {"name": "noop"}}]) == [
        {"name": "noop", "description": "", "parameters": {"type": "object", "properties": {}}}
    ]


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        (
            [get_weather, 42],
            "tools[1]: expected a tool dict, an OpenAI-style tool dict, a function or a "
            "pydantic model class, got 42 (int)",
        ),
        (
            [Calculator],
            "tools[0]: expected a tool dict, an OpenAI-style tool dict, a function or a "
            f"pydantic model class, got {Calculator!r} (type)",
        ),
        ([{"description": "nameless"}], "tools[0]: Each tool must have a 'name'."),
        (
            [{"type": "function", "function": {"description": "nameless"}}],
            "tools[0]: Each tool must have a 'name'.",
        ),
        ([{"name": ""}], "tools[0]: Each tool must have a 'name'."),
        ([get_weather, {"name": "get_weather"}], "tools[1]: duplicate tool name 'get_weather'"),
        ("get_weather", "tools must be a list"),
    ],
)
def test_normalize_rejects_invalid_items_naming_the_index(tools: Any, message: str) -> None:
    with pytest.raises(InvalidRequestError) as excinfo:
        normalize_tools(tools)
    assert str(excinfo.value) == message


def test_normalize_prefixes_function_errors_with_the_index() -> None:
    def untyped(x):  # type: ignore[no-untyped-def]
        return x

    with pytest.raises(InvalidRequestError) as excinfo:
        normalize_tools([UNIFIED, untyped])
    assert str(excinfo.value) == (
        "tools[1]: tool function 'untyped': parameter 'x' has no type hint; annotate it "
        "(e.g. `x: str`) so a JSON schema can be built"
    )


def test_to_tool_converts_one_item() -> None:
    assert to_tool(get_weather) == GET_WEATHER_TOOL
    with pytest.raises(ValueError, match=r"^tools\[3\]: expected a tool dict"):
        to_tool(None, 3)
    with pytest.raises(ValueError, match=r"^tool: expected a tool dict"):
        to_tool({"name": "f"})  # dicts are base.normalize_tools' business


def test_callable_registry_maps_names_to_functions_only() -> None:
    calc = Calculator()
    registry = callable_registry([UNIFIED, get_weather, Plain, calc.add, get_weather_async])
    assert registry == {
        "get_weather": get_weather,
        "add": calc.add,
        "get_weather_async": get_weather_async,
    }
    assert callable_registry(None) == {}


def test_lazy_attribute_on_zerda_llm() -> None:
    import zerda.llm

    assert zerda.llm.tool_from_function is tool_from_function


# --- validate_arguments -------------------------------------------------------------------


def ship(to: Address, items: list[Address], unit: Unit, express: bool = False) -> None:
    pass


def test_validate_coerces_and_leaves_out_omitted_defaults() -> None:
    result = validate_arguments(get_weather, {"city": "Paris", "days": "4"})
    assert result == {"city": "Paris", "days": 4}
    assert type(result["days"]) is int


def test_validate_builds_enum_members_and_model_instances() -> None:
    address = {"street": "1 Main St", "city": "Oslo"}
    result = validate_arguments(ship, {"to": address, "items": [address], "unit": "fahrenheit"})
    assert result == {
        "to": Address(street="1 Main St", city="Oslo"),
        "items": [Address(street="1 Main St", city="Oslo")],
        "unit": Unit.FAHRENHEIT,
    }


def test_validate_does_not_mutate_arguments() -> None:
    arguments = {"city": "Paris", "days": "4"}
    validate_arguments(get_weather, arguments)
    assert arguments == {"city": "Paris", "days": "4"}


def test_validate_includes_field_defaults_the_function_cannot_supply() -> None:
    def top(n: int = Field(5, description="How many.")) -> None:
        pass

    assert validate_arguments(top, {}) == {"n": 5}


def test_validate_failure_lists_every_problem() -> None:
    with pytest.raises(ValueError) as excinfo:
        validate_arguments(get_weather, {"days": "many", "unit": "kelvin", "country": "FR"})
    assert str(excinfo.value) == (
        "Invalid arguments for tool 'get_weather': "
        "city: required parameter is missing; "
        "days: Input should be a valid integer, unable to parse string as an integer "
        "(got 'many'); "
        "unit: Input should be 'celsius' or 'fahrenheit' (got 'kelvin'); "
        "country: unknown parameter (parameters: city, days, unit)."
    )


def test_validate_failure_points_into_nested_values() -> None:
    with pytest.raises(ValueError) as excinfo:
        validate_arguments(ship, {"to": {"street": 1}, "items": [], "unit": "celsius"})
    assert str(excinfo.value) == (
        "Invalid arguments for tool 'ship': "
        "to.street: Input should be a valid string (got 1); "
        "to.city: required parameter is missing."
    )


def test_validate_raw_means_invalid_json() -> None:
    with pytest.raises(ValueError) as excinfo:
        validate_arguments(get_weather, {"_raw": '{"city": "Par'})
    assert str(excinfo.value) == (
        "The arguments for tool 'get_weather' were not valid JSON: '{\"city\": \"Par'. "
        "Call it again with a JSON object that matches its parameters schema."
    )


def test_validate_rejects_non_object_arguments() -> None:
    with pytest.raises(ValueError) as excinfo:
        validate_arguments(get_weather, ["Paris"])  # type: ignore[arg-type]
    assert str(excinfo.value) == (
        "Invalid arguments for tool 'get_weather': expected a JSON object, got list."
    )


def test_validate_truncates_long_inputs() -> None:
    with pytest.raises(ValueError) as excinfo:
        validate_arguments(get_weather, {"city": "x", "days": "9" * 500 + "x"})
    message = str(excinfo.value)
    assert message.endswith("...).")
    assert len(message) < 300


# --- works with every provider's converter ------------------------------------------------


def test_generated_schema_converts_for_every_provider() -> None:
    from zerda.llm import tools as converters

    unified = normalize_tools([ship, get_weather, Forecast])
    assert unified is not None
    for convert in (
        converters.to_openai_tools,
        converters.to_anthropic_tools,
        converters.to_bedrock_tools,
        converters.to_gemini_tools,
    ):
        assert convert(copy.deepcopy(unified))
    gemini = json.dumps(converters.to_gemini_tools(unified))
    assert "$ref" not in gemini
    assert "$defs" not in gemini
