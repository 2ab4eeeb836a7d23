"""The ``GameEvent`` interface: what every event of a game has (docs/clients.md
"Resuming"). Each kind of event is its own object type
(api/graphql/types/event_kinds.py); its ``__typename`` is the event's name."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TypeVar

import strawberry
from strawberry.scalars import JSON

from domain.game.events import Event
from infra.codec import event_to_json

T = TypeVar("T")

NO_CACHE_KEY = (
    "No cache key: an event is a value of its stream. For one token (one cache), "
    '`gameId` and `seq` identify it (Apollo: `keyFields: ["gameId", "seq"]` on '
    "`GameEvent`, with `possibleTypes`)."
)


def event_type(description: str) -> Callable[[type[T]], type[T]]:
    """``strawberry.type`` for an event kind: its description, then how a
    client cache identifies it."""
    return strawberry.type(description=f"{description} {NO_CACHE_KEY}")


@strawberry.interface(
    description="One event of a game, as you may see it (R11): a seat's projection or the "
    "public one. Its type (``__typename``) is the kind of event. " + NO_CACHE_KEY
)
class GameEvent:
    """No field reads the caller: the object for an audience is the same for
    all its subscribers, so a subscription frame is built once per audience
    (api/fast/frames.py, keyed by ``frame_key``)."""

    game_id: strawberry.ID = strawberry.field(description="The game")
    seq: int = strawberry.field(description="The event's place in the game's log: 1, 2, 3...")
    at: datetime = strawberry.field(description="When it happened")
    event: strawberry.Private[Event]
    frame_key: strawberry.Private[tuple[str, int] | None]

    @strawberry.field(
        description="The kind of event, as ``__typename`` gives it",
        deprecation_reason="Use __typename",
    )
    def type(self) -> str:
        return type(self.event).__name__

    @strawberry.field(
        description="The event's fields as one JSON object (camelCase keys, lower-case enum "
        "values)",
        deprecation_reason="Use the typed fields of the event's type",
    )
    def data(self) -> JSON:
        return JSON(event_to_json(self.event))
