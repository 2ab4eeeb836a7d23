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

from domain.clocks import DeadlineNear, SeatTakenOver, TurnTimedOut
from domain.game.engine import to_act
from domain.game.events import SEAT, Event, GameEnded, GameStarted
from domain.invitations import PlayersInvited
from domain.my_games import entries_of
from domain.records import GameRecord, GameStatus
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
class YourDeadlineSoon(Notice):
    """Your turn's deadline is near: act by then, or the server moves for you."""

    seat: Annotated[int, SEAT]
    deadline: Annotated[datetime, "When your turn times out"]


@dataclass(frozen=True, slots=True)
class YourTurnTimedOut(Notice):
    """Your turn's deadline passed: the server moved for you (the GREEDY
    move, from your seat's view)."""

    seat: Annotated[int, SEAT]


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
    YourDeadlineSoon,
    YourTurnTimedOut,
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


def _seat_notice(
    game_id: str, e: Event
) -> YourDeadlineSoon | YourTurnTimedOut | YourSeatTakenOver | None:
    """The notice of a clock event, for its seat's player (a person's wait:
    a bot's seat has no deadline; a seat a bot took over is still its
    player's)."""
    if isinstance(e, DeadlineNear):
        return YourDeadlineSoon(game_id, e.seat, e.deadline)
    if isinstance(e, TurnTimedOut):
        return YourTurnTimedOut(game_id, e.seat)
    if isinstance(e, SeatTakenOver) and not e.left:
        return YourSeatTakenOver(game_id, e.seat)
    return None


def waiting_person(game: GameRecord) -> str | None:
    """The person the running game waits for (not a bot's seat, nor a seat a
    bot plays for its player), as "my games" sees it; None: nobody."""
    state = game.state
    if state is None or game.status is not GameStatus.RUNNING:
        return None
    seat = to_act(state)
    occupant = None if seat is None else game.seats[seat]
    if occupant is None or occupant.is_bot:
        return None
    return occupant.player_id


def notices(
    game: GameRecord,
    events: Sequence[Event],
    waited: str | None,
    actor: str | None,
) -> list[tuple[str, Notice]]:
    """The notices of one recorded change of ``game`` (as it stands after
    it), ``events`` its events, ``waited`` the person the game waited for
    before it (:func:`waiting_person`), ``actor`` the player whose request
    made it (told nothing)."""
    found: list[tuple[str, Notice]] = []
    for e in events:
        if isinstance(e, PlayersInvited):
            found += [(p, YourInvitation(game.id, game.host)) for p in e.player_ids]
        elif isinstance(e, GameStarted):
            found += [(s.player_id, YourGameStarted(game.id, s.seat)) for s in entries_of(game)]
        elif isinstance(e, GameEnded):
            found += [
                (s.player_id, YourGameEnded(game.id, s.seat, s.score, s.place, s.won))
                for s in entries_of(game)
            ]
        elif isinstance(e, RematchOffered):
            found += [(s.player_id, YourRematch(game.id, e.new_game_id)) for s in entries_of(game)]
        elif (notice := _seat_notice(game.id, e)) is not None:
            owner = game.seats[notice.seat]
            if owner is not None and owner.player_id is not None:
                found.append((owner.player_id, notice))
    waiting = waiting_person(game)
    if waiting is not None and waiting != waited:
        seat = game.seat_of(waiting)
        assert seat is not None
        found.append((waiting, YourTurn(game.id, seat, game.deadline)))
    return [(p, n) for p, n in found if p != actor]
