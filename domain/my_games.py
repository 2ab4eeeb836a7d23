"""A player's games, as "my games" lists them (issue #24): one entry per
person's seat, derived from the game each time it is stored, so the list is
read from an index, never by decoding games.

Order: the games waiting for the player first, the nearest deadline first
(untimed last); then the others, the most recent change *for the player*
first (their turn came or went, the game started or ended). ``rank`` is that
order as one string, so a page is one index range. An entry is written
again only when it changes for its player (:meth:`SeatEntry.same_for_player`):
a move writes the row of the seat that moved and of the seat to move next,
not every seat's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime

from domain.game.engine import to_act
from domain.game.state import Outcome, Termination
from domain.records import GameRecord, GameStatus, GameSummary

YOUR_TURN, OTHERS = "0", "1"
_SPAN = 10**19  # microseconds: beyond any date a game has
_NO_DEADLINE = "9" * 19


@dataclass(frozen=True, slots=True)
class SeatEntry:
    """A person's seat in a game: whether the game waits for them (a seat a
    bot plays does not), the wait's deadline, and once finished their score,
    place (R9.2: ties share a place, a disqualified house last) and win."""

    player_id: str
    game_id: str
    seat: int
    status: GameStatus
    your_turn: bool
    deadline: datetime | None
    rank: str
    format: str
    seat_count: int
    created_at: datetime
    updated_at: datetime
    score: int | None = None
    place: int | None = None
    won: bool | None = None

    def same_for_player(self, other: SeatEntry) -> bool:
        """Nothing changed for the player but the time: the stored entry
        (and its time and rank) stands."""
        return replace(other, rank=self.rank, updated_at=self.updated_at) == self


@dataclass(frozen=True, slots=True)
class SeatName:
    """Who sits in a seat, as a list of games shows it."""

    seat: int
    player_id: str | None
    name: str | None
    bot: str | None


@dataclass(frozen=True, slots=True)
class MyGame:
    entry: SeatEntry
    summary: GameSummary
    seats: tuple[SeatName, ...]


@dataclass(frozen=True, slots=True)
class MyGamesPage:
    items: list[MyGame]
    has_next: bool


@dataclass(frozen=True, slots=True)
class StatLine:
    """Finished games of one format and seat count: played, won (R9.2: a
    shared win is a win)."""

    format: str
    seat_count: int
    played: int
    won: int


def _micros(at: datetime) -> int:
    aware = at if at.tzinfo is not None else at.replace(tzinfo=UTC)
    return int(aware.timestamp()) * 1_000_000 + aware.microsecond


def rank_of(your_turn: bool, deadline: datetime | None, updated_at: datetime) -> str:
    if your_turn:
        return YOUR_TURN + (_NO_DEADLINE if deadline is None else f"{_micros(deadline):019d}")
    return OTHERS + f"{_SPAN - _micros(updated_at):019d}"


def places(outcome: Outcome) -> list[int]:
    """R9.2: each seat's place: the winners first (the Rat alone when it
    holds all houses), then by score; equal keys share a place; a house
    player with all houses is last."""
    winners, out, pts = set(outcome.winners), set(outcome.disqualified), outcome.scores

    def key(i: int) -> tuple[int, int]:
        if i in winners:
            return (0, 0)
        return (2, 0) if i in out else (1, -pts[i])

    keys = [key(i) for i in range(len(pts))]
    return [1 + sum(k < mine for k in keys) for mine in keys]


def changed_entries(
    before: list[SeatEntry] | None, after: list[SeatEntry]
) -> list[SeatEntry] | None:
    """Of the game's entries now (``after``), those to write over the stored
    ones (``before``: as of the version loaded); None when the persons
    changed (write them all again)."""
    if before is None:
        return None
    old = {e.player_id: e for e in before}
    if old.keys() != {e.player_id for e in after}:
        return None
    return [e for e in after if not old[e.player_id].same_for_player(e)]


def entries_of(game: GameRecord) -> list[SeatEntry]:
    """The entries of the game's persons' seats, as the game stands."""
    state = game.state
    waiting = to_act(state) if state is not None and game.status is GameStatus.RUNNING else None
    outcome = state.outcome if state is not None else None
    ranked = outcome is not None and outcome.termination is not Termination.ABANDONED
    placed = places(outcome) if outcome is not None and ranked else None
    found: list[SeatEntry] = []
    for seat, o in enumerate(game.seats):
        if o is None or o.player_id is None or any(e.player_id == o.player_id for e in found):
            continue  # a person sits once in a game (GameRecord.seat_of: the first)
        mine = waiting == seat and not o.is_bot
        deadline = game.deadline if mine else None
        found.append(
            SeatEntry(
                o.player_id,
                game.id,
                seat,
                game.status,
                mine,
                deadline,
                rank_of(mine, deadline, game.updated_at),
                game.options.format.value,
                game.seat_count,
                game.created_at,
                game.updated_at,
                outcome.scores[seat] if outcome is not None else None,
                placed[seat] if placed is not None else None,
                (seat in outcome.winners) if outcome is not None and ranked else None,
            )
        )
    return found
