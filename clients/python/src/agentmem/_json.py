"""Conversion between the service's camelCase JSON and the package's snake_case dataclasses."""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Dict, Type, TypeVar, Union, get_args, get_origin, get_type_hints

T = TypeVar("T")

_UPPER = re.compile(r"(?<!^)(?=[A-Z])")
_hints_cache: Dict[type, Dict[str, Any]] = {}


def snake_case(key: str) -> str:
    # `_meta` is the one underscored key in the API; it becomes `meta`.
    return _UPPER.sub("_", key.lstrip("_")).lower()


def camel_case(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(part.title() for part in rest)


def from_json(cls: Type[T], data: Dict[str, Any]) -> T:
    """Builds `cls` from a JSON object; keys the class does not know are ignored, so newer servers still parse."""
    hints = _hints_cache.get(cls)
    if hints is None:
        hints = _hints_cache[cls] = get_type_hints(cls)
    values = {}
    for key, value in data.items():
        name = snake_case(key)
        if name in hints:
            values[name] = _convert(hints[name], value)
    return cls(**values)  # type: ignore[call-arg]


def _convert(hint: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = get_origin(hint)
    if origin is Union:
        inner = [arg for arg in get_args(hint) if arg is not type(None)]
        return _convert(inner[0], value) if len(inner) == 1 else value
    if origin is list:
        (item,) = get_args(hint)
        return [_convert(item, v) for v in value]
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return from_json(hint, value)
    return value


def to_json(value: Any) -> Any:
    """A request value as JSON: dataclasses and dict keys in camelCase, None fields left out.

    Keys inside `metadata` are the caller's own and are kept as given.
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {camel_case(k): (v if k == "metadata" else to_json(v)) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    return value
