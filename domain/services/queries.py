"""Use cases that read: a game as the caller may see it, the lobby listing,
the event log. Hidden information leaves only through the engine's views and
each event's projection for the caller (R11)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cached_property

from domain.bots.strategy import Strategy
from domain.errors import BadRequest, GameNotStarted, NotFound
from domain.fairness import commitment
from domain.game.choice import OFFERS, Choice
from domain.game.choices import choices
from domain.game.commands import Command
from domain.game.legal import legal_actions
from domain.game.views import PlayerView, PublicView, player_view, spectator_view
from domain.invitations import check_may_see
from domain.log import LoggedEvent
from domain.ports import UnitOfWork
from domain.records import GameRecord, GameStatus, GameSummary
from domain.services.clocked import takeover_of
from domain.services.committed_reads import committed_game
from domain.services.deps import Deps

MAX_PAGE = 100


@dataclass(frozen=True, slots=True)
class SeatInfo:
    seat: int
    player_id: str | None
    name: str | None
    bot: Strategy | None
    bank_seconds: float | None = None  # a timed running game's bank left
    left: bool = False  # its player left the running game (docs/decisions/0046)
    reserved_for: str | None = None  # a rematch's kept seat (0048)


class GameSnapshot:
    """A game as one caller may see it: public facts, and the caller's own
    seat (hand, decision, messages, legal actions) when seated (R11).

    Made from the caller's own copy of the game, which nothing else changes;
    each view is worked out the first time it is read, so a read asks only
    for what its fields need (a seat's turn query: its choices, not the
    table, nor ~190 legal actions)."""

    def __init__(self, game: GameRecord, player_id: str | None) -> None:
        self._game = game
        self.summary = GameSummary.of(game)
        state = game.state
        self.rat_seat = state.rat if state else game.rat_choice
        self.last_seq = game.last_seq
        self.viewer_seat = game.seat_of(player_id)
        self.seat_players = tuple(o.player_id if o is not None else None for o in game.seats)
        self.seat_bots = tuple(o.bot if o is not None else None for o in game.seats)
        self.reserved = tuple(game.reserved_for(i) for i in range(game.seat_count))
        self.rematch_id = game.rematch_id
        self.seed_commitment = commitment(game.seed, game.salt)  # public; the seed is not
        self.visibility = game.visibility
        # the invite code and invitations: the host's and seated players' (0062)
        insider = player_id is not None and (player_id == game.host or self.viewer_seat is not None)
        self.invite_code = game.invite_code if insider else None
        self.invitations = tuple(game.invitations) if insider else ()
        self.clock = game.clock
        self.deadline = game.deadline
        seat = self.viewer_seat
        running = game.status is GameStatus.RUNNING
        self.takeover = takeover_of(game, seat) if running and seat is not None else None

    @cached_property
    def public(self) -> PublicView | None:
        state = self._game.state
        return spectator_view(state) if state else None

    @cached_property
    def viewer(self) -> PlayerView | None:
        state, seat = self._game.state, self.viewer_seat
        return player_view(state, seat) if state and seat is not None else None

    @cached_property
    def legal_actions(self) -> tuple[Command, ...]:
        state, seat = self._game.state, self.viewer_seat
        if state is None or seat is None or self.takeover is not None:
            return ()
        return tuple(legal_actions(state, seat))

    @cached_property
    def message_targets(self) -> tuple[int, ...]:
        view = self.viewer
        return () if view is None or self.takeover is not None else view.message_targets

    @cached_property
    def choices(self) -> tuple[Choice, ...]:
        """The engine's choices; a seat a bot took over offers only what its
        player may do there (docs/decisions/0050), as its stream does."""
        state, seat = self._game.state, self.viewer_seat
        if state is None or seat is None:
            return ()
        if self.takeover is not None:
            return OFFERS[self.takeover]
        return choices(state, seat)


def load_game(uow: UnitOfWork, game_id: str) -> GameRecord:
    game = uow.games.get(game_id)
    if game is None:
        raise NotFound(f"no game {game_id}")
    return game


def load_seen(uow: UnitOfWork, game_id: str, player_id: str | None) -> GameRecord:
    """The game, if ``player_id`` may see it: a private game is ``NOT_FOUND``
    to anyone not its player or invited, as a game that never was (0062)."""
    game = load_game(uow, game_id)
    check_may_see(game, player_id)
    return game


def check_ended_by_rules(game: GameRecord, what: str) -> None:
    """Refuse ``what`` (its export, its replay) of a game the rules have not
    ended: its hands are secret until then (R11), and an abandoned game's
    were never played out. A lobby game is ``GAME_NOT_STARTED``, a running
    or abandoned one ``BAD_INPUT``."""
    if game.status is GameStatus.LOBBY:
        raise GameNotStarted(f"game {game.id} has not started: {what} opens once it has ended")
    if game.status is GameStatus.RUNNING:
        raise BadRequest(f"game {game.id} has not ended: {what} opens once it has")
    if game.status is GameStatus.ABANDONED:
        raise BadRequest(f"game {game.id} was abandoned: only a game the rules ended has {what}")


async def get_game(
    deps: Deps, game_id: str, player_id: str | None, *, changed_to: int | None = None
) -> GameSnapshot:
    """The game as the caller may see it. ``changed_to``: the version the
    caller's own change made (a mutation's result): while the game is still
    at it, seen even if that change took their sight of a private game away
    (they left its lobby, declined, 0062); once it moved on, as anyone."""

    game = await committed_game(deps, game_id)
    if game is None:
        raise NotFound(f"no game {game_id}")
    if game.version != changed_to:
        check_may_see(game, player_id)
    return GameSnapshot(game, player_id)


async def seats_of(deps: Deps, snap: GameSnapshot) -> tuple[SeatInfo, ...]:
    """Who sits where, with the players' names (read only when asked for)."""

    def tx() -> tuple[SeatInfo, ...]:
        with deps.uow() as uow:
            seats = []
            owners = zip(snap.seat_players, snap.seat_bots, strict=True)
            for i, (player_id, bot) in enumerate(owners):
                p = uow.players.get(player_id) if player_id else None
                clock = snap.clock
                bank = clock.banks[i] if clock is not None and snap.summary.options.timed else None
                left = clock is not None and i in clock.left
                name = p.name if p else None
                pid = p.id if p else None
                seats.append(SeatInfo(i, pid, name, bot, bank, left, snap.reserved[i]))
            return tuple(seats)

    return await deps.run(tx)


async def names_of(deps: Deps, player_ids: list[str]) -> dict[str, str]:
    """Players' names, by id (those that exist)."""

    def tx() -> dict[str, str]:
        with deps.uow() as uow:
            return uow.players.names(player_ids)

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
    """The player's seat in a game they may see (``NOT_FOUND`` else)."""
    return load_seen(uow, game_id, player_id).seat_of(player_id)


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
