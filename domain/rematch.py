"""Rematch rules (issue #15 part 6, docs/decisions/0048): who may ask for
one, and the new lobby game it makes: the same options, the caller in their
old seat, bots back in theirs, every other player's old seat kept for them
until they take it or the game starts."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated

from domain.errors import Forbidden
from domain.game.errors import IllegalAction
from domain.game.events import Event
from domain.lobby import BotSeated, GameCreated, SeatTaken
from domain.records import GameRecord, GameStatus, Occupant, Visibility


@dataclass(frozen=True, slots=True)
class RematchOffered(Event):
    """A finished game's rematch: the new lobby game, where each of this
    game's players has their old seat kept for them (logged after
    ``GameEnded``; public)."""

    new_game_id: Annotated[
        str,
        "The new game (`gameId` is this, finished one): join it (`joinGame`) to take "
        "your kept seat",
    ]


AFTER_GAME_EVENTS: tuple[type[Event], ...] = (RematchOffered,)
"""Events a finished game may log after its ``GameEnded``."""


def check_may_ask(old: GameRecord, player_id: str) -> int:
    """Only a player of a finished game may ask for its rematch; their seat."""
    seat = old.seat_of(player_id)
    if seat is None:
        raise Forbidden("only a player of the game may ask for its rematch")
    if old.status is not GameStatus.FINISHED:
        raise IllegalAction("a rematch follows a finished game")
    return seat


@dataclass(frozen=True, slots=True)
class Ids:
    """What the new game needs from the server: its id, seed and salt."""

    id: str
    seed: str
    salt: str
    invite_code: str


def new_game(
    old: GameRecord, player_id: str, name: str, ids: Ids, now: datetime
) -> tuple[GameRecord, list[Event]]:
    """The rematch of ``old`` asked for by ``player_id`` (its host): a fresh
    seed (never the old one, which ``GameEnded`` revealed), the same seats,
    options, chosen Rat seat and visibility (a fresh invite code: 0062);
    not a practice or quick-play game."""
    seat = check_may_ask(old, player_id)
    game = GameRecord(
        id=ids.id,
        host=player_id,
        seat_count=old.seat_count,
        options=old.options,
        seed=ids.seed,
        rat_choice=old.rat_choice,
        seats=[None] * old.seat_count,
        created_at=now,
        updated_at=now,
        salt=ids.salt,
        reserved=[None] * old.seat_count,
        visibility=old.visibility,
        rated=old.rated,
        invite_code=None if old.visibility is Visibility.PUBLIC else ids.invite_code,
    )
    events: list[Event] = [GameCreated.of(game)]
    for i, o in enumerate(old.seats):
        if o is None:
            continue
        if o.player_id is None:  # a bot's seat (a seat a bot took over is its player's)
            assert o.bot is not None
            game.seats[i] = Occupant(bot=o.bot)
            events.append(BotSeated(i, o.bot))
        elif i == seat:
            game.seats[i] = Occupant(player_id=player_id)
            events.append(SeatTaken(i, player_id, name))
        else:
            game.reserved[i] = o.player_id
    return game, events
