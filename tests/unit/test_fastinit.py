"""The engine's frozen values keep their dataclass behaviour with
:func:`domain.game.fastinit.fast_init`'s ``__init__`` (docs/decisions/0037):
the same parameters and defaults, every field set, still frozen; and a class
whose ``__init__`` would do more than set its fields is refused."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import InitVar, dataclass, field
from typing import Any

import pytest

from domain.game import commands
from domain.game.choice import Choice, GiftOption
from domain.game.events import GAME_EVENTS, DealtSeat, WonPlay
from domain.game.fastinit import fast_init

FAST = (
    *GAME_EVENTS,
    DealtSeat,
    WonPlay,
    Choice,
    GiftOption,
    *commands.COMMAND_KINDS.values(),
    commands.Gift,
)


@pytest.mark.parametrize("kind", FAST, ids=[k.__name__ for k in FAST])
def test_fast_init_keeps_the_dataclass_signature_and_sets_every_field(kind: Any) -> None:
    fields = dataclasses.fields(kind)
    params = list(inspect.signature(kind).parameters.values())
    assert [(p.name, p.default) for p in params] == [
        (f.name, inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default)
        for f in fields
    ]
    assert all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params)
    assert kind.__init__.__qualname__ == f"{kind.__qualname__}.__init__"
    values = [object() for _ in fields]
    by_position = kind(*values)
    by_name = kind(**{f.name: v for f, v in zip(fields, values, strict=True)})
    for f, v in zip(fields, values, strict=True):
        assert getattr(by_position, f.name) is v
        assert getattr(by_name, f.name) is v
    assert by_position == by_name
    if fields:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(by_position, fields[0].name, None)
    required = [f for f in fields if f.default is dataclasses.MISSING]
    defaulted = kind(*values[: len(required)])
    for f in fields[len(required) :]:
        assert getattr(defaulted, f.name) == f.default


def test_fast_init_refuses_what_it_cannot_do_alike() -> None:
    @dataclass(frozen=True)
    class NoSlots:
        a: int

    @dataclass(slots=True)
    class NotFrozen:
        a: int

    @dataclass(frozen=True, slots=True)
    class PostInit:
        a: int

        def __post_init__(self) -> None:
            pass

    @dataclass(frozen=True, slots=True)
    class Factory:
        a: list[int] = field(default_factory=list)

    @dataclass(frozen=True, slots=True)
    class KeywordOnly:
        a: int = field(kw_only=True)

    @dataclass(frozen=True, slots=True)
    class WithInitVar:
        a: int
        b: InitVar[int]

    @dataclass(frozen=True, slots=True)
    class LeftOut:
        a: int
        b: int = field(init=False, default=0)

    for kind in (NoSlots, NotFrozen, PostInit, Factory, KeywordOnly, WithInitVar, LeftOut):
        with pytest.raises(TypeError):
            fast_init(kind)
