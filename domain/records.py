"""What the service stores: players, game records, idempotency records and
booster packs (the event log: domain/log.py). Plain data; adapters map them
to tables."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import TYPE_CHECKING

from domain.bots.strategy import Strategy
from domain.clocks import TurnClock
from domain.errors import DomainError, ErrorCode, ReplayedRefusal
from domain.game.boosters import BoosterPack
from domain.game.events import Event
from domain.game.options import GameOptions
from domain.game.state import GameState, Termination
from domain.log import Cause, LoggedEvent

if TYPE_CHECKING:
    from domain.notifications import Notification


class GameStatus(Enum):
    """A game's life: filling seats, being played, over (by the rules, or
    abandoned: nobody left to play it, docs/decisions/0051)."""

    LOBBY = "lobby"
    RUNNING = "running"
    FINISHED = "finished"
    ABANDONED = "abandoned"

    @property
    def over(self) -> bool:
        """Ended one way or the other: it changes no more (a finished game
        may still log its rematch offer)."""
        return self in (GameStatus.FINISHED, GameStatus.ABANDONED)


class Visibility(Enum):
    """Who may find, watch and join a game (domain/invitations.py,
    docs/decisions/0062)."""

    PUBLIC = "public"
    UNLISTED = "unlisted"
    PRIVATE = "private"


@dataclass(frozen=True, slots=True)
class Invitation:
    """A pending invitation: ``player_id`` was asked to the game by
    ``invited_by`` (its host) at ``at`` (domain/invitations.py)."""

    player_id: str
    invited_by: str
    at: datetime


@dataclass(frozen=True, slots=True)
class Player:
    """A guest account. Its token is never stored, only the token's hash."""

    id: str
    name: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class ServiceKey:
    """A credential of the app's backend (issue #24): what it may do
    (``scopes``), never the key itself, stored only as a hash."""

    id: str
    name: str
    scopes: frozenset[str]
    created_at: datetime
    revoked_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """One of a player's live MMK tokens (issue #24), as its player sees it:
    never the token, nor its hash. ``last_used_at`` is as fine as the step
    a sign-in refreshes it by (domain/services/sessions.py)."""

    id: str
    player_id: str
    label: str | None
    created_at: datetime
    last_used_at: datetime


@dataclass(frozen=True, slots=True)
class Occupant:
    """Who sits in a seat: a player, a bot, or both: a player whose seat a
    bot took over (timeouts or a leave, docs/decisions/0046) keeps it while
    the bot plays it."""

    player_id: str | None = None
    bot: Strategy | None = None

    @property
    def is_bot(self) -> bool:
        return self.bot is not None


@dataclass(slots=True)
class GameRecord:
    """A game as stored: lobby settings, seats, the engine state once started.

    ``seed`` and ``salt`` are secret until the game ends (the seed would
    reveal every hand, R3.5; ``GameStarted`` commits to both, ``GameEnded``
    reveals them: domain/fairness.py). ``practice``: the host chose the seed
    (a reproducible game, marked as such to everyone). ``version`` counts
    accepted changes (lobby and play alike); ``last_seq`` is the newest event.
    ``clock``: the turn clocks once running (domain/clocks.py; None before,
    and in a game started before clocks until its next change).
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
    salt: str = ""  # "" for a game created before fair deals (docs/decisions/0040)
    practice: bool = False
    clock: TurnClock | None = None
    # Quick play and rematch (docs/decisions/0048): the quick-play match key
    # (None: not a quick-play game), when empty seats fill with bots, the
    # rematch of a finished game, and each seat's reservation (a player id).
    quick_play: str | None = None
    fill_bots_at: datetime | None = None
    rematch_id: str | None = None
    reserved: list[str | None] = field(default_factory=list)
    # When the game ends as abandoned if nothing changes it before (set on
    # every change, docs/decisions/0051; None: never, or over).
    abandon_at: datetime | None = None
    # Who may find, watch and join it; its invite code (None: none) and
    # pending invitations (docs/decisions/0062).
    visibility: Visibility = Visibility.PUBLIC
    invite_code: str | None = None
    invitations: list[Invitation] = field(default_factory=list)
    # A rated game (issue #26, docs/decisions/0065): its end rates its seats.
    rated: bool = False

    @property
    def deadline(self) -> datetime | None:
        """When the running wait times out."""
        return None if self.clock is None else self.clock.deadline

    @property
    def due_at(self) -> datetime | None:
        """When the deadline sweep must next look at it: the wait's warning,
        then its deadline (stored, indexed: the sweep)."""
        return None if self.clock is None else self.clock.due_at

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

    def reserved_for(self, seat: int) -> str | None:
        """The player a seat is kept for (a rematch's invitation), if any."""
        return self.reserved[seat] if seat < len(self.reserved) else None

    def record(
        self, events: Sequence[Event], cause: Cause | None, at: datetime, cause_at: int = 0
    ) -> list[LoggedEvent]:
        """One accepted change: its events get the next seqs (the cause goes
        on the event at index ``cause_at``, the first the engine made) and the
        version goes up by one."""
        logged = [
            LoggedEvent(self.id, self.last_seq + i, at, e, cause if i == cause_at + 1 else None)
            for i, e in enumerate(events, start=1)
        ]
        self.last_seq += len(logged)
        self.version += 1
        self.updated_at = at
        if self.state is not None and (outcome := self.state.outcome) is not None:
            abandoned = outcome.termination is Termination.ABANDONED
            self.status = GameStatus.ABANDONED if abandoned else GameStatus.FINISHED
        return logged

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
            self.salt,
            self.practice,
            self.clock,
            self.quick_play,
            self.fill_bots_at,
            self.rematch_id,
            list(self.reserved),
            self.abandon_at,
            self.visibility,
            self.invite_code,
            list(self.invitations),
            self.rated,
        )


@dataclass(frozen=True, slots=True)
class MutationResult:
    """A game change: the game's id and new version, and the change's events
    as the caller sees them."""

    game_id: str
    version: int
    events: tuple[LoggedEvent, ...]


@dataclass(frozen=True, slots=True)
class SealedToken:
    """A new player's token, sealed under the server's secret and the
    client's idempotency key (domain/services/sealing.py), so that a repeat
    returns the same token, which is never stored in clear."""

    sealed: str


@dataclass(frozen=True, slots=True)
class Refused:
    """A refusal kept as a key's first result (decision 0042): every repeat
    is refused again with the same code and message, and nothing is applied."""

    code: ErrorCode
    message: str

    @classmethod
    def of(cls, e: DomainError) -> Refused:
        return cls(e.code, e.message)

    def again(self) -> ReplayedRefusal:
        """The refusal, for a repeat to raise."""
        return ReplayedRefusal(self.code, self.message)


@dataclass(frozen=True, slots=True)
class IdempotencyRecord:
    """The first result of a mutation sent with ``(player, key)``, kept until
    ``expires_at`` (docs/decisions/0041). For ``createPlayer``, ``key`` is the
    key's digest (domain/services/sealing.py), never the key."""

    player_id: str
    key: str
    fingerprint: str
    result: Remembered
    created_at: datetime
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class BoosterRecord:
    """A booster pack in a player's collection (R1.6, R3.2)."""

    id: str
    player_id: str
    pack: BoosterPack
    opened_at: datetime
    game_id: str | None = None


Remembered = MutationResult | BoosterRecord | SealedToken | Refused
"""What an idempotency key keeps: the first result, a refusal included."""


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
    practice: bool = False
    visibility: Visibility = Visibility.PUBLIC
    rated: bool = False

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
            game.practice,
            game.visibility,
            game.rated,
        )


@dataclass(frozen=True, slots=True)
class Page:
    """A cursor-paginated slice of the lobby listing, newest first."""

    items: list[GameSummary] = field(default_factory=list)
    has_next: bool = False


@dataclass(frozen=True, slots=True)
class PackPage:
    """A page of a player's collection, oldest pack first, and how many
    packs it holds in all."""

    items: list[BoosterRecord] = field(default_factory=list)
    has_next: bool = False
    total: int = 0


@dataclass(frozen=True, slots=True)
class LobbyUpdate:
    """What lobby screens hear of a game created, filling, started or finished."""

    game_id: str
    status: GameStatus
    seat_count: int
    seats_taken: int
    version: int

    @classmethod
    def of(cls, game: GameRecord) -> LobbyUpdate:
        return cls(game.id, game.status, game.seat_count, game.seats_taken, game.version)


@dataclass(frozen=True, slots=True)
class NewEvents:
    """A game's events as one unit of work committed them, with the game as
    it committed it (for the work after the commit)."""

    game: GameRecord
    events: tuple[LoggedEvent, ...]
    told: tuple[Notification, ...] = ()  # the change's notifications (issue #25)
