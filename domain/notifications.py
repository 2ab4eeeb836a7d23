"""Notifications (issue #25): what a player is told of their games while
they are away, one kind per dataclass (the API makes a GraphQL type of
each, as of the events). A change's notices are derived from the change
itself (its events, and its players' seats before and after it, as "my
games" sees them: domain/my_games.py) and stored in the change's own
transaction, so each is written once, on whichever instance made it.

A notice carries only what its player may see (R11): their own seat, the
deadline, their own outcome; never another seat's hand. The player whose
request made the change is told nothing of it (they know).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated

from domain.clocks import SeatTakenOver
from domain.game.events import SEAT, Event, GameEnded, GameStarted
from domain.invitations import PlayersInvited
from domain.my_games import SeatEntry, entries_of
from domain.records import GameRecord
from domain.rematch import RematchOffered

GAME = "The game"


@dataclass(frozen=True, slots=True)
class Notice:
    """The base of every kind of notification: the game it is about."""

    game_id: Annotated[str, GAME]


@dataclass(frozen=True, slots=True)
class YourTurn(Notice):
    """The game waits for you: your turn came (R6), or a decision is yours
    (R7.0b)."""

    seat: Annotated[int, SEAT]
    deadline: Annotated[
        datetime | None, "When your turn times out (a timed game); null: untimed"
    ] = None


@dataclass(frozen=True, slots=True)
class YourInvitation(Notice):
    """A host invited you to their game (accept or decline it: `me.invitations`)."""

    host_id: Annotated[str, "The host who invited you"]


@dataclass(frozen=True, slots=True)
class YourGameStarted(Notice):
    """A game you sit in started (R4)."""

    seat: Annotated[int, SEAT]


@dataclass(frozen=True, slots=True)
class YourGameEnded(Notice):
    """A game you sat in ended: your score, place and win (R9.2, R10); an
    abandoned game has none of place and win."""

    seat: Annotated[int, SEAT]
    score: Annotated[int | None, "Your final score (R10)"] = None
    place: Annotated[int | None, "Your place, 1 the best (R9.2); null if abandoned"] = None
    won: Annotated[bool | None, "You won or shared the win; null if abandoned"] = None


@dataclass(frozen=True, slots=True)
class YourRematch(Notice):
    """A player of your finished game asked for its rematch: your old seat
    is kept for you in the new game (`joinGame`)."""

    new_game_id: Annotated[str, "The rematch"]


@dataclass(frozen=True, slots=True)
class YourSeatTakenOver(Notice):
    """Your turns timed out: a bot plays your seat until you take it back
    (`reclaimSeat`)."""

    seat: Annotated[int, SEAT]


NOTICE_KINDS: tuple[type[Notice], ...] = (
    YourTurn,
    YourInvitation,
    YourGameStarted,
    YourGameEnded,
    YourRematch,
    YourSeatTakenOver,
)


@dataclass(frozen=True, slots=True)
class Notification:
    """A notice as stored for its player: their ``seq`` (1, 2, 3... gapless
    per player), when, and when read (None: unread)."""

    player_id: str
    seq: int
    at: datetime
    notice: Notice
    read_at: datetime | None = None


def notices(
    game: GameRecord,
    events: Sequence[Event],
    before: Sequence[SeatEntry] | None,
    actor: str | None,
) -> list[tuple[str, Notice]]:
    """The notices of one recorded change of ``game`` (as it stands after
    it), ``events`` its events, ``before`` its persons' seats before it (None:
    a new game), ``actor`` the player whose request made it (told nothing)."""
    after = entries_of(game)
    found: list[tuple[str, Notice]] = []
    for e in events:
        if isinstance(e, PlayersInvited):
            found += [(p, YourInvitation(game.id, game.host)) for p in e.player_ids]
        elif isinstance(e, GameStarted):
            found += [(s.player_id, YourGameStarted(game.id, s.seat)) for s in after]
        elif isinstance(e, GameEnded):
            found += [
                (s.player_id, YourGameEnded(game.id, s.seat, s.score, s.place, s.won))
                for s in after
            ]
        elif isinstance(e, RematchOffered):
            found += [(s.player_id, YourRematch(game.id, e.new_game_id)) for s in after]
        elif isinstance(e, SeatTakenOver) and not e.left:
            owner = game.seats[e.seat]
            if owner is not None and owner.player_id is not None:
                found.append((owner.player_id, YourSeatTakenOver(game.id, e.seat)))
    waited = {s.player_id for s in before or () if s.your_turn}
    found += [
        (s.player_id, YourTurn(game.id, s.seat, s.deadline))
        for s in after
        if s.your_turn and s.player_id not in waited
    ]
    return [(p, n) for p, n in found if p != actor]
