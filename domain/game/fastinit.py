"""A faster ``__init__`` for the engine's frozen, slotted dataclasses.

A frozen dataclass's generated ``__init__`` sets each field with
``object.__setattr__(self, name, value)``, which looks the attribute up on
the type every time; the engine builds ~10 such values per decision (events,
choices, commands) and a view builds dozens. :func:`fast_init` swaps in an
``__init__`` with the very same parameters and defaults that sets each slot
through its member descriptor, found once: about 35 % cheaper per value,
with the same result (``tests/unit/test_fastinit.py``; docs/decisions/0037).

It refuses any class whose ``__init__`` does more than set its fields
(``__post_init__``, default factories, ``InitVar``, keyword-only fields,
fields left out of ``__init__``), or that is not frozen and slotted; a
``ClassVar`` is a class constant and no field.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, TypeVar, get_origin

T = TypeVar("T")


def _class_var(annotation: Any) -> bool:
    """Whether a pseudo-field's annotation is a ``ClassVar`` (a class
    constant, not set by ``__init__``), written as a type or, under
    ``from __future__ import annotations``, as text."""
    if isinstance(annotation, str):
        return annotation.startswith(("ClassVar", "typing.ClassVar"))
    return annotation is ClassVar or get_origin(annotation) is ClassVar


def fast_init(cls: type[T]) -> type[T]:
    """Give the frozen, slotted dataclass ``cls`` the faster ``__init__``."""
    kind: Any = cls  # what follows reads the dataclass machinery's attributes
    params = getattr(kind, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" not in kind.__dict__:
        raise TypeError(f"{cls.__name__} is not a frozen, slotted dataclass")
    if hasattr(kind, "__post_init__"):
        raise TypeError(f"{cls.__name__} has a __post_init__")
    fields = dataclasses.fields(kind)
    named = {f.name for f in fields}
    pseudo = [f for name, f in kind.__dataclass_fields__.items() if name not in named]
    if not all(f.init for f in fields) or not all(_class_var(f.type) for f in pseudo):
        raise TypeError(f"{cls.__name__} has an InitVar or a field left out of __init__")
    namespace: dict[str, Any] = {}
    params_src, body = [], []
    for i, f in enumerate(fields):
        if f.default_factory is not dataclasses.MISSING or f.kw_only:
            raise TypeError(f"{cls.__name__}.{f.name}: a default factory or keyword-only field")
        if f.default is dataclasses.MISSING:
            params_src.append(f.name)
        else:
            namespace[f"_default{i}"] = f.default
            params_src.append(f"{f.name}=_default{i}")
        namespace[f"_set{i}"] = getattr(kind, f.name).__set__  # the slot's member descriptor
        body.append(f"    _set{i}(self, {f.name})")
    source = f"def __init__(self, {', '.join(params_src)}):\n" + "\n".join(body or ["    pass"])
    exec(source, namespace)  # as dataclasses writes its own __init__
    init = namespace["__init__"]
    generated = kind.__init__
    init.__qualname__ = generated.__qualname__
    init.__module__ = generated.__module__
    init.__annotations__ = dict(generated.__annotations__)
    init.__doc__ = generated.__doc__
    kind.__init__ = init
    return cls
