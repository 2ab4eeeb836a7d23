"""Service keys (issue #24): the app's backend's credential, stored as a
hash, scoped; the token it issues per external id is always the same
player's; a player's token never does a service's work, nor the reverse."""

from __future__ import annotations

import asyncio

import pytest

from domain.errors import DomainError, ErrorCode
from domain.services.auth import SERVICE_KEY_PREFIX, token_hash
from domain.services.players import authenticate, create_player
from domain.services.service_keys import (
    create_service_key,
    issue_player_token,
    list_service_keys,
    player_by_external_id,
    revoke_service_key,
    service_for_key,
)
from domain.services.sessions import list_sessions
from tests.fakes import Harness
from tests.usecases.refused import code_of


async def test_a_key_is_shown_once_stored_as_a_hash_and_checked_per_scope(h: Harness) -> None:
    new = await create_service_key(h.deps, " backend ", ["players:write", "players:read"])
    assert new.secret.startswith(SERVICE_KEY_PREFIX) and new.key.name == "backend"
    assert new.secret not in repr(h.store)
    ((stored, digest),) = h.store.service_keys.values()
    assert digest == token_hash(new.secret) and stored == new.key
    assert (await service_for_key(h.deps, new.secret, "players:write")) == new.key
    assert await code_of(service_for_key(h.deps, new.secret, "games:read")) is ErrorCode.FORBIDDEN
    wrong = new.secret[:-1] + ("A" if new.secret[-1] != "A" else "B")
    code = await code_of(service_for_key(h.deps, wrong, "players:write"))
    assert code is ErrorCode.UNAUTHENTICATED


async def test_a_revoked_key_stops_at_once_and_is_listed_as_revoked(h: Harness) -> None:
    new = await create_service_key(h.deps, "backend", ["players:read"])
    await revoke_service_key(h.deps, new.key.id)
    code = await code_of(service_for_key(h.deps, new.secret, "players:read"))
    assert code is ErrorCode.UNAUTHENTICATED
    (listed,) = await list_service_keys(h.deps)
    assert listed.id == new.key.id and listed.revoked_at is not None
    assert await code_of(revoke_service_key(h.deps, new.key.id)) is ErrorCode.NOT_FOUND


@pytest.mark.parametrize(
    ("name", "scopes"),
    [("", ["players:read"]), ("x" * 61, ["players:read"]), ("ok", []), ("ok", ["admin"])],
)
async def test_a_bad_key_request_is_refused_and_stores_nothing(
    h: Harness, name: str, scopes: list[str]
) -> None:
    assert await code_of(create_service_key(h.deps, name, scopes)) is ErrorCode.BAD_INPUT
    assert h.store.service_keys == {}


async def test_the_same_external_id_is_the_same_player_with_a_fresh_token(h: Harness) -> None:
    first = await issue_player_token(h.deps, "user-42", "Ann", "phone")
    again = await issue_player_token(h.deps, "user-42", "Another name", None)
    assert first.created and not again.created
    assert again.player == first.player and again.player.name == "Ann"
    assert again.token != first.token
    for issued in (first, again):
        assert (await authenticate(h.deps, issued.token)).id == first.player.id
    listed = await list_sessions(h.deps, first.player.id, None)
    assert {s.label for s in listed.items} == {"phone", None}
    assert (await player_by_external_id(h.deps, "user-42")) == first.player
    other = await issue_player_token(h.deps, "user-43", "Bob", None)
    assert other.player.id != first.player.id


async def test_two_first_calls_at_once_make_one_player(h: Harness) -> None:
    a, b = await asyncio.gather(
        issue_player_token(h.deps, "user-7", "Cat", None),
        issue_player_token(h.deps, "user-7", "Cat", None),
    )
    assert a.player == b.player and sorted([a.created, b.created]) == [False, True]
    assert len(h.store.players) == 1


@pytest.mark.parametrize("external_id", ["", " padded", "x" * 201, "tab\there"])
async def test_a_bad_external_id_is_refused_and_changes_nothing(
    h: Harness, external_id: str
) -> None:
    code = await code_of(issue_player_token(h.deps, external_id, "Ann", None))
    assert code is ErrorCode.BAD_INPUT and h.store.players == {}
    assert await code_of(player_by_external_id(h.deps, external_id)) is ErrorCode.BAD_INPUT


async def test_an_unknown_external_id_is_not_found(h: Harness) -> None:
    assert await code_of(player_by_external_id(h.deps, "nobody")) is ErrorCode.NOT_FOUND


async def test_a_service_key_is_no_players_token_and_a_players_token_no_key(h: Harness) -> None:
    key = await create_service_key(h.deps, "backend", ["players:write"])
    ann = await create_player(h.deps, "ann")
    with pytest.raises(DomainError) as e:
        await authenticate(h.deps, key.secret)
    assert e.value.code is ErrorCode.UNAUTHENTICATED and "service key" in str(e.value)
    code = await code_of(service_for_key(h.deps, ann.token, "players:write"))
    assert code is ErrorCode.UNAUTHENTICATED


KEY = "retry-0000-0000-0001"


async def test_a_retry_with_its_key_gets_the_same_token_and_opens_no_session(
    h: Harness,
) -> None:
    first = await issue_player_token(h.deps, "user-9", "Ann", "phone", KEY)
    again = await issue_player_token(h.deps, "user-9", "Ann", "phone", KEY)
    assert (again.token, again.session, again.player) == (first.token, first.session, first.player)
    assert first.created and again.created  # the repeat says what the first did
    assert len((await list_sessions(h.deps, first.player.id, None)).items) == 1
    assert first.token not in repr(h.store.keys)
    other = await issue_player_token(h.deps, "user-9", "Ann", "phone", KEY + "-b")
    assert other.token != first.token and not other.created
    code = await code_of(issue_player_token(h.deps, "user-9", "Ann", "tablet", KEY))
    assert code is ErrorCode.IDEMPOTENCY_KEY_REUSED
    assert await code_of(issue_player_token(h.deps, "user-9", "Ann", None, "short")) is (
        ErrorCode.BAD_INPUT
    )


async def test_a_keys_token_revoked_since_or_its_window_passed(h: Harness) -> None:
    from datetime import timedelta

    from domain.services.sessions import revoke_token

    first = await issue_player_token(h.deps, "user-8", "Bob", None, KEY)
    await revoke_token(h.deps, first.player.id, first.token)
    code = await code_of(issue_player_token(h.deps, "user-8", "Bob", None, KEY))
    assert code is ErrorCode.BAD_INPUT
    h.clock.advance(h.deps.keys.replay_window + timedelta(seconds=1))
    later = await issue_player_token(h.deps, "user-8", "Bob", None, KEY)
    assert later.token != first.token and not later.created
    assert (await issue_player_token(h.deps, "user-8", "Bob", None, KEY)).token == later.token
