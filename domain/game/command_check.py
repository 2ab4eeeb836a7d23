"""Type checks of a command's fields at the engine's edge, so a malformed
command is refused with ``BAD_INPUT`` before any rule runs (and ``1.0`` or
``True`` never pass for a seat)."""

from __future__ import annotations

import dataclasses

from domain.game.cards import Card
from domain.game.commands import Command, Gift, GiveCards, ReorderTop
from domain.game.errors import BadInput

_INT_FIELDS = frozenset({"to", "seat"})
_STR_FIELDS = frozenset({"text", "message_id"})
_CARD_FIELDS = frozenset({"card", "discard"})


def is_seat_number(value: object) -> bool:
    return type(value) is int


def check_command(cmd: Command) -> None:
    """Raise :class:`BadInput` unless every field has its declared type."""
    if not dataclasses.is_dataclass(cmd):
        raise BadInput(f"not a command: {type(cmd).__name__}")
    for f in dataclasses.fields(cmd):
        value = getattr(cmd, f.name)
        if f.name in _INT_FIELDS and not is_seat_number(value):
            raise BadInput(f"{f.name} must be a seat number")
        if f.name in _STR_FIELDS and type(value) is not str:
            raise BadInput(f"{f.name} must be a string")
        if f.name in _CARD_FIELDS and type(value) is not Card:
            raise BadInput(f"{f.name} must be a card")
    if isinstance(cmd, GiveCards):
        if type(cmd.gifts) is not tuple or not all(type(g) is Gift for g in cmd.gifts):
            raise BadInput("gifts must be a tuple of Gift")
        for g in cmd.gifts:
            check_command(g)  # type: ignore[arg-type]
    if isinstance(cmd, ReorderTop) and (
        type(cmd.cards) is not tuple or not all(type(c) is Card for c in cmd.cards)
    ):
        raise BadInput("cards must be a tuple of cards")
