"""Use cases that read: a game as the caller may see it, the lobby listing,
the event log. Hidden information leaves only through the engine's views and
each event's projection for the caller (R11)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from domain.bots.strategy import Strategy
from domain.errors import BadRequest, NotFound
from domain.game.choice import Choice
from domain.game.choices import choices
from domain.game.commands import Command
from domain.game.legal import legal_actions
from domain.game.views import PlayerView, PublicView, player_view, spectator_view
from domain.log import LoggedEvent
from domain.ports import UnitOfWork
from domain.records import GameRecord, GameStatus, GameSummary
from domain.services.deps import Deps

MAX_PAGE = 100


@dataclass(frozen=True, slots=True)
class SeatInfo:
    seat: int
    player_id: str | None
    name: str | None
    bot: Strategy | None


@dataclass(frozen=True, slots=True)
class GameSnapshot:
    """A game as one caller may see it: public facts, and the caller's own
    seat (hand, decision, messages, legal actions) when seated."""

    summary: GameSummary
    seats: tuple[SeatInfo, ...]
    rat_seat: int | None
    last_seq: int
    public: PublicView | None
    viewer_seat: int | None
    viewer: PlayerView | None
    legal_actions: tuple[Command, ...]
    choices: tuple[Choice, ...]


def load_game(uow: UnitOfWork, game_id: str) -> GameRecord:
    game = uow.games.get(game_id)
    if game is None:
        raise NotFound(f"no game {game_id}")
    return game


def snapshot(uow: UnitOfWork, game: GameRecord, player_id: str | None) -> GameSnapshot:
    seats = []
    for i, o in enumerate(game.seats):
        p = uow.players.get(o.player_id) if o is not None and o.player_id else None
        seats.append(
            SeatInfo(
                i, p.id if p else None, p.name if p else None, o.bot if o is not None else None
            )
        )
    seat = game.seat_of(player_id)
    state = game.state
    return GameSnapshot(
        summary=GameSummary.of(game),
        seats=tuple(seats),
        rat_seat=state.rat if state else game.rat_choice,
        last_seq=game.last_seq,
        public=spectator_view(state) if state else None,
        viewer_seat=seat,
        viewer=player_view(state, seat) if state and seat is not None else None,
        legal_actions=tuple(legal_actions(state, seat)) if state and seat is not None else (),
        choices=choices(state, seat) if state and seat is not None else (),
    )


async def get_game(deps: Deps, game_id: str, player_id: str | None) -> GameSnapshot:
    def tx() -> GameSnapshot:
        with deps.uow() as uow:
            return snapshot(uow, load_game(uow, game_id), player_id)

    return await deps.run(tx)


def check_limit(limit: int) -> None:
    if not 1 <= limit <= MAX_PAGE:
        raise BadRequest(f"a page holds 1 to {MAX_PAGE} items")


async def list_games(
    deps: Deps, status: GameStatus | None, before: tuple[datetime, str] | None, limit: int
) -> tuple[list[GameSummary], bool]:
    """The lobby listing, newest first, after an opaque cursor."""
    check_limit(limit)

    def tx() -> tuple[list[GameSummary], bool]:
        with deps.uow() as uow:
            page = uow.games.page(status, before, limit)
            return page.items, page.has_next

    return await deps.run(tx)


def seat_in(uow: UnitOfWork, game_id: str, player_id: str | None) -> int | None:
    return load_game(uow, game_id).seat_of(player_id)


async def read_events(
    deps: Deps, game_id: str, player_id: str | None, after_seq: int, limit: int
) -> tuple[list[LoggedEvent], bool]:
    """The log as the caller may see it: their seat's projection, or the public."""
    check_limit(limit)
    if after_seq < 0:
        raise BadRequest("afterSeq is 0 or more")

    def tx() -> tuple[list[LoggedEvent], bool]:
        with deps.uow() as uow:
            seat = seat_in(uow, game_id, player_id)
            rows = uow.events.read(game_id, after_seq, limit + 1, seat)
            return rows[:limit], len(rows) > limit

    return await deps.run(tx)
