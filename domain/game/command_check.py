"""Type checks of a command's fields at the engine's edge, so a malformed
command is refused with ``BAD_INPUT`` before any rule runs (and ``1.0`` or
``True`` never pass for a seat)."""

from __future__ import annotations

import dataclasses

from domain.game.cards import Card
from domain.game.commands import Command, Gift, GiveCards, PlayCard, ReorderTop
from domain.game.errors import BadInput

_INT_FIELDS = frozenset({"to", "seat"})
_STR_FIELDS = frozenset({"text", "message_id"})
_CARD_FIELDS = frozenset({"card", "discard"})


def is_seat_number(value: object) -> bool:
    return type(value) is int


_Check = tuple[str, str]  # (field, what it must be: "seat", "str" or "card")
_CHECKS: dict[type, tuple[_Check, ...]] = {}


def _checks(kind: type) -> tuple[_Check, ...]:
    """The checks of a command class's fields, worked out once per class."""
    found = _CHECKS.get(kind)
    if found is None:
        found = tuple(
            (f.name, what)
            for f in dataclasses.fields(kind)
            for what, names in (("seat", _INT_FIELDS), ("str", _STR_FIELDS), ("card", _CARD_FIELDS))
            if f.name in names
        )
        _CHECKS[kind] = found
    return found


def check_command(cmd: Command) -> None:
    """Raise :class:`BadInput` unless every field has its declared type."""
    if type(cmd) is PlayCard:  # the common command, checked as the loop below would
        if type(cmd.card) is not Card:
            raise BadInput("card must be a card")
        return
    checks = _CHECKS.get(type(cmd))  # only dataclasses' checks are kept
    if checks is None:
        if not dataclasses.is_dataclass(cmd):
            raise BadInput(f"not a command: {type(cmd).__name__}")
        checks = _checks(cmd if isinstance(cmd, type) else type(cmd))
    for name, what in checks:
        value = getattr(cmd, name)
        if what == "seat":
            if not is_seat_number(value):
                raise BadInput(f"{name} must be a seat number")
        elif what == "str":
            if type(value) is not str:
                raise BadInput(f"{name} must be a string")
        elif type(value) is not Card:
            raise BadInput(f"{name} must be a card")
    if isinstance(cmd, GiveCards):
        if type(cmd.gifts) is not tuple or not all(type(g) is Gift for g in cmd.gifts):
            raise BadInput("gifts must be a tuple of Gift")
        for g in cmd.gifts:
            check_command(g)  # type: ignore[arg-type]
    if isinstance(cmd, ReorderTop) and (
        type(cmd.cards) is not tuple or not all(type(c) is Card for c in cmd.cards)
    ):
        raise BadInput("cards must be a tuple of cards")
