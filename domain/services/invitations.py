"""Use cases: private games and invitations (issue #24, docs/decisions/0062):
joining with an invite code, the host's invitations and invite code, the
invited player's answer and list (the rules: domain/invitations.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from domain import invitations as rules
from domain.errors import NotFound
from domain.records import GameRecord, GameSummary, Invitation, MutationResult
from domain.services.caps import room_for_invitations
from domain.services.deps import Deps
from domain.services.games import joining
from domain.services.queries import check_limit
from domain.services.transaction import Change, Request, Tx, change_game


async def join_by_invite_code(
    deps: Deps, req: Request, code: str, seat: int | None
) -> MutationResult:
    """Take a seat in the game whose invite code is ``code`` (any case,
    spaces and dashes ignored): ``NOT_FOUND`` for a code no game has (never
    had, rotated or cleared since)."""
    normal = rules.normal_code(code)

    def find(tx: Tx) -> str:
        game_id = tx.uow.games.by_invite_code(normal)
        if game_id is None:
            raise NotFound(rules.NO_SUCH_CODE)
        return game_id

    return await change_game(deps, req, find, joining(deps, req, seat, normal), unseen=True)


async def accept_invitation(
    deps: Deps, req: Request, game_id: str, seat: int | None
) -> MutationResult:
    """Take a seat in a game one is invited to (``NOT_FOUND`` without an
    invitation): ``joinGame``, for an invitation only."""
    join = joining(deps, req, seat, None)

    def accept(tx: Tx, game: GameRecord) -> Change:
        if rules.invited(game, req.player_id) is None:
            raise NotFound("you have no invitation to this game")
        return join(tx, game)

    return await change_game(deps, req, game_id, accept)


async def invite_players(
    deps: Deps, req: Request, game_id: str, player_ids: list[str]
) -> MutationResult:
    """The host invites players to a game not yet started; at most
    ``deps.caps.pending_invitations`` out at once (0062)."""

    rules.check_invitees(player_ids)

    def invite(tx: Tx, game: GameRecord) -> Change:
        known = tx.uow.players.names(player_ids)
        before = len(game.invitations)
        events = rules.invite(game, req.player_id, player_ids, known, tx.now())
        room_for_invitations(tx, deps.caps, req.player_id, len(game.invitations) - before)
        return Change(events)

    return await change_game(deps, req, game_id, invite)


async def decline_invitation(deps: Deps, req: Request, game_id: str) -> MutationResult:
    """The invited player declines (a private game is then out of their sight)."""
    return await change_game(
        deps, req, game_id, lambda _, g: Change(rules.decline(g, req.player_id))
    )


async def cancel_invitation(
    deps: Deps, req: Request, game_id: str, player_id: str
) -> MutationResult:
    """The host withdraws an invitation not yet answered."""

    def cancel(_: Tx, game: GameRecord) -> Change:
        return Change(rules.cancel(game, req.player_id, player_id))

    return await change_game(deps, req, game_id, cancel)


async def rotate_invite_code(deps: Deps, req: Request, game_id: str) -> MutationResult:
    """The host replaces the invite code (the old one joins no more)."""

    def rotate(_: Tx, game: GameRecord) -> Change:
        return Change(rules.set_code(game, req.player_id, deps.ids.new_invite_code()))

    return await change_game(deps, req, game_id, rotate)


async def clear_invite_code(deps: Deps, req: Request, game_id: str) -> MutationResult:
    """The host ends the invite code: invitations alone join from now on."""

    def clear(_: Tx, game: GameRecord) -> Change:
        return Change(rules.set_code(game, req.player_id, None))

    return await change_game(deps, req, game_id, clear)


@dataclass(frozen=True, slots=True)
class InvitationsPage:
    """A page of a player's pending invitations, newest first."""

    items: list[tuple[Invitation, GameSummary]]
    has_next: bool


async def my_invitations(
    deps: Deps, player_id: str, before: tuple[datetime, str] | None, limit: int
) -> InvitationsPage:
    """The player's invitations to games not yet started, newest first."""
    check_limit(limit)

    def tx() -> InvitationsPage:
        with deps.uow() as uow:
            rows = uow.games.invitations_of(player_id, before, limit + 1)
        return InvitationsPage(rows[:limit], len(rows) > limit)

    return await deps.run(tx)
