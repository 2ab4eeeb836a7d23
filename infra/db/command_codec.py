"""Commands as stored in a change's cause: plain JSON-able data, and back."""

from __future__ import annotations

import dataclasses
from typing import Any

from domain.game.cards import Card
from domain.game.commands import COMMAND_KINDS, Command, Gift, GiveCards, ReorderTop
from domain.game.errors import BadInput


def command_to_dict(cmd: Command) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": type(cmd).__name__}
    for f in dataclasses.fields(cmd):
        value = getattr(cmd, f.name)
        if isinstance(value, tuple):
            value = [dataclasses.asdict(v) if isinstance(v, Gift) else v for v in value]
        out[f.name] = value
    return out


def _list(x: Any) -> list[Any]:
    if not isinstance(x, list):
        raise TypeError("expected a list")
    return x


def _card(x: Any) -> Card:
    if not isinstance(x, str):
        raise TypeError("a card id is a string")
    return Card(x)


def _gift(g: Any) -> Gift:
    """``{"to": seat, "card": id}``, as :func:`command_to_dict` writes it: no
    coercion (``int(1.5)`` would give another seat, ``int(inf)`` overflows)."""
    to = g["to"]
    if not isinstance(to, int) or isinstance(to, bool):
        raise TypeError("a gift's seat is an integer")
    return Gift(to, _card(g["card"]))


def command_from_dict(data: dict[str, Any]) -> Command:
    """Rebuild a command; malformed data raises ``BadInput``."""
    try:
        cls = COMMAND_KINDS[data["kind"]]
        args = {k: v for k, v in data.items() if k != "kind"}
        if cls is GiveCards:
            args["gifts"] = tuple(_gift(g) for g in _list(args["gifts"]))
        elif cls is ReorderTop:
            args["cards"] = tuple(_card(c) for c in _list(args["cards"]))
        for name in ("card", "discard"):
            if name in args:
                args[name] = _card(args[name])
        cmd = cls(**args)
    except (KeyError, TypeError, ValueError) as e:
        raise BadInput(f"not a command: {e}") from e
    for f in dataclasses.fields(cmd):
        want = {"to": int, "seat": int}.get(f.name)
        value = getattr(cmd, f.name)
        if want is int and (not isinstance(value, int) or isinstance(value, bool)):
            raise BadInput(f"{f.name} must be an integer")
        if f.name in ("card", "discard", "text", "message_id") and not isinstance(value, str):
            raise BadInput(f"{f.name} must be a string")
    return cmd
