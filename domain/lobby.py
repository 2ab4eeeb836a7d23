"""Lobby rules: creating a game, taking and giving up seats, seating bots,
starting (R2.1, R3, R4). Functions on a :class:`GameRecord` that change it
and return what happened; the lobby's events (all public) are here."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated

from domain.bots.strategy import Strategy
from domain.errors import BadRequest, Forbidden
from domain.fairness import commitment, seal
from domain.game.cards import Card
from domain.game.errors import IllegalAction
from domain.game.events import SEAT, Event
from domain.game.options import MAX_SEATS, MIN_SEATS, AbilityTrigger, Format, GameOptions
from domain.game.setup import Setup, new_game
from domain.log import GameStart
from domain.records import GameRecord, GameStatus, Occupant


@dataclass(frozen=True, slots=True)
class GameCreated(Event):
    """A new game in the lobby, with its options (R2.1, R3, R4.1, R7.0, R8.3)."""

    host_id: Annotated[str, "The player who created it"]
    seat_count: Annotated[int, "Seats at the table (R2.1: 3 to 8)"]
    format: Annotated[Format, "Where the deck comes from (R3)"]
    ability_trigger: Annotated[AbilityTrigger, "Which plays trigger (R7.0)"]
    refill_hands: Annotated[bool, "Hands refill after a trick (R8.3)"]
    chosen_rat_seat: Annotated[
        int | None, "The Rat's seat the host chose; null: drawn at the start (R4.1)"
    ]

    @classmethod
    def of(cls, game: GameRecord) -> GameCreated:
        o: GameOptions = game.options
        return cls(
            game.host, game.seat_count, o.format, o.ability_trigger, o.refill_hands, game.rat_choice
        )


@dataclass(frozen=True, slots=True)
class SeatTaken(Event):
    """A player took a seat."""

    seat: Annotated[int, SEAT]
    player_id: Annotated[str, "The player"]
    name: Annotated[str, "The player's name"]


@dataclass(frozen=True, slots=True)
class SeatLeft(Event):
    """A player gave up a seat."""

    seat: Annotated[int, SEAT]
    player_id: Annotated[str, "The player"]


@dataclass(frozen=True, slots=True)
class BotSeated(Event):
    """The host seated a bot."""

    seat: Annotated[int, SEAT]
    strategy: Annotated[Strategy, "How the bot plays"]


LOBBY_EVENTS: tuple[type[Event], ...] = (GameCreated, SeatTaken, SeatLeft, BotSeated)
SEAT_CHANGES = (SeatTaken, SeatLeft)


@dataclass(frozen=True, slots=True)
class Started:
    """A started game: its setup, its first events and what caused them."""

    setup: Setup
    events: list[Event]
    cause: GameStart


def check_new_game(seat_count: int, rat_choice: int | None) -> None:
    """R2.1: 3 to 8 seats; the Rat seat, if chosen, is one of them (R4.1)."""
    if not MIN_SEATS <= seat_count <= MAX_SEATS:
        raise BadRequest(f"a game has {MIN_SEATS} to {MAX_SEATS} seats, not {seat_count} (R2.1)")
    if rat_choice is not None and not 0 <= rat_choice < seat_count:
        raise BadRequest(f"the Rat seat must be 0 to {seat_count - 1}")


def check_seed(seed: str | None, practice: bool) -> None:
    """A chosen seed makes a game predictable to whoever chose it: only a
    game visibly marked ``practice`` may have one (docs/decisions/0040)."""
    if seed is not None and not practice:
        raise BadRequest("a chosen seed needs practice: true (a practice game, shown to all)")
    if seed is not None and not seed:
        raise BadRequest("a seed is not empty")


def check_rated(rated: bool, practice: bool, rates: bool) -> None:
    """A rated game's deal is the server's secret (issue #26): never a
    practice game, whose host chose the seed."""
    if rated and practice:
        raise BadRequest("a rated game is dealt by the server: it cannot be a practice game")
    if rated and not rates:
        raise BadRequest("this server rates no games")


MIN_RATED_PEOPLE = 2
"""People a rated game starts with at least (issue #26): bots alone rate nothing."""


def _in_lobby(game: GameRecord) -> None:
    _not_abandoned(game)
    if game.status is not GameStatus.LOBBY:
        raise IllegalAction("seats change only while the game is in the lobby")


def _not_abandoned(game: GameRecord) -> None:
    if game.status is GameStatus.ABANDONED:
        raise IllegalAction("the game was abandoned: nobody played it any more")


def _free_seat(game: GameRecord, seat: int | None, player_id: str | None = None) -> int:
    """A free seat for ``player_id`` (None: a bot): the one reserved for them
    if any, else the lowest free one nobody else holds a reservation for
    (docs/decisions/0048); a named seat must be free and not kept for another."""
    if seat is None:
        mine = [i for i, o in enumerate(game.seats) if o is None and _kept_for(game, i, player_id)]
        if player_id is not None:
            for i in mine:
                if game.reserved_for(i) == player_id:
                    return i
        if mine:
            return mine[0]
        raise IllegalAction("every seat is taken")
    if not 0 <= seat < game.seat_count:
        raise BadRequest(f"seat {seat} is not a seat of this {game.seat_count}-seat game")
    if game.seats[seat] is not None:
        raise IllegalAction(f"seat {seat} is taken")
    if not _kept_for(game, seat, player_id):
        raise IllegalAction(f"seat {seat} is reserved for its player of the last game")
    return seat


def _kept_for(game: GameRecord, seat: int, player_id: str | None) -> bool:
    """Whether ``player_id`` may sit in ``seat``: it is reserved for no one, or for them."""
    owner = game.reserved_for(seat)
    return owner is None or owner == player_id


def _unreserve(game: GameRecord, player_id: str) -> None:
    """A player who takes a seat gives up their reservation (0048)."""
    game.reserved = [None if r == player_id else r for r in game.reserved]


def join(game: GameRecord, player_id: str, name: str, seat: int | None) -> list[Event]:
    """Take a free seat (the lowest, unless one is named)."""
    _in_lobby(game)
    if game.seat_of(player_id) is not None:
        raise IllegalAction("you already hold a seat in this game")
    s = _free_seat(game, seat, player_id)
    game.seats[s] = Occupant(player_id=player_id)
    _unreserve(game, player_id)
    return [SeatTaken(s, player_id, name)]


def leave(game: GameRecord, player_id: str) -> list[Event]:
    """Give up one's seat while in the lobby."""
    _in_lobby(game)
    s = game.seat_of(player_id)
    if s is None:
        raise IllegalAction("you hold no seat in this game")
    game.seats[s] = None
    if not any(o is not None and o.player_id is not None for o in game.seats):
        game.fill_bots_at = None  # no bot-only quick-play games (0048)
    return [SeatLeft(s, player_id)]


def _host_only(game: GameRecord, player_id: str, what: str) -> None:
    if player_id != game.host:
        raise Forbidden(f"only the host may {what}")


def add_bot(game: GameRecord, player_id: str, strategy: Strategy, seat: int | None) -> list[Event]:
    """The host seats a bot."""
    _host_only(game, player_id, "seat bots")
    _in_lobby(game)
    s = _free_seat(game, seat)
    game.seats[s] = Occupant(bot=strategy)
    return [BotSeated(s, strategy)]


def start(
    game: GameRecord, player_id: str, collections: Sequence[Sequence[Card]] | None
) -> Started:
    """The host starts a full game: R4 setup runs; ``GameStarted`` commits to
    the seed (domain/fairness.py). A refused deck (R3.4) changes nothing."""
    _host_only(game, player_id, "start the game")
    _not_abandoned(game)
    if game.status is not GameStatus.LOBBY:
        raise IllegalAction("the game has started already")
    empty = game.seat_count - game.seats_taken
    if empty:
        raise IllegalAction(f"{empty} seat(s) still empty: join or add bots first")
    people = sum(o is not None and o.player_id is not None for o in game.seats)
    if game.rated and people < MIN_RATED_PEOPLE:
        raise IllegalAction(
            f"a rated game starts with at least {MIN_RATED_PEOPLE} people seated, not {people}"
        )
    setup = new_game(game.seat_count, game.seed, game.options, game.rat_choice, collections)
    game.state, game.status = setup.state, GameStatus.RUNNING
    game.reserved, game.fill_bots_at = [], None  # kept only until the start (0048)
    kept = None if collections is None else tuple(tuple(c) for c in collections)
    events = seal(setup.events, commitment(game.seed, game.salt), game.practice)
    return Started(setup, events, GameStart(kept))
