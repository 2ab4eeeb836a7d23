"""Abandoned games (issue #22, docs/decisions/0051): when a game nobody will
play any more ends as ``ABANDONED``, and how.

- **A lobby** ends when nothing has changed it for ``idle``; or at once when
  the last person seated in it leaves (and when its host, seated nowhere,
  leaves it with no person seated): nobody waits in it.
- **A running game's room is empty** when a bot plays every seat that is a
  person's (they left it, or timed out into a takeover) and at least one
  seat is a person's. The bots then wait (they would play for nobody:
  domain/services/bot_turn.py), and the game ends ``empty`` after the room
  emptied unless a player reclaims their seat first; at once when nobody
  can come back (every person left: a seat left is not reclaimed).
- **An untimed running game** ends when nothing has changed it for
  ``idle``. A timed one always moves on (its deadlines fire, then its room
  empties).

A game's :attr:`~domain.records.GameRecord.abandon_at` is set on every
change from these rules (a change of the policy applies to a game from its
next change), and the sweep ends the games whose time has come: each in
one versioned transaction, so once whichever instance sweeps it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from domain.fairness import reveal
from domain.game import abandoned
from domain.game.events import Event, GameEnded
from domain.game.state import Termination
from domain.records import GameRecord, GameStatus


@dataclass(frozen=True, slots=True)
class AbandonPolicy:
    """``idle``: how long a lobby or an untimed running game may go without
    any change; ``empty``: how long a running game's empty room waits for
    a player to reclaim a seat."""

    idle: timedelta = timedelta(days=7)
    empty: timedelta = timedelta(hours=1)


def _people(game: GameRecord) -> list[int]:
    """The seats that are a person's (a bot may play them)."""
    return [i for i, o in enumerate(game.seats) if o is not None and o.player_id is not None]


def room_empty(game: GameRecord) -> bool:
    """A running game in which a bot plays every person's seat (and some
    seat is a person's: a game of bots alone plays on)."""
    if game.status is not GameStatus.RUNNING:
        return False
    people = [o for o in game.seats if o is not None and o.player_id is not None]
    return bool(people) and all(o.is_bot for o in people)


def nobody_back(game: GameRecord) -> bool:
    """An empty room whose every person left the game: none can reclaim."""
    left = () if game.clock is None else game.clock.left
    return room_empty(game) and all(i in left for i in _people(game))


def deserted(game: GameRecord) -> bool:
    """Nobody will come back to it: a lobby no person sits in, or a running
    game every person left."""
    if game.status is GameStatus.LOBBY:
        return not _people(game)
    return nobody_back(game)


def abandon_at(game: GameRecord, policy: AbandonPolicy) -> datetime | None:
    """When the game, as it is now, ends as abandoned unless it changes
    first (None: it does not)."""
    if game.status is GameStatus.LOBBY:
        return game.updated_at + policy.idle
    if game.status is not GameStatus.RUNNING:
        return None
    if nobody_back(game):
        return game.updated_at
    if room_empty(game):
        return game.updated_at + policy.empty
    if not game.options.timed:
        return game.updated_at + policy.idle
    return None


def due(game: GameRecord, now: datetime) -> bool:
    """Whether the game's time to be abandoned has come (by its stored
    :attr:`~domain.records.GameRecord.abandon_at`, as the sweep found it)."""
    at = game.abandon_at
    return not game.status.over and at is not None and at <= now


def abandon(game: GameRecord) -> list[Event]:
    """End the game as abandoned (in place): ``GameEnded`` with termination
    ``ABANDONED``, no winner. A started game's trick under way is undone
    (domain/game/abandoned.py) and, as at every end, its seed and salt are
    revealed; its status follows its outcome when the change is recorded
    (the clock settles first: no wait is left). A lobby ends as it is."""
    if game.status is GameStatus.RUNNING and game.state is not None:
        return reveal([abandoned.abandon(game.state)], game.seed, game.salt)
    game.status = GameStatus.ABANDONED
    game.fill_bots_at, game.reserved = None, []
    return [GameEnded(Termination.ABANDONED, (), (), ())]


def is_abandonment(event: Event) -> bool:
    """The event that ends an abandoned game."""
    return isinstance(event, GameEnded) and event.termination is Termination.ABANDONED
