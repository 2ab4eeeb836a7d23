"""Quick play rules (issue #15 part 5, docs/decisions/0048): which lobby
games match a ``quickPlay`` call, when a quick-play game starts itself, and
its empty seats filled with bots once its ``fillWithBotsAfter`` time is due."""

from __future__ import annotations

from datetime import datetime, timedelta

from domain.bots.strategy import Strategy
from domain.errors import BadRequest
from domain.game.events import Event
from domain.game.options import CORRESPONDENCE_QUICK_PLAY, Format, GameOptions, Pace
from domain.lobby import BotSeated, check_new_game
from domain.records import GameRecord, GameStatus, Occupant

MAX_FILL_AFTER = 3600
"""The longest ``fillWithBotsAfter``, in seconds (an hour)."""
FILL_STRATEGY = Strategy.GREEDY
"""How the bots that fill a quick-play game play."""


def match_key(seat_count: int, format: Format, pace: Pace = Pace.LIVE) -> str:
    """The settings a quick-play game is matched on: seat count, format and
    pace (every other option at its default, or the correspondence clock;
    no chosen Rat seat, not practice)."""
    key = f"{format.value}/{seat_count}"
    return key if pace is Pace.LIVE else f"{key}/{pace.value}"


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
    person still waits in it)."""
    return (
        game.status is GameStatus.LOBBY
        and game.fill_bots_at is not None
        and game.fill_bots_at <= now
        and any(o is not None and o.player_id is not None for o in game.seats)
    )


def fill_with_bots(game: GameRecord) -> list[Event]:
    """Seat a :data:`FILL_STRATEGY` bot in every empty seat."""
    events: list[Event] = []
    for i, o in enumerate(game.seats):
        if o is None:
            game.seats[i] = Occupant(bot=FILL_STRATEGY)
            events.append(BotSeated(i, FILL_STRATEGY))
    return events
