"""A finished game's log as a JSON document (``mmk export``, read back by
``mmk verify``; docs/decisions/0040)::

    {"format": "mmk-game-export/1", "gameId": "...",
     "events": [{"seq": 1, "type": "GameCreated", "at": "...",
                 "public": {...},            # what a spectator saw
                 "seats": {"0": {...}, ...}, # a seat's own projection, where it has one
                 "cause": {...} or null}, ...]}

Events and causes have their stored shapes (infra/codec.py). Reading is
strict: anything malformed raises ``ValueError`` (or ``TypeError``,
``KeyError``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from domain.log import ExportedEvent
from infra.codec import Json, cause_from_json, cause_to_json, event_from_json, event_to_json

FORMAT = "mmk-game-export/1"


def export_to_json(game_id: str, log: Sequence[ExportedEvent]) -> Json:
    """The document of a game's log."""
    events = []
    for e in log:
        public = event_to_json(e.public)
        own = {str(s): event_to_json(v) for s, v in enumerate(e.seats) if v != e.public}
        events.append(
            {
                "seq": e.seq,
                "type": type(e.public).__name__,
                "at": e.at.isoformat(),
                "public": public,
                "seats": own,
                "cause": None if e.cause is None else cause_to_json(e.cause),
            }
        )
    return {"format": FORMAT, "gameId": game_id, "events": events}


def export_from_json(doc: Any, seat_count: int | None = None) -> tuple[str, list[ExportedEvent]]:
    """The game id and log of a document; ``seat_count`` defaults to the
    first event's (``GameCreated``)."""
    if not isinstance(doc, Mapping) or doc.get("format") != FORMAT:
        raise ValueError(f"not an {FORMAT} document")
    game_id, events = doc["gameId"], doc["events"]
    if not isinstance(game_id, str) or not isinstance(events, list) or not events:
        raise ValueError("an export has a gameId and a non-empty list of events")
    if seat_count is None:
        first = events[0]
        seat_count = first["public"].get("seatCount") if isinstance(first, Mapping) else None
        if type(seat_count) is not int or not 0 < seat_count <= 64:
            raise ValueError("the first event (GameCreated) gives no seatCount")
    return game_id, [_event(e, seat_count) for e in events]


def _event(e: Any, seat_count: int) -> ExportedEvent:
    if not isinstance(e, Mapping):
        raise TypeError("an exported event is an object")
    kind, seq, at, own = e["type"], e["seq"], e["at"], e.get("seats", {})
    if not (isinstance(kind, str) and type(seq) is int and isinstance(at, str)) or not isinstance(
        own, Mapping
    ):
        raise TypeError("an exported event has a type, a seq, a time and its seats' projections")
    public = event_from_json(kind, e["public"])
    seats = tuple(
        event_from_json(kind, own[str(s)]) if str(s) in own else public for s in range(seat_count)
    )
    cause = e.get("cause")
    return ExportedEvent(
        seq,
        datetime.fromisoformat(at),
        public,
        seats,
        None if cause is None else cause_from_json(cause),
    )
