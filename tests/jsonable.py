"""Any domain value as plain JSON-able data (dataclasses to dicts, enums to
their values, tuples to lists), for comparing and recording what an
audience sees.

The property tests convert every view of every step of their games, so the
conversion is chosen once per class (:func:`_kind`), not found again for
each value."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from enum import Enum
from typing import Any

_Field = tuple[str, bool, Any]  # name, a server option (0046), its default
_KINDS: dict[type, Callable[[Any], Any]] = {}


def to_jsonable(obj: Any) -> Any:
    cls = type(obj)
    convert = _KINDS.get(cls)
    if convert is None:
        convert = _KINDS[cls] = _kind(cls)
    return convert(obj)


def _kind(cls: type) -> Callable[[Any], Any]:
    if dataclasses.is_dataclass(cls) and not issubclass(cls, type):
        fields = tuple(
            (f.name, bool(f.metadata.get("server")), f.default) for f in dataclasses.fields(cls)
        )
        return lambda obj: _dataclass(obj, fields)
    if issubclass(cls, Enum):
        return _enum
    if issubclass(cls, list | tuple):
        return _sequence
    if issubclass(cls, dict):
        return _mapping
    return _same


def _dataclass(obj: Any, fields: tuple[_Field, ...]) -> dict[str, Any]:
    out = {}
    for name, server, default in fields:
        value = getattr(obj, name)
        if server and value == default:
            continue  # the server's options at their defaults: as before they existed (0046)
        out[name] = to_jsonable(value)
    return out


def _enum(obj: Enum) -> Any:
    return obj.value


def _sequence(obj: list[Any] | tuple[Any, ...]) -> list[Any]:
    return [to_jsonable(x) for x in obj]


def _mapping(obj: dict[Any, Any]) -> dict[str, Any]:
    return {str(k): to_jsonable(v) for k, v in obj.items()}


def _same(obj: Any) -> Any:
    return obj
