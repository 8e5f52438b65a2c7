"""Python callables and pydantic models as unified tool dicts.

``tools=`` accepts, mixed in one list, unified dicts, OpenAI-style
``{"type": "function", "function": {...}}`` dicts, Python functions (sync or async) and
pydantic model classes. :func:`zerda.llm._request.normalize_tools` turns such a list into
unified dicts ``{"name", "description", "parameters"}`` (functions and models through
:func:`to_tool`); the tool loop uses :func:`callable_registry` to
find the function behind a call and :func:`validate_arguments` to check what the model sent.

Rules for functions (see docs/tools-from-python.md):

- name: ``fn.__name__``; lambdas, ``functools.partial`` objects and callable instances have
  no usable name and are rejected (wrap them in a ``def``, or name them with
  ``@zerda.llm.tool(name=...)``, which also sets ``description`` and ``strict``).
- description: the docstring's summary and long description, without its sections;
  parameter descriptions come from its Args/Parameters/``:param:`` section (Google, NumPy
  and reST styles, parsed by docstring-parser). ``Annotated[T, Field(description=...)]``
  wins over the docstring.
- schema: built by pydantic from the type hints; required = parameters without defaults.
  Every parameter needs a type hint. ``*args``/``**kwargs`` are left out of the schema (a
  model can only send named arguments); positional-only parameters and an unbound
  method's ``self``/``cls`` are rejected.

This module imports pydantic at its top: ``zerda.llm`` must only import it lazily.
"""

from __future__ import annotations

import copy
import functools
import inspect
import typing
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import docstring_parser
import pydantic
from pydantic.fields import FieldInfo

from zerda.llm._tool_decorator import settings_of

__all__ = [
    "callable_registry",
    "to_tool",
    "tool_from_function",
    "tool_from_model",
    "validate_arguments",
]

_CACHE_SIZE = 1024
_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
_REPR_LIMIT = 120

# Keys whose value is a map of sub-schemas, a list of sub-schemas, or one sub-schema. Only
# these are walked, so a "title" inside a default, enum or const value is left alone.
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_VALUES = (
    "items",
    "additionalProperties",
    "additionalItems",
    "not",
    "contains",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
)


@dataclass(frozen=True)
class _FunctionTool:
    """Everything derived once per function: its tool dict and its arguments model."""

    tool: dict[str, Any]
    model: type[pydantic.BaseModel]
    # internal field name -> parameter name; the model's fields are f0, f1, ... with the
    # parameter name as alias, so parameters such as `json` or `model_config` cannot clash
    # with BaseModel attributes.
    params: dict[str, str]
    # parameters whose Python default is a pydantic Field(...): the function cannot be
    # called without them, so validated arguments always include them.
    field_defaults: frozenset[str]
    accepts_extra: bool


# --- public API ---------------------------------------------------------------------------


def tool_from_function(fn: Callable[..., Any]) -> dict[str, Any]:
    """Return the unified tool dict ``{"name", "description", "parameters"}`` for ``fn``.

    Raises ValueError naming the function and parameter when a schema cannot be built
    (missing type hint, unsupported type, unnamed callable...). The result is a new dict
    each call; the work behind it is cached per function.
    """
    return _copy_json(_function_tool(fn).tool)


def tool_from_model(model: type[pydantic.BaseModel]) -> dict[str, Any]:
    """Return the unified tool dict for a pydantic model class (its fields are the parameters).

    Name: the class name; description: the class docstring's summary; field descriptions
    from ``Field(description=...)`` or, failing that, the docstring's Attributes section.
    """
    if not _is_model_class(model):
        raise ValueError(f"tool_from_model expects a pydantic model class, got {model!r}")
    return _copy_json(_cached_model_tool(model))


def to_tool(item: Any, index: int | None = None) -> dict[str, Any]:
    """Return the unified tool dict for a function or a pydantic model class given in
    ``tools=`` (dicts are handled by :func:`zerda.llm._request.normalize_tools`, which calls this).

    ``index`` (the item's position in ``tools``) prefixes error messages: ``tools[2]: ...``.
    """
    return _normalize_item(item, index)


def callable_registry(tools: list[Any] | None) -> dict[str, Callable[..., Any]]:
    """Return ``{tool name: function}`` for the items of ``tools`` that are functions.

    Dicts and pydantic model classes describe tools but have no implementation, so they are
    not in the registry. Names follow :func:`tool_from_function`.
    """
    registry: dict[str, Callable[..., Any]] = {}
    for item in tools or []:
        if _is_function_tool(item):
            registry[_tool_name(item)] = item
    return registry


def validate_arguments(fn: Callable[..., Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """Validate and coerce model-supplied ``arguments`` against ``fn``'s signature.

    Returns the keyword arguments to call ``fn`` with (coerced values: ints from numeric
    strings, Enum members, model instances...); parameters the model left out are not
    included, so the function's own defaults apply. Raises ValueError with a message
    written for the model when the arguments do not validate, including the
    ``{"_raw": text}`` that parsers return for arguments that were not valid JSON.
    """
    spec = _function_tool(fn)
    name = spec.tool["name"]
    if not isinstance(arguments, dict):
        raise ValueError(
            f"Invalid arguments for tool {name!r}: expected a JSON object, "
            f"got {type(arguments).__name__}."
        )
    if set(arguments) == {"_raw"}:
        raise ValueError(
            f"The arguments for tool {name!r} were not valid JSON: "
            f"{_short_repr(arguments['_raw'])}. Call it again with a JSON object that "
            "matches its parameters schema."
        )
    try:
        validated = spec.model.model_validate(arguments)
    except pydantic.ValidationError as error:
        raise ValueError(_explain_validation_error(name, spec, error)) from error
    return _call_kwargs(spec, validated)


# --- functions ----------------------------------------------------------------------------


def _function_tool(fn: Callable[..., Any]) -> _FunctionTool:
    """Return the cached derivation for ``fn`` (built uncached when ``fn`` is unhashable).

    A bound method is cached by its underlying function, so a method of a fresh instance
    each turn neither misses the cache nor keeps the instances alive.
    """
    if inspect.ismethod(fn):
        target, bound = fn.__func__, True
    else:
        target, bound = fn, False
    try:
        hash(target)
    except TypeError:
        return _build_function_tool(target, bound)
    return _cached_function_tool(target, bound)


# Keyed by the function object: the tool loop converts the same functions every turn.
@functools.lru_cache(maxsize=_CACHE_SIZE)
def _cached_function_tool(fn: Callable[..., Any], bound: bool) -> _FunctionTool:
    return _build_function_tool(fn, bound)


def _build_function_tool(fn: Callable[..., Any], bound: bool) -> _FunctionTool:
    """Derive the tool dict and arguments model; ``bound``: skip the first parameter."""
    name = _tool_name(fn)
    parameters = _parameters(fn, name, bound)
    hints = _type_hints(fn, name)
    docstring = _parse_docstring(inspect.getdoc(fn))
    named = [p for p in parameters if p.kind not in _VARIADIC]
    # Fields are f0, f1, ... aliased to the parameter names (see _FunctionTool.params).
    params = {f"f{position}": parameter.name for position, parameter in enumerate(named)}
    doc_params = _doc_param_descriptions(docstring)
    fields = {
        field: _field(name, parameter, hints, doc_params.get(parameter.name))
        for field, parameter in zip(params, named, strict=True)
    }
    accepts_extra = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
    model, schema = _arguments_model(name, fields, params, accepts_extra)
    tool = _with_settings(
        fn,
        {
            "name": name,
            "description": _description(docstring),
            "parameters": _parameters_schema(schema),
        },
    )
    field_defaults = frozenset(
        field
        for field, parameter in zip(params, named, strict=True)
        if isinstance(parameter.default, FieldInfo)
    )
    return _FunctionTool(tool, model, params, field_defaults, accepts_extra)


def _tool_name(fn: Callable[..., Any]) -> str:
    """Return the ``@tool(name=...)`` given, else ``fn.__name__``; raise when ``fn`` has no
    name usable as a tool name."""
    settings = settings_of(fn)
    if settings is not None and settings.name is not None:
        return settings.name
    name = getattr(fn, "__name__", None)
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(
            f"cannot name a tool after {fn!r}: pass a function defined with `def` "
            "(lambdas, functools.partial objects and callable instances have no usable name)"
        )
    return name


def _with_settings(fn: Callable[..., Any], tool: dict[str, Any]) -> dict[str, Any]:
    """The tool dict with what ``@tool(description=..., strict=...)`` says (the name is
    :func:`_tool_name`'s); the loop reads ``requires_approval`` and ``timeout`` itself."""
    settings = settings_of(fn)
    if settings is None:
        return tool
    if settings.description is not None:
        tool["description"] = settings.description
    if settings.strict:
        tool["strict"] = True
    return tool


def _parameters(fn: Callable[..., Any], name: str, bound: bool) -> list[inspect.Parameter]:
    """Return ``fn``'s parameters, rejecting those a keyword-only call cannot fill."""
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError) as error:
        raise ValueError(f"tool function {name!r}: cannot read its signature ({error})") from error
    if bound:
        parameters = parameters[1:]
    elif parameters and parameters[0].name in ("self", "cls"):
        raise ValueError(
            f"tool function {name!r}: first parameter {parameters[0].name!r} looks like an "
            "unbound method; pass the bound method (instance.method or Class.classmethod)"
        )
    for parameter in parameters:
        if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise ValueError(
                f"tool function {name!r}: parameter {parameter.name!r} is positional-only; "
                "tools are called with keyword arguments"
            )
    return parameters


def _type_hints(fn: Callable[..., Any], name: str) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except (NameError, TypeError, AttributeError, SyntaxError) as error:  # unresolvable
        raise ValueError(
            f"tool function {name!r}: cannot resolve its type hints ({error}); "
            "define the types it names at module level"
        ) from error


def _field(
    function: str, parameter: inspect.Parameter, hints: dict[str, Any], doc: str | None
) -> tuple[Any, Any]:
    """Return the ``(annotation, default)`` pair ``create_model`` takes for one parameter."""
    if parameter.name not in hints:
        raise ValueError(
            f"tool function {function!r}: parameter {parameter.name!r} has no type hint; "
            f"annotate it (e.g. `{parameter.name}: str`) so a JSON schema can be built"
        )
    hint = hints[parameter.name]
    default = ... if parameter.default is inspect.Parameter.empty else parameter.default
    extra: dict[str, Any] = {"alias": parameter.name}
    # An explicit Field(description=...) wins over the docstring.
    if doc and FieldInfo.from_annotated_attribute(hint, default).description is None:
        extra["description"] = doc
    return Annotated[hint, pydantic.Field(**extra)], default


def _arguments_model(
    name: str, fields: dict[str, Any], params: dict[str, str], accepts_extra: bool
) -> tuple[type[pydantic.BaseModel], dict[str, Any]]:
    """Return the model that validates a call's arguments, and its JSON schema."""
    # Unknown arguments are refused (and reported to the model) unless the function takes
    # **kwargs, in which case they are passed through.
    config = pydantic.ConfigDict(extra="allow" if accepts_extra else "forbid")
    try:
        model = pydantic.create_model(name, __config__=config, **fields)
        return model, model.model_json_schema()
    except pydantic.PydanticUserError as error:
        raise ValueError(_schema_error(name, fields, params, error)) from error


def _schema_error(
    name: str, fields: dict[str, Any], params: dict[str, str], error: Exception
) -> str:
    """Return a message naming the parameter whose type has no schema (found on failure only)."""
    reason = str(error).splitlines()[0]
    for field, (annotation, _default) in fields.items():
        try:
            with warnings.catch_warnings():
                # The alias in the annotation has no effect outside a model: pydantic warns.
                warnings.simplefilter("ignore")
                pydantic.TypeAdapter(annotation).json_schema()
        except pydantic.PydanticUserError:
            return (
                f"tool function {name!r}: cannot build a schema for parameter "
                f"{params[field]!r}: {reason}"
            )
    return f"tool function {name!r}: cannot build a schema from its type hints: {reason}"


def _model_schema(name: str, model: type[pydantic.BaseModel]) -> dict[str, Any]:
    try:
        return model.model_json_schema()
    except pydantic.PydanticUserError as error:
        reason = str(error).splitlines()[0]
        raise ValueError(f"tool model {name!r}: cannot build its JSON schema: {reason}") from error


# --- pydantic models ----------------------------------------------------------------------


def _is_model_class(item: Any) -> bool:
    return isinstance(item, type) and issubclass(item, pydantic.BaseModel)


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _cached_model_tool(model: type[pydantic.BaseModel]) -> dict[str, Any]:
    name = model.__name__
    raw = _model_schema(name, model)
    if raw.get("type") != "object":
        raise ValueError(f"tool model {name!r}: its schema is not a JSON object")
    # Read __doc__ from the class itself: an inherited docstring (BaseModel's own) is not
    # this tool's description.
    docstring = _parse_docstring(model.__dict__.get("__doc__"))
    parameters = _parameters_schema(raw)
    parameters["properties"] = _with_doc_descriptions(
        model, parameters["properties"], _doc_param_descriptions(docstring)
    )
    return {"name": name, "description": _description(docstring), "parameters": parameters}


def _with_doc_descriptions(
    model: type[pydantic.BaseModel], properties: dict[str, Any], docs: dict[str, str]
) -> dict[str, Any]:
    """Return ``properties`` with docstring descriptions added where a field has none."""
    result = dict(properties)
    for field_name, field in model.model_fields.items():
        key = _schema_key(field_name, field)
        doc = docs.get(field_name)
        if doc and key in result and "description" not in result[key]:
            result[key] = {**result[key], "description": doc}
    return result


def _schema_key(field_name: str, field: FieldInfo) -> str:
    """Return the property name pydantic's validation-mode schema uses for a field."""
    if isinstance(field.validation_alias, str):
        return field.validation_alias
    return field.alias or field_name


# --- docstrings ---------------------------------------------------------------------------


def _parse_docstring(text: str | None) -> docstring_parser.Docstring:
    if not text:
        return docstring_parser.Docstring()
    text = inspect.cleandoc(text)
    try:
        return docstring_parser.parse(text)
    except docstring_parser.ParseError:
        # A docstring none of the styles can parse is still a fine description.
        fallback = docstring_parser.Docstring()
        fallback.short_description = text
        return fallback


def _description(docstring: docstring_parser.Docstring) -> str:
    """Return the summary and long description, without Args/Returns/... sections."""
    parts = [docstring.short_description, docstring.long_description]
    return "\n\n".join(part.strip() for part in parts if part and part.strip())


def _doc_param_descriptions(docstring: docstring_parser.Docstring) -> dict[str, str]:
    return {
        param.arg_name: param.description.strip()
        for param in docstring.params
        if param.description and param.description.strip()
    }


# --- schemas ------------------------------------------------------------------------------


def _parameters_schema(raw: dict[str, Any]) -> dict[str, Any]:
    """Return the tool's top-level object schema: type, properties, required, $defs.

    Pydantic's top-level title, description and additionalProperties are dropped: the
    description belongs to the tool, and additionalProperties is not accepted everywhere.
    """
    clean = _without_titles(raw)
    schema: dict[str, Any] = {
        "type": "object",
        "properties": clean.get("properties", {}),
        "required": clean.get("required", []),
    }
    if "$defs" in clean:
        schema["$defs"] = clean["$defs"]
    return schema


def _copy_json(value: Any) -> Any:
    """Return a deep copy of JSON-shaped data (dicts, lists, scalars); faster than deepcopy."""
    if isinstance(value, dict):
        return {key: _copy_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy_json(item) for item in value]
    return value


def _without_titles(schema: Any) -> Any:
    """Return a copy of ``schema`` without the "title" keys pydantic adds to every schema."""
    if not isinstance(schema, dict):
        return schema
    result: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            result[key] = {name: _without_titles(sub) for name, sub in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            result[key] = [_without_titles(sub) for sub in value]
        elif key in _SCHEMA_VALUES:
            result[key] = _without_titles(value)
        else:
            result[key] = copy.deepcopy(value)
    return result


# --- to_tool helpers --------------------------------------------------------------


def _is_function_tool(item: Any) -> bool:
    return callable(item) and not isinstance(item, (dict, type))


def _normalize_item(item: Any, index: int | None) -> dict[str, Any]:
    where = "tool" if index is None else f"tools[{index}]"
    try:
        if _is_model_class(item):
            return tool_from_model(item)
        if _is_function_tool(item):
            return tool_from_function(item)
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from error
    raise ValueError(
        f"{where}: expected a tool dict, an OpenAI-style tool dict, a function or a "
        f"pydantic model class, got {_short_repr(item)} ({type(item).__name__})"
    )


# --- validation helpers -------------------------------------------------------------------


def _call_kwargs(spec: _FunctionTool, validated: pydantic.BaseModel) -> dict[str, Any]:
    kwargs = {
        param: getattr(validated, field)
        for field, param in spec.params.items()
        if field in validated.model_fields_set or field in spec.field_defaults
    }
    if spec.accepts_extra and validated.model_extra:
        kwargs.update(validated.model_extra)
    return kwargs


def _explain_validation_error(
    name: str, spec: _FunctionTool, error: pydantic.ValidationError
) -> str:
    problems = [_explain_one(spec, detail) for detail in error.errors(include_url=False)]
    return f"Invalid arguments for tool {name!r}: " + "; ".join(problems) + "."


def _explain_one(spec: _FunctionTool, detail: Any) -> str:
    where = ".".join(str(part) for part in detail["loc"]) or "arguments"
    if detail["type"] == "missing":
        return f"{where}: required parameter is missing"
    if detail["type"] == "extra_forbidden":
        known = ", ".join(spec.params.values()) or "none"
        return f"{where}: unknown parameter (parameters: {known})"
    return f"{where}: {detail['msg']} (got {_short_repr(detail['input'])})"


def _short_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _REPR_LIMIT else text[: _REPR_LIMIT - 3] + "..."
