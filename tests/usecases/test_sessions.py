"""A player's sessions (issue #24): several live tokens, each listed with its
label and when it was created and last used, each ended on its own."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from domain.errors import ErrorCode
from domain.identity import VerifiedIdentity
from domain.services.auth import token_hash
from domain.services.players import (
    authenticate,
    create_player,
    player_for_identity,
    revoke_token,
    rotate_token,
)
from domain.services.sessions import (
    MAX_LABEL,
    MAX_SESSIONS,
    create_session,
    list_sessions,
    open_session,
    record_use,
    revoke_session,
)
from domain.services.transaction import Tx
from tests.fakes import Harness
from tests.usecases.refused import code_of


class Heard:
    def __init__(self) -> None:
        self.digests: list[str] = []

    def revoked(self, digest: str) -> None:
        self.digests.append(digest)

    def missed(self) -> None:
        raise AssertionError("nothing is missed in process")


def _listen(h: Harness) -> Heard:
    heard = Heard()
    assert h.deps.revocations is not None
    h.deps.revocations.listen(heard)
    return heard


async def test_a_second_session_is_another_token_of_the_same_player(h: Harness) -> None:
    ann = await create_player(h.deps, "ann")
    tv = await create_session(h.deps, ann.player.id, "  living-room TV ")
    assert tv.token != ann.token and tv.session.label == "living-room TV"
    assert (await authenticate(h.deps, tv.token)).id == ann.player.id
    assert (await authenticate(h.deps, ann.token)).id == ann.player.id
    listed = await list_sessions(h.deps, ann.player.id, tv.token)
    assert {s.id for s in listed.items} == {tv.session.id, listed.items[1].id}
    assert listed.current == tv.session.id
    assert (await list_sessions(h.deps, ann.player.id, ann.token)).current != tv.session.id
    assert (await list_sessions(h.deps, ann.player.id, None)).current is None


async def test_revoking_a_session_ends_that_token_only_and_is_announced(h: Harness) -> None:
    ann, bob = await create_player(h.deps, "ann"), await create_player(h.deps, "bob")
    tv = await create_session(h.deps, ann.player.id, "tv")
    heard = _listen(h)
    await revoke_session(h.deps, ann.player.id, tv.session.id)
    assert heard.digests == [token_hash(tv.token)]
    assert await code_of(authenticate(h.deps, tv.token)) is ErrorCode.UNAUTHENTICATED
    assert (await authenticate(h.deps, ann.token)).id == ann.player.id
    assert [s.id for s in (await list_sessions(h.deps, ann.player.id, None)).items] != [
        tv.session.id
    ]
    # ended already, or another player's: the same NOT_FOUND, and nothing changes
    before = dict(h.store.sessions)
    assert await code_of(revoke_session(h.deps, ann.player.id, tv.session.id)) is (
        ErrorCode.NOT_FOUND
    )
    (bobs,) = (await list_sessions(h.deps, bob.player.id, None)).items
    assert await code_of(revoke_session(h.deps, ann.player.id, bobs.id)) is ErrorCode.NOT_FOUND
    assert h.store.sessions == before and heard.digests == [token_hash(tv.token)]


async def test_revoke_token_ends_the_callers_session_and_the_others_go_on(h: Harness) -> None:
    ann = await create_player(h.deps, "ann")
    phone = await create_session(h.deps, ann.player.id, "phone")
    await revoke_token(h.deps, ann.player.id, ann.token)
    assert await code_of(authenticate(h.deps, ann.token)) is ErrorCode.UNAUTHENTICATED
    assert (await authenticate(h.deps, phone.token)).id == ann.player.id
    (left,) = (await list_sessions(h.deps, ann.player.id, phone.token)).items
    assert left.id == phone.session.id


async def test_a_rotation_keeps_the_sessions_id_label_and_age(h: Harness) -> None:
    ann = await create_player(h.deps, "ann")
    tv = await create_session(h.deps, ann.player.id, "tv")
    new = await rotate_token(h.deps, ann.player.id, tv.token)
    listed = await list_sessions(h.deps, ann.player.id, new)
    assert listed.current == tv.session.id
    (again,) = [s for s in listed.items if s.id == tv.session.id]
    assert again == tv.session
    assert await code_of(authenticate(h.deps, tv.token)) is ErrorCode.UNAUTHENTICATED


async def test_beyond_the_cap_the_least_recently_used_session_ends(h: Harness) -> None:
    """A backend issuing a token per sign-in never grows a player's sessions
    without end; the one that ends is the least recently used, announced."""
    ann = await create_player(h.deps, "ann")
    tokens = [ann.token]
    for n in range(MAX_SESSIONS - 1):
        tokens.append((await create_session(h.deps, ann.player.id, f"s{n}")).token)
    h.clock.advance(timedelta(minutes=5))
    for token in tokens[1:]:  # all but the first used lately
        await authenticate(h.deps, token)
    assert await record_use(h.deps) == MAX_SESSIONS - 1
    heard = _listen(h)
    newest = await create_session(h.deps, ann.player.id, "one more")
    assert heard.digests == [token_hash(ann.token)]
    assert await code_of(authenticate(h.deps, ann.token)) is ErrorCode.UNAUTHENTICATED
    listed = (await list_sessions(h.deps, ann.player.id, None)).items
    assert len(listed) == MAX_SESSIONS and newest.session.id in {s.id for s in listed}


@pytest.mark.parametrize("label", ["x" * (MAX_LABEL + 1), "bad\nlabel"])
async def test_a_bad_label_is_refused_and_nothing_is_stored(h: Harness, label: str) -> None:
    ann = await create_player(h.deps, "ann")
    before = dict(h.store.sessions)
    code = await code_of(create_session(h.deps, ann.player.id, label))
    assert code is ErrorCode.BAD_INPUT and h.store.sessions == before


async def test_an_empty_label_is_none(h: Harness) -> None:
    ann = await create_player(h.deps, "ann")
    assert (await create_session(h.deps, ann.player.id, "   ")).session.label is None


async def test_last_used_is_written_in_batches_not_per_sign_in(h: Harness) -> None:
    ann = await create_player(h.deps, "ann")
    (first,) = (await list_sessions(h.deps, ann.player.id, None)).items
    h.clock.advance(timedelta(hours=1))
    for _ in range(3):
        await authenticate(h.deps, ann.token)
    (unchanged,) = (await list_sessions(h.deps, ann.player.id, None)).items
    assert unchanged.last_used_at == first.last_used_at  # no write per request
    assert await record_use(h.deps) == 1
    (used,) = (await list_sessions(h.deps, ann.player.id, None)).items
    assert used.last_used_at - first.last_used_at >= timedelta(hours=1)
    assert used.created_at == first.created_at
    assert await record_use(h.deps) == 0  # nothing new since


async def test_uses_a_failed_write_lost_are_written_by_the_next(h: Harness) -> None:
    ann = await create_player(h.deps, "ann")
    await authenticate(h.deps, ann.token)

    def fail() -> None:
        raise OSError("the database is away")

    h.store.fail_before_commit = fail
    with pytest.raises(OSError):
        await record_use(h.deps)
    h.store.fail_before_commit = None
    assert await record_use(h.deps) == 1


async def test_a_provider_player_has_no_session_until_one_is_created(h: Harness) -> None:
    """A player first seen through a JWT signs in with the provider's tokens:
    no phantom MMK token is listed."""
    ident = VerifiedIdentity("https://id.example/", "u1", "Ann", datetime(2027, 1, 1, tzinfo=UTC))
    player = await player_for_identity(h.deps, ident)
    assert (await list_sessions(h.deps, player.id, None)).items == []
    tv = await create_session(h.deps, player.id, "tv")
    assert (await authenticate(h.deps, tv.token)).id == player.id


async def test_a_session_made_meanwhile_elsewhere_is_counted_against_the_cap(
    h: Harness,
) -> None:
    """Another instance opens the player's last free session after this one
    counted and before it commits: this one conflicts on the claimed
    player, counts again and ends the least recently used: never more than
    the cap."""
    from tests.fakes import FakeUnitOfWork

    ann = await create_player(h.deps, "ann")
    for n in range(MAX_SESSIONS - 2):
        await create_session(h.deps, ann.player.id, f"s{n}")

    def rival() -> None:
        h.store.fail_before_commit = None
        with FakeUnitOfWork(h.store) as uow:
            tx = Tx(h.deps, uow, None)
            open_session(tx, ann.player.id, "rival-digest", "elsewhere")
            tx.commit()

    h.store.fail_before_commit = rival
    await create_session(h.deps, ann.player.id, "here")
    listed = (await list_sessions(h.deps, ann.player.id, None)).items
    assert len(listed) == MAX_SESSIONS
    assert {"elsewhere", "here"} <= {s.label for s in listed}


async def test_a_providers_jwt_makes_no_session(h: Harness) -> None:
    """A session's token would outlive the JWT it came from (0059): the
    caller signs in with the provider on the other device too."""
    from dataclasses import replace

    from tests.usecases.test_identities import Provider

    h.deps = replace(h.deps, identity=Provider())
    player = await player_for_identity(
        h.deps, VerifiedIdentity("idp", "u1", "Ann", datetime(2030, 1, 1, tzinfo=UTC))
    )
    before = dict(h.store.sessions)
    code = await code_of(create_session(h.deps, player.id, "tv", "jwt.idp.u1"))
    assert code is ErrorCode.BAD_INPUT and h.store.sessions == before


async def test_the_cap_never_ends_the_callers_own_session(h: Harness) -> None:
    """The caller's stored last use may lag its real one (written in
    batches): its own session is kept, the next least recently used ends."""
    ann = await create_player(h.deps, "ann")  # the oldest, as stored
    others = [
        (await create_session(h.deps, ann.player.id, f"s{n}")).token
        for n in range(MAX_SESSIONS - 1)
    ]
    heard = _listen(h)
    await create_session(h.deps, ann.player.id, "tv", ann.token)
    assert heard.digests == [token_hash(others[0])]
    assert (await authenticate(h.deps, ann.token)).id == ann.player.id
