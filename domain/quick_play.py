"""Quick play rules (issue #15 part 5, docs/decisions/0048): which lobby
games match a ``quickPlay`` call, when a quick-play game starts itself, and
its empty seats filled with bots once its ``fillWithBotsAfter`` time is due."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from domain.bots.strategy import Strategy
from domain.errors import BadRequest
from domain.game.events import Event
from domain.game.options import CORRESPONDENCE_QUICK_PLAY, Format, GameOptions, Pace
from domain.lobby import MIN_RATED_PEOPLE, BotSeated, check_new_game
from domain.records import GameRecord, GameStatus, Occupant

MAX_FILL_AFTER = 3600
"""The longest ``fillWithBotsAfter``, in seconds (an hour)."""
RATED_FILL: tuple[Strategy, ...] = (Strategy.GREEDY, Strategy.EXPERT, Strategy.RANDOM)
"""The strategies a rated quick-play game is filled with: the one rated
nearest its people (issue #26)."""


def match_key(seat_count: int, format: Format, pace: Pace = Pace.LIVE, rated: bool = False) -> str:
    """The settings a quick-play game is matched on: seat count, format,
    pace and whether it is rated (every other option at its default, or the
    correspondence clock; no chosen Rat seat, not practice)."""
    key = f"{format.value}/{seat_count}"
    key = key if pace is Pace.LIVE else f"{key}/{pace.value}"
    return f"{key}/rated" if rated else key


@dataclass(frozen=True, slots=True)
class RatingWindow:
    """Rated quick play (issue #26): a waiting game takes a newcomer whose
    rating is within ``width`` of its people's mean, a width that grows the
    longer the game has waited (as Lichess's pools widen their range):
    ``start`` display points, ``per_second`` more each second, at most
    ``widest``."""

    start: float = 100.0
    per_second: float = 10.0
    widest: float = 1000.0

    def width(self, waited: timedelta) -> float:
        grown = self.start + self.per_second * max(0.0, waited.total_seconds())
        return min(self.widest, grown)

    def takes(self, anchor: float, rating: float, waited: timedelta) -> bool:
        return abs(anchor - rating) <= self.width(waited)


def people_of(game: GameRecord) -> list[str]:
    """The people seated in a game (bots aside)."""
    return [o.player_id for o in game.seats if o is not None and o.player_id is not None]


def closest_bot(target: float, ratings: dict[Strategy, float]) -> Strategy:
    """The fill strategy whose rating is nearest ``target`` (a rated game's
    people's mean); ties go to the first of :data:`RATED_FILL`."""
    return min(RATED_FILL, key=lambda s: abs(ratings[s] - target))


def options_of(format: Format, pace: Pace) -> GameOptions:
    """A quick-play game's options: the defaults, the format, and a day a
    turn for correspondence (:data:`CORRESPONDENCE_QUICK_PLAY`)."""
    if pace is Pace.LIVE:
        return GameOptions(format=format)
    turn, bank = CORRESPONDENCE_QUICK_PLAY
    return GameOptions(format=format, turn_seconds=turn, bank_seconds=bank)


def check_quick_play(seat_count: int, format: Format, fill_after: int | None) -> None:
    """R2.1 seats; Former Sealed needs each player's collection (R3.3), so
    quick play offers Singleton and Sealed; ``fillWithBotsAfter`` is 0 to
    :data:`MAX_FILL_AFTER` seconds."""
    check_new_game(seat_count, None)
    if format is Format.FORMER_SEALED:
        raise BadRequest("quick play offers the singleton and sealed formats, not former sealed")
    if fill_after is not None and not 0 <= fill_after <= MAX_FILL_AFTER:
        raise BadRequest(f"fillWithBotsAfter is 0 to {MAX_FILL_AFTER} seconds, not {fill_after}")


def has_room(game: GameRecord, player_id: str) -> bool:
    """An open quick-play game ``player_id`` may sit in: in the lobby, with
    a free seat that is not kept for someone else."""
    return game.status is GameStatus.LOBBY and any(
        o is None and game.reserved_for(i) in (None, player_id) for i, o in enumerate(game.seats)
    )


def is_full(game: GameRecord) -> bool:
    return game.seats_taken == game.seat_count


def bring_fill_forward(game: GameRecord, now: datetime, fill_after: int | None) -> None:
    """A caller's ``fillWithBotsAfter`` only ever brings the game's fill time
    forward: nobody waits longer than they asked for."""
    if fill_after is None:
        return
    at = now + timedelta(seconds=fill_after)
    if game.fill_bots_at is None or at < game.fill_bots_at:
        game.fill_bots_at = at


def fill_due(game: GameRecord, now: datetime) -> bool:
    """Whether the game's empty seats are to be filled with bots now (a
    person still waits in it; a rated game: two, as it needs to start,
    [decision] so a lone rated waiter waits on for a second person)."""
    people = len(people_of(game))
    return (
        game.status is GameStatus.LOBBY
        and game.fill_bots_at is not None
        and game.fill_bots_at <= now
        and people >= (MIN_RATED_PEOPLE if game.rated else 1)
    )


def fill_with_bots(game: GameRecord, strategy: Strategy) -> list[Event]:
    """Seat a ``strategy`` bot in every empty seat."""
    events: list[Event] = []
    for i, o in enumerate(game.seats):
        if o is None:
            game.seats[i] = Occupant(bot=strategy)
            events.append(BotSeated(i, strategy))
    return events
