"""Guest accounts: a random token returned once, only its hash stored."""

from __future__ import annotations

import pytest

from domain.errors import DomainError, ErrorCode
from domain.records import SealedToken
from domain.services.auth import bearer_token, token_hash
from domain.services.players import authenticate, collection, create_player
from tests.fakes import Harness


async def test_create_player_returns_token_once_and_stores_only_its_hash(h: Harness) -> None:
    new = await create_player(h.deps, "  Ann  ")
    assert new.player.name == "Ann"
    (stored_hash,) = h.store.hashes_of(new.player.id)
    assert stored_hash == token_hash(new.token) != new.token
    assert new.token not in repr(h.store)
    assert (await authenticate(h.deps, new.token)).id == new.player.id


@pytest.mark.parametrize("name", ["", "   ", "x" * 41, "bad\nname"])
async def test_bad_names_are_refused_and_nothing_is_stored(h: Harness, name: str) -> None:
    with pytest.raises(DomainError) as e:
        await create_player(h.deps, name)
    assert e.value.code is ErrorCode.BAD_INPUT
    assert not h.store.players


async def test_unknown_token_is_unauthenticated(h: Harness) -> None:
    await create_player(h.deps, "ann")
    with pytest.raises(DomainError) as e:
        await authenticate(h.deps, "not-a-token")
    assert e.value.code is ErrorCode.UNAUTHENTICATED


@pytest.mark.parametrize(
    ("header", "token"), [(None, None), ("Bearer abc", "abc"), ("bearer  abc ", "abc")]
)
def test_bearer_header_parsing(header: str | None, token: str | None) -> None:
    assert bearer_token(header) == token


@pytest.mark.parametrize("header", ["Basic abc", "Bearer ", "abc"])
def test_malformed_bearer_header_is_unauthenticated(header: str) -> None:
    with pytest.raises(DomainError) as e:
        bearer_token(header)
    assert e.value.code is ErrorCode.UNAUTHENTICATED


async def test_me_lists_the_collection(h: Harness) -> None:
    from domain.services.boosters import open_booster_pack
    from domain.services.transaction import Request

    new = await create_player(h.deps, "ann")
    pack = await open_booster_pack(h.deps, Request(new.player.id, "openBoosterPack", {}))
    mine = await collection(h.deps, new.player.id, None, 10)
    assert [r.id for r in mine.items] == [pack.id] and mine.total == 1 and not mine.has_next
    assert len(pack.pack.commons) == 15 and len(pack.pack.rares) == 2


async def test_create_player_with_a_key_replays_the_same_player_and_token(h: Harness) -> None:
    first = await create_player(h.deps, "ann", idempotency_key="k-123-0123456789abcdef")
    again = await create_player(h.deps, "ann", idempotency_key="k-123-0123456789abcdef")
    assert again == first
    assert len(h.store.players) == 1
    [kept] = h.store.keys.values()
    assert isinstance(kept.result, SealedToken)
    assert first.token not in kept.result.sealed and first.token not in repr(h.store)
    other = await create_player(h.deps, "ann", idempotency_key="k-456-0123456789abcdef")
    assert other.player.id != first.player.id and other.token != first.token


async def test_create_player_key_reused_with_another_name_is_refused(h: Harness) -> None:
    await create_player(h.deps, "ann", idempotency_key="k-1-0123456789abcdef")
    with pytest.raises(DomainError) as e:
        await create_player(h.deps, "bob", idempotency_key="k-1-0123456789abcdef")
    assert e.value.code is ErrorCode.IDEMPOTENCY_KEY_REUSED
    assert len(h.store.players) == 1


async def test_create_player_refuses_a_short_key(h: Harness) -> None:
    with pytest.raises(DomainError) as e:
        await create_player(h.deps, "ann", idempotency_key="short")
    assert e.value.code is ErrorCode.BAD_INPUT
    assert not h.store.players
