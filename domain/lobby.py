"""Lobby rules: creating a game, taking and giving up seats, seating bots,
starting (R2.1, R3, R4). Pure functions on a :class:`GameRecord` that return
the public projections of what happened."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from domain.bots.strategy import Strategy
from domain.errors import BadRequest, Forbidden
from domain.game.errors import IllegalAction
from domain.game.options import MAX_SEATS, MIN_SEATS
from domain.game.setup import Setup, new_game
from domain.records import GameRecord, GameStatus, Occupant

Draft = tuple[str, dict[str, Any], dict[int, dict[str, Any]]]
"""An event before it gets its seq: type, public projection, private ones."""

Cause = dict[str, Any]
"""What produced a batch of drafts (see :class:`domain.records.StoredEvent`)."""


@dataclass(frozen=True, slots=True)
class Batch:
    """The drafts of one change, and what caused them (for replays)."""

    drafts: list[Draft]
    cause: Cause | None = None


def check_new_game(seat_count: int, rat_choice: int | None) -> None:
    """R2.1: 3 to 8 seats; the Rat seat, if chosen, is one of them (R4.1)."""
    if not MIN_SEATS <= seat_count <= MAX_SEATS:
        raise BadRequest(f"a game has {MIN_SEATS} to {MAX_SEATS} seats, not {seat_count} (R2.1)")
    if rat_choice is not None and not 0 <= rat_choice < seat_count:
        raise BadRequest(f"the Rat seat must be 0 to {seat_count - 1}")


def _in_lobby(game: GameRecord) -> None:
    if game.status is not GameStatus.LOBBY:
        raise IllegalAction("seats change only while the game is in the lobby")


def _free_seat(game: GameRecord, seat: int | None) -> int:
    if seat is None:
        for i, o in enumerate(game.seats):
            if o is None:
                return i
        raise IllegalAction("every seat is taken")
    if not 0 <= seat < game.seat_count:
        raise BadRequest(f"seat {seat} is not a seat of this {game.seat_count}-seat game")
    if game.seats[seat] is not None:
        raise IllegalAction(f"seat {seat} is taken")
    return seat


def join(game: GameRecord, player_id: str, name: str, seat: int | None) -> list[Draft]:
    """Take a free seat (the lowest, unless one is named)."""
    _in_lobby(game)
    if game.seat_of(player_id) is not None:
        raise IllegalAction("you already hold a seat in this game")
    s = _free_seat(game, seat)
    game.seats[s] = Occupant(player_id=player_id)
    return [("SeatTaken", {"seat": s, "playerId": player_id, "name": name}, {})]


def leave(game: GameRecord, player_id: str) -> list[Draft]:
    """Give up one's seat while in the lobby."""
    _in_lobby(game)
    s = game.seat_of(player_id)
    if s is None:
        raise IllegalAction("you hold no seat in this game")
    game.seats[s] = None
    return [("SeatLeft", {"seat": s, "playerId": player_id}, {})]


def _host_only(game: GameRecord, player_id: str, what: str) -> None:
    if player_id != game.host:
        raise Forbidden(f"only the host may {what}")


def add_bot(game: GameRecord, player_id: str, strategy: Strategy, seat: int | None) -> list[Draft]:
    """The host seats a bot."""
    _host_only(game, player_id, "seat bots")
    _in_lobby(game)
    s = _free_seat(game, seat)
    game.seats[s] = Occupant(bot=strategy)
    return [("BotSeated", {"seat": s, "strategy": strategy.value}, {})]


def start(
    game: GameRecord, player_id: str, collections: Sequence[Sequence[str]] | None
) -> tuple[Setup, Batch]:
    """The host starts a full game: R4 setup runs. A refused deck (R3.4)
    changes nothing."""
    _host_only(game, player_id, "start the game")
    if game.status is not GameStatus.LOBBY:
        raise IllegalAction("the game has started already")
    empty = game.seat_count - game.seats_taken
    if empty:
        raise IllegalAction(f"{empty} seat(s) still empty: join or add bots first")
    setup = new_game(game.seat_count, game.seed, game.options, game.rat_choice, collections)
    game.state, game.status = setup.state, GameStatus.RUNNING
    drafts: list[Draft] = [(e.type.value, e.public, e.private) for e in setup.events]
    cause = {
        "start": {"collections": None if collections is None else [list(c) for c in collections]}
    }
    return setup, Batch(drafts, cause)
