"""What the service stores: players, game records, logged events, idempotency
records and booster packs. Plain data; adapters map them to tables."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any

from domain.bots.strategy import Strategy
from domain.game.boosters import BoosterPack
from domain.game.options import GameOptions
from domain.game.state import GameState


class GameStatus(Enum):
    """A game's life: filling seats, being played, over."""

    LOBBY = "lobby"
    RUNNING = "running"
    FINISHED = "finished"


@dataclass(frozen=True, slots=True)
class Player:
    """A guest account. Its token is never stored, only the token's hash."""

    id: str
    name: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Occupant:
    """Who sits in a seat: a player, or a bot (exactly one of the two)."""

    player_id: str | None = None
    bot: Strategy | None = None

    @property
    def is_bot(self) -> bool:
        return self.bot is not None


@dataclass(slots=True)
class GameRecord:
    """A game as stored: lobby settings, seats, the engine state once started.

    ``seed`` is secret (it would reveal every hand, R3.5). ``version`` counts
    accepted changes (lobby and play alike); ``last_seq`` is the newest event.
    """

    id: str
    host: str
    seat_count: int
    options: GameOptions
    seed: str
    rat_choice: int | None
    seats: list[Occupant | None]
    created_at: datetime
    updated_at: datetime
    status: GameStatus = GameStatus.LOBBY
    state: GameState | None = None
    version: int = 0
    last_seq: int = 0

    def seat_of(self, player_id: str | None) -> int | None:
        """The seat a player holds in this game, if any."""
        if player_id is None:
            return None
        for i, o in enumerate(self.seats):
            if o is not None and o.player_id == player_id:
                return i
        return None

    @property
    def seats_taken(self) -> int:
        return sum(o is not None for o in self.seats)

    def clone(self) -> GameRecord:
        """A deep copy: the engine state is changed in place by moves."""
        return GameRecord(
            self.id,
            self.host,
            self.seat_count,
            self.options,
            self.seed,
            self.rat_choice,
            list(self.seats),
            self.created_at,
            self.updated_at,
            self.status,
            None if self.state is None else self.state.clone(),
            self.version,
            self.last_seq,
        )


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """One logged event: per-game ``seq`` 1, 2, 3... with every projection.

    ``cause`` (server-only, never projected) records what produced the batch
    this event opens: ``{"seat": n, "command": {...}}`` for a seat's command,
    ``{"start": {"collections": ...}}`` for the start, so the log replays.
    """

    game_id: str
    seq: int
    type: str
    public: dict[str, Any]
    private: dict[int, dict[str, Any]]
    at: datetime
    cause: dict[str, Any] | None = None

    def for_seat(self, seat: int | None) -> dict[str, Any]:
        """The projection a seat (None: a spectator) may see (R11)."""
        if seat is None:
            return self.public
        return self.private.get(seat, self.public)


@dataclass(frozen=True, slots=True)
class IdempotencyRecord:
    """The first result of a mutation sent with ``(player, key)``."""

    player_id: str
    key: str
    fingerprint: str
    result: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True, slots=True)
class BoosterRecord:
    """A booster pack in a player's collection (R1.6, R3.2)."""

    id: str
    player_id: str
    pack: BoosterPack
    opened_at: datetime
    game_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "playerId": self.player_id,
            "pack": self.pack.to_dict(),
            "openedAt": self.opened_at.isoformat(),
            "gameId": self.game_id,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BoosterRecord:
        game_id = d.get("gameId")
        return cls(
            str(d["id"]),
            str(d["playerId"]),
            BoosterPack.from_dict(d["pack"]),
            datetime.fromisoformat(str(d["openedAt"])),
            None if game_id is None else str(game_id),
        )


@dataclass(frozen=True, slots=True)
class GameSummary:
    """What the lobby listing shows of a game (no state: a listing never
    reads or decodes a game's state)."""

    id: str
    host: str
    status: GameStatus
    seat_count: int
    seats_taken: int
    options: GameOptions
    version: int
    created_at: datetime

    @classmethod
    def of(cls, game: GameRecord) -> GameSummary:
        return cls(
            game.id,
            game.host,
            game.status,
            game.seat_count,
            game.seats_taken,
            game.options,
            game.version,
            game.created_at,
        )


@dataclass(frozen=True, slots=True)
class Page:
    """A cursor-paginated slice of the lobby listing, newest first."""

    items: list[GameSummary] = field(default_factory=list)
    has_next: bool = False
