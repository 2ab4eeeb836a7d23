"""Any domain value as plain JSON-able data (dataclasses to dicts, enums to
their values, tuples to lists), for comparing and recording what an
audience sees."""

from __future__ import annotations

import dataclasses
from enum import Enum
from typing import Any


def to_jsonable(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {
            f.name: to_jsonable(getattr(obj, f.name))
            for f in dataclasses.fields(obj)
            if not (f.metadata.get("server") and getattr(obj, f.name) == f.default)
        }  # the server's options at their defaults: as before they existed (0046)
    if isinstance(obj, Enum):
        return obj.value
    if isinstance(obj, list | tuple):
        return [to_jsonable(x) for x in obj]
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    return obj
