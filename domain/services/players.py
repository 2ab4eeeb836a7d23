"""Use cases: guest accounts and who is calling."""

from __future__ import annotations

from dataclasses import dataclass

from domain.errors import BadRequest, NotFound
from domain.records import BoosterRecord, Player
from domain.services.auth import player_for_token, token_hash
from domain.services.deps import Deps

MAX_NAME = 40


@dataclass(frozen=True, slots=True)
class NewPlayer:
    """A new guest account and its token (shown once, never stored)."""

    player: Player
    token: str


def check_name(name: str) -> str:
    name = name.strip()
    if not 1 <= len(name) <= MAX_NAME or not name.isprintable():
        raise BadRequest(f"a name has 1 to {MAX_NAME} printable characters")
    return name


async def create_player(deps: Deps, name: str) -> NewPlayer:
    """A guest account with a random 256-bit token; only its hash is stored."""
    clean = check_name(name)
    token = deps.ids.new_token()
    player = Player(deps.ids.new_id(), clean, deps.clock.now())

    def tx() -> None:
        with deps.uow() as uow:
            uow.players.add(player, token_hash(token))
            uow.commit()

    await deps.run(tx)
    return NewPlayer(player, token)


async def authenticate(deps: Deps, token: str) -> Player:
    """The token's player, or ``UNAUTHENTICATED``."""

    def tx() -> Player:
        with deps.uow() as uow:
            return player_for_token(uow, token)

    return await deps.run(tx)


@dataclass(frozen=True, slots=True)
class Me:
    player: Player
    collection: list[BoosterRecord]


async def me(deps: Deps, player_id: str) -> Me:
    """The caller and their booster collection."""

    def tx() -> Me:
        with deps.uow() as uow:
            player = uow.players.get(player_id)
            if player is None:
                raise NotFound("no such player")
            return Me(player, uow.boosters.of_player(player_id))

    return await deps.run(tx)
