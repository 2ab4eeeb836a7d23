"""Use cases: creating a game and the lobby (join, leave, bots, start)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from domain import lobby
from domain.abandonment import abandon, deserted
from domain.bots.strategy import Strategy
from domain.clocks import check_time_control
from domain.game.events import Event
from domain.game.options import GameOptions
from domain.invitations import check_may_join, take_invitation
from domain.records import GameRecord, GameStatus, MutationResult, Visibility
from domain.services.caps import room_for_a_lobby, room_for_a_wait
from domain.services.deps import Deps
from domain.services.starting import starting, starting_if_full
from domain.services.takeover import leave_running
from domain.services.transaction import Change, Request, Tx, add_game, change_game


@dataclass(frozen=True, slots=True)
class NewGame:
    """What a host chooses (API ``createGame``). A chosen ``seed`` needs
    ``practice`` (docs/decisions/0040)."""

    seat_count: int
    options: GameOptions = field(default_factory=GameOptions)
    seed: str | None = None
    rat_seat: int | None = None
    take_seat: bool = True
    practice: bool = False
    visibility: Visibility = Visibility.PUBLIC
    rated: bool = False


async def create_game(deps: Deps, req: Request, spec: NewGame) -> MutationResult:
    """A lobby (R2.1); the host takes seat 0 unless ``take_seat`` is false.
    The seed and salt come from the server's CSPRNG; only a game marked
    ``practice`` may have the host's seed (docs/decisions/0040). A host
    has at most ``deps.caps.open_games`` lobby games at once (0051). An
    unlisted or private game gets an invite code (0062)."""
    lobby.check_new_game(spec.seat_count, spec.rat_seat)
    check_time_control(spec.options)
    lobby.check_seed(spec.seed, spec.practice)
    lobby.check_rated(spec.rated, spec.practice, deps.rating_model is not None)

    def make(tx: Tx) -> tuple[GameRecord, Change]:
        host = tx.player(req.player_id)
        room_for_a_lobby(tx, deps.caps, host.id)
        now = tx.now()
        game = GameRecord(
            id=tx.new_id(),
            host=host.id,
            seat_count=spec.seat_count,
            options=spec.options,
            seed=deps.ids.new_seed() if spec.seed is None else spec.seed,
            rat_choice=spec.rat_seat,
            seats=[None] * spec.seat_count,
            created_at=now,
            updated_at=now,
            salt=deps.ids.new_salt(),
            practice=spec.practice,
            visibility=spec.visibility,
            rated=spec.rated,
        )
        if spec.visibility is not Visibility.PUBLIC:
            game.invite_code = deps.ids.new_invite_code()
        events: list[Event] = [lobby.GameCreated.of(game)]
        if spec.take_seat:
            events += lobby.join(game, host.id, host.name, 0)
        return game, Change(events)

    return await add_game(deps, req, make)


async def join_game(deps: Deps, req: Request, game_id: str, seat: int | None) -> MutationResult:
    """Take a free seat (the lowest, unless one is named); a seat in a
    quick-play game is one of the player's quick-play waits (0051). An
    unlisted or private game's seat is taken by invitation (0062)."""
    return await change_game(deps, req, game_id, joining(deps, req, seat, None))


def joining(
    deps: Deps, req: Request, seat: int | None, code: str | None
) -> Callable[[Tx, GameRecord], Change]:
    """The decision of a join: by invitation (or with the game's invite
    ``code``) where the game's visibility asks for it; the player's
    invitation ends as they sit."""

    def join(tx: Tx, game: GameRecord) -> Change:
        player = tx.player(req.player_id)
        check_may_join(game, player.id, code)
        joined = lobby.join(game, player.id, player.name, seat)
        take_invitation(game, player.id)
        if game.quick_play is not None:
            room_for_a_wait(tx, deps.caps, player.id)
        return starting_if_full(tx, game, joined)

    return join


async def leave_game(deps: Deps, req: Request, game_id: str) -> MutationResult:
    """Give up one's seat while in the lobby; while running, hand it to a bot
    for good (docs/decisions/0046). The last person out of a game ends it
    as abandoned (a lobby no person sits in; a running game every person
    left); the host, seated nowhere, closes a lobby no person sits in so
    too (docs/decisions/0051)."""

    def leave(tx: Tx, game: GameRecord) -> Change:
        player_id = req.player_id
        if game.status is GameStatus.RUNNING:
            events = leave_running(game, player_id, deps.takeover_bot)
        elif player_id == game.host and game.seat_of(player_id) is None and deserted(game):
            events = []  # the host closes an empty lobby
        else:
            events = lobby.leave(game, player_id)
        if deserted(game):
            events += abandon(game)
        return Change(events)

    return await change_game(deps, req, game_id, leave)


async def add_bot(
    deps: Deps, req: Request, game_id: str, strategy: Strategy, seat: int | None
) -> MutationResult:
    """The host seats a bot."""

    def seat_bot(tx: Tx, game: GameRecord) -> Change:
        return starting_if_full(tx, game, lobby.add_bot(game, req.player_id, strategy, seat))

    return await change_game(deps, req, game_id, seat_bot)


async def start_game(deps: Deps, req: Request, game_id: str) -> MutationResult:
    """The host starts a full game (R4); in Sealed, each seated person's pack
    joins their collection (R3.2)."""

    def start(tx: Tx, game: GameRecord) -> Change:
        return starting(tx, game, [], by=req.player_id)

    return await change_game(deps, req, game_id, start)
