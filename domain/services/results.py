"""What a game mutation returns (and what an idempotency key replays)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from domain.records import StoredEvent


@dataclass(frozen=True, slots=True)
class EventView:
    """One event as one audience sees it. ``audience``, when known, names that
    audience (its bus channel): every view with the same audience and seq is
    the same, so a frame built for one of its subscribers may be sent to all."""

    game_id: str
    seq: int
    type: str
    at: str
    data: dict[str, Any]
    audience: str | None = field(default=None, compare=False)

    @classmethod
    def of(cls, e: StoredEvent, seat: int | None, audience: str | None = None) -> EventView:
        return cls(e.game_id, e.seq, e.type, e.at.isoformat(), e.for_seat(seat), audience)

    def to_message(self) -> dict[str, Any]:
        return {
            "gameId": self.game_id,
            "seq": self.seq,
            "type": self.type,
            "at": self.at,
            "data": self.data,
        }

    @classmethod
    def from_message(cls, m: dict[str, Any], audience: str | None = None) -> EventView:
        return cls(
            str(m["gameId"]), int(m["seq"]), str(m["type"]), str(m["at"]), dict(m["data"]), audience
        )


@dataclass(frozen=True, slots=True)
class MutationResult:
    """The game's id and new version, and the events as the caller sees them."""

    game_id: str
    version: int
    events: tuple[EventView, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "gameId": self.game_id,
            "version": self.version,
            "events": [e.to_message() for e in self.events],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MutationResult:
        return cls(
            str(d["gameId"]),
            int(d["version"]),
            tuple(EventView.from_message(e) for e in d["events"]),
        )
