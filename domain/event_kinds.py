"""Every kind of event, by name: the one list the log's codec reads and
writes by and the API makes a GraphQL type of each (issue #23). A new kind
is a dataclass (its fields, their descriptions, its projection: ``seen_by``)
listed in its module's tuple below, or, from outside the game's modules,
:func:`register`-ed before the schema is built."""

from __future__ import annotations

from typing import TypeVar

from domain.clocks import CLOCK_EVENTS
from domain.game.events import GAME_EVENTS, Event
from domain.invitations import INVITATION_EVENTS
from domain.lobby import LOBBY_EVENTS
from domain.rematch import AFTER_GAME_EVENTS

E = TypeVar("E", bound=type[Event])

EVENT_KINDS: dict[str, type[Event]] = {
    kind.__name__: kind
    for kind in (
        *LOBBY_EVENTS,
        *INVITATION_EVENTS,
        *GAME_EVENTS,
        *CLOCK_EVENTS,
        *AFTER_GAME_EVENTS,
    )
}
"""Every kind, by the name it is logged, sent and typed under."""


def register(kind: E) -> E:
    """Adds ``kind`` to :data:`EVENT_KINDS` (usable as a class decorator);
    a name already taken by another class is refused."""
    known = EVENT_KINDS.setdefault(kind.__name__, kind)
    if known is not kind:
        raise ValueError(f"an event kind named {kind.__name__} exists already")
    return kind
