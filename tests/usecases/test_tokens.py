"""Tokens that cannot be derived (docs/decisions/0041): random player ids,
createPlayer's replay only within its window and only with the server's
secret, idempotency records that expire and are swept, token rotation and
revocation."""

from __future__ import annotations

import hashlib
import uuid
from datetime import timedelta

import pytest

from domain.errors import ErrorCode
from domain.records import SealedToken
from domain.services.auth import token_hash
from domain.services.boosters import open_booster_pack
from domain.services.deps import KeyPolicy
from domain.services.idempotency import expire_idempotency_records
from domain.services.players import (
    RECHECK_BATCH,
    authenticate,
    create_player,
    dead_tokens,
    revoke_token,
    rotate_token,
)
from domain.services.sealing import key_digest, seal, unseal
from domain.services.transaction import Request
from infra.ids import RandomIds
from tests.fakes import TEST_SECRET, Harness, harness
from tests.usecases.refused import code_of

KEY = "device-000000042-guessable"
DAY = timedelta(hours=24)


def _snapshot(h: Harness) -> object:
    s = h.store
    return (dict(s.players), dict(s.key_digests), dict(s.keys), list(s.boosters))


# ------------------------------------------------------------- random ids
async def test_the_player_id_is_random_not_a_function_of_the_key() -> None:
    """Two servers (the same secret even), the same key: two different ids,
    neither the former UUIDv5 of the key."""
    ids = [
        (await create_player(harness(ids=RandomIds()).deps, "ann", KEY)).player.id for _ in range(2)
    ]
    assert ids[0] != ids[1]
    former = uuid.UUID("7d3f5e0c-2b7a-4c1e-9a55-0d6c1f4b8e21")
    assert str(uuid.uuid5(former, KEY)) not in ids
    assert all(uuid.UUID(i).version == 4 for i in ids)


async def test_the_stored_records_hold_neither_the_key_nor_the_token(h: Harness) -> None:
    new = await create_player(h.deps, "ann", KEY)
    stored = repr(h.store)
    assert KEY not in stored and new.token not in stored
    assert hashlib.sha256(KEY.encode()).hexdigest() not in stored
    [(player_id, digest)] = [(p, d) for d, p in h.store.key_digests.items()]
    assert player_id == new.player.id
    assert digest == key_digest(TEST_SECRET, KEY)
    # without the secret, a guessed key matches nothing stored
    assert key_digest(b"another-secret-of-the-same-length", KEY) not in stored
    [record] = h.store.keys.values()
    assert record.key == digest and isinstance(record.result, SealedToken)
    assert (
        unseal(b"another-secret-of-the-same-length", KEY, player_id, record.result.sealed) is None
    )
    assert unseal(TEST_SECRET, KEY + "x", player_id, record.result.sealed) is None
    assert unseal(TEST_SECRET, KEY, player_id, record.result.sealed) == new.token


async def test_another_secret_does_not_find_the_first_player() -> None:
    """A server with another secret cannot tell that a key was used."""
    h = harness()
    await create_player(h.deps, "ann", KEY)
    other = harness(keys=KeyPolicy(b"another-secret-of-the-same-length"), ids=RandomIds())
    other.store.players, other.store.key_digests = h.store.players, h.store.key_digests
    other.store.sessions = h.store.sessions
    other.store.keys = h.store.keys
    again = await create_player(other.deps, "ann", KEY)
    assert len(h.store.players) == 2 and again.token not in repr(h.store.keys)


def test_a_tampered_seal_is_refused() -> None:
    sealed = seal(TEST_SECRET, KEY, "p1", "token-1")
    assert unseal(TEST_SECRET, KEY, "p1", sealed) == "token-1"
    assert unseal(TEST_SECRET, KEY, "p2", sealed) is None
    flipped = ("A" if sealed[0] != "A" else "B") + sealed[1:]
    assert unseal(TEST_SECRET, KEY, "p1", flipped) is None
    assert unseal(TEST_SECRET, KEY, "p1", "!!not base64!!") is None
    assert unseal(TEST_SECRET, KEY, "p1", "") is None


# ------------------------------------------------------------ replay window
async def test_a_repeat_within_the_window_returns_the_same_player_and_token(
    h: Harness,
) -> None:
    first = await create_player(h.deps, "ann", KEY)
    h.clock.advance(DAY - timedelta(minutes=1))
    again = await create_player(h.deps, "ann", KEY)
    assert again == first
    assert (await authenticate(h.deps, again.token)).id == first.player.id


@pytest.mark.parametrize("swept", [False, True])
async def test_a_repeat_after_the_window_is_refused_and_creates_nobody(
    h: Harness, swept: bool
) -> None:
    """Even once the record is swept, the player stays found by its key's
    digest: never a second player made silently."""
    await create_player(h.deps, "ann", KEY)
    h.clock.advance(DAY)
    if swept:
        assert await expire_idempotency_records(h.deps) == 1
        assert h.store.keys == {}
    before = _snapshot(h)
    assert await code_of(create_player(h.deps, "ann", KEY)) is ErrorCode.BAD_INPUT
    assert await code_of(create_player(h.deps, "bob", KEY)) is ErrorCode.BAD_INPUT
    assert _snapshot(h) == before


async def test_the_window_is_the_policys() -> None:
    h = harness(keys=KeyPolicy(TEST_SECRET, replay_window=timedelta(minutes=5)))
    await create_player(h.deps, "ann", KEY)
    h.clock.advance(timedelta(minutes=5))
    assert await code_of(create_player(h.deps, "ann", KEY)) is ErrorCode.BAD_INPUT


async def test_a_short_key_is_still_refused(h: Harness) -> None:
    assert await code_of(create_player(h.deps, "ann", "short")) is ErrorCode.BAD_INPUT
    assert h.store.players == {}


# ------------------------------------------------------------ expiry, sweep
async def test_a_game_mutation_repeated_after_the_retention_is_a_new_request(
    h: Harness,
) -> None:
    ann = (await create_player(h.deps, "ann")).player.id
    first = await open_booster_pack(h.deps, Request(ann, "openBoosterPack", {}, "pack-1"))
    h.clock.advance(timedelta(days=7) - timedelta(minutes=1))
    again = await open_booster_pack(h.deps, Request(ann, "openBoosterPack", {}, "pack-1"))
    assert again == first
    h.clock.advance(timedelta(minutes=1))
    later = await open_booster_pack(h.deps, Request(ann, "openBoosterPack", {}, "pack-1"))
    assert later.id != first.id and len(h.store.boosters) == 2
    # the key now replays the new result
    assert await open_booster_pack(h.deps, Request(ann, "openBoosterPack", {}, "pack-1")) == later


async def test_the_sweep_deletes_expired_records_only(h: Harness) -> None:
    await create_player(h.deps, "ann", KEY)  # expires in 24 h
    bob = (await create_player(h.deps, "bob")).player.id
    await open_booster_pack(h.deps, Request(bob, "openBoosterPack", {}, "old"))  # in 7 days
    assert await expire_idempotency_records(h.deps) == 0
    h.clock.advance(DAY)
    await open_booster_pack(h.deps, Request(bob, "openBoosterPack", {}, "new"))
    assert await expire_idempotency_records(h.deps) == 1  # createPlayer's
    assert {k for _, k in h.store.keys} == {"old", "new"}
    h.clock.advance(timedelta(days=6))
    assert await expire_idempotency_records(h.deps) == 1
    assert {k for _, k in h.store.keys} == {"new"}
    assert len(h.store.players) == 2 and len(h.store.boosters) == 2


async def test_the_sweep_deletes_in_batches_until_none_is_left(h: Harness) -> None:
    bob = (await create_player(h.deps, "bob")).player.id
    for i in range(7):
        await open_booster_pack(h.deps, Request(bob, "openBoosterPack", {}, f"k{i}"))
    h.clock.advance(timedelta(days=8))
    assert await expire_idempotency_records(h.deps, batch=3) == 7  # 3 + 3 + 1
    assert not h.store.keys


# ------------------------------------------------------- rotation, revocation
async def test_rotate_gives_a_new_token_and_the_old_one_stops_at_once(h: Harness) -> None:
    new = await create_player(h.deps, "ann")
    rotated = await rotate_token(h.deps, new.player.id, new.token)
    assert rotated != new.token
    assert (await authenticate(h.deps, rotated)).id == new.player.id
    assert await code_of(authenticate(h.deps, new.token)) is ErrorCode.UNAUTHENTICATED
    # a second rotation with the old token (a race, a replay) is refused
    before = _snapshot(h)
    code = await code_of(rotate_token(h.deps, new.player.id, new.token))
    assert code is ErrorCode.UNAUTHENTICATED and _snapshot(h) == before


async def test_revoke_signs_out(h: Harness) -> None:
    ann, bob = await create_player(h.deps, "ann"), await create_player(h.deps, "bob")
    await revoke_token(h.deps, ann.player.id, ann.token)
    assert await code_of(authenticate(h.deps, ann.token)) is ErrorCode.UNAUTHENTICATED
    assert (await authenticate(h.deps, bob.token)).id == bob.player.id
    code = await code_of(revoke_token(h.deps, ann.player.id, ann.token))
    assert code is ErrorCode.UNAUTHENTICATED


async def test_a_token_replayed_by_create_player_after_rotation_no_longer_works(
    h: Harness,
) -> None:
    """The replay returns the token sealed then: rotated since, it is dead."""
    first = await create_player(h.deps, "ann", KEY)
    rotated = await rotate_token(h.deps, first.player.id, first.token)
    again = await create_player(h.deps, "ann", KEY)
    assert again.token == first.token != rotated
    assert await code_of(authenticate(h.deps, again.token)) is ErrorCode.UNAUTHENTICATED


# ------------------------------------------------------- notices (0053)
class Heard:
    """A revocation listener: what it heard, and whether the change was
    committed when it heard it (the token no longer authenticates)."""

    def __init__(self, h: Harness) -> None:
        self.h = h
        self.digests: list[str] = []
        self.committed: list[bool] = []
        self.misses = 0

    def revoked(self, digest: str) -> None:
        self.digests.append(digest)
        held = {stored for _, stored in self.h.store.sessions.values()}
        self.committed.append(digest not in held)

    def missed(self) -> None:
        self.misses += 1


def _listen(h: Harness) -> Heard:
    heard = Heard(h)
    assert h.deps.revocations is not None
    h.deps.revocations.listen(heard)
    return heard


@pytest.mark.parametrize("use_case", ["rotate", "revoke"])
async def test_rotate_and_revoke_announce_the_old_tokens_digest_once_committed(
    h: Harness, use_case: str
) -> None:
    ann = await create_player(h.deps, "ann")
    heard = _listen(h)
    if use_case == "rotate":
        await rotate_token(h.deps, ann.player.id, ann.token)
    else:
        await revoke_token(h.deps, ann.player.id, ann.token)
    assert heard.digests == [token_hash(ann.token)]  # the digest, never the token
    assert heard.committed == [True]


@pytest.mark.parametrize("use_case", ["rotate", "revoke"])
async def test_a_refused_rotation_or_revocation_announces_nothing(
    h: Harness, use_case: str
) -> None:
    ann = await create_player(h.deps, "ann")
    await revoke_token(h.deps, ann.player.id, ann.token)
    heard = _listen(h)
    op = rotate_token if use_case == "rotate" else revoke_token
    assert await code_of(op(h.deps, ann.player.id, ann.token)) is ErrorCode.UNAUTHENTICATED
    assert heard.digests == []


async def test_dead_tokens_are_those_no_player_holds(h: Harness) -> None:
    ann, bob = await create_player(h.deps, "ann"), await create_player(h.deps, "bob")
    cat = await create_player(h.deps, "cat")
    rotated = await rotate_token(h.deps, bob.player.id, bob.token)
    await revoke_token(h.deps, cat.player.id, cat.token)
    digests = {token_hash(t) for t in (ann.token, bob.token, rotated, cat.token, "never")}
    dead = await dead_tokens(h.deps, digests)
    assert dead == {token_hash(t) for t in (bob.token, cat.token, "never")}
    assert await dead_tokens(h.deps, set()) == set()


async def test_dead_tokens_reads_many_in_batches(h: Harness) -> None:
    ann = await create_player(h.deps, "ann")
    many = {token_hash(f"t{i}") for i in range(2 * RECHECK_BATCH + 7)} | {token_hash(ann.token)}
    assert await dead_tokens(h.deps, many) == many - {token_hash(ann.token)}
