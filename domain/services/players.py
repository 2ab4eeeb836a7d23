"""Use cases: guest accounts and who is calling."""

from __future__ import annotations

import base64
import hashlib
import uuid
from dataclasses import dataclass

from domain.errors import BadRequest, NotFound
from domain.records import BoosterRecord, Player, Remembered, SealedToken
from domain.services.auth import player_for_token, token_hash
from domain.services.deps import Deps
from domain.services.transaction import Request, Steps, Tx, no_load, transact

MAX_NAME = 40
MIN_PLAYER_KEY = 16  # [decision] the key recovers the token: it must be hard to guess
_KEYED_PLAYERS = uuid.UUID("7d3f5e0c-2b7a-4c1e-9a55-0d6c1f4b8e21")


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


def _keyed_id(key: str) -> str:
    """With an idempotency key the new player's id follows from the key, so a
    retry finds the first attempt."""
    return str(uuid.uuid5(_KEYED_PLAYERS, key))


def _xor_pad(data: bytes, key: str, player_id: str) -> bytes:
    pad = hashlib.shake_256(f"mmk-token-seal|{key}|{player_id}".encode()).digest(len(data))
    return bytes(a ^ b for a, b in zip(data, pad, strict=True))


def _seal(token: str, key: str, player_id: str) -> str:
    """[decision] A retried ``createPlayer`` must return the same token, yet the
    token is never stored: the idempotency record keeps it XORed with a pad
    derived from the client's key, so only a caller holding the key recovers it."""
    return base64.b64encode(_xor_pad(token.encode(), key, player_id)).decode()


def _unseal(sealed: str, key: str, player_id: str) -> str:
    return _xor_pad(base64.b64decode(sealed), key, player_id).decode()


async def create_player(deps: Deps, name: str, idempotency_key: str | None = None) -> NewPlayer:
    """A guest account with a random 256-bit token; only its hash is stored."""
    clean = check_name(name)
    if idempotency_key is not None and len(idempotency_key) < MIN_PLAYER_KEY:
        raise BadRequest(
            f"createPlayer's idempotency key recovers the token, so it must be "
            f"at least {MIN_PLAYER_KEY} characters (a UUID, say)"
        )
    token = deps.ids.new_token()
    player_id = deps.ids.new_id() if idempotency_key is None else _keyed_id(idempotency_key)
    player = Player(player_id, clean, deps.clock.now())
    req = Request(player_id, "createPlayer", {"name": clean}, idempotency_key)

    def add(tx: Tx, _: None) -> NewPlayer:
        tx.add_player(player, token_hash(token))
        return NewPlayer(player, token)

    def sealed(new: NewPlayer) -> Remembered:
        assert idempotency_key is not None  # kept only under a key
        return SealedToken(_seal(new.token, idempotency_key, player_id))

    def repeated(tx: Tx, first: Remembered) -> NewPlayer:
        assert isinstance(first, SealedToken) and idempotency_key is not None
        return NewPlayer(tx.player(player_id), _unseal(first.sealed, idempotency_key, player_id))

    # a racing twin with the same key: its player and token, replayed
    return await transact(deps, req, Steps(no_load, add, sealed, repeated))


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
