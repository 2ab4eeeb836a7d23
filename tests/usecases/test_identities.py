"""Players from the app's identity provider (issue #24): ``iss`` + ``sub``
of a verified token name exactly one player, created on first sight."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from domain.errors import Unauthenticated
from domain.identity import VerifiedIdentity
from domain.services.players import FIRST_NAME, authenticate, create_player
from tests.fakes import Harness

LATER = datetime(2030, 1, 1, tzinfo=UTC)


class Provider:
    """A fake of the identity port: tokens ``jwt.<iss>.<sub>`` it vouches for."""

    def __init__(self, names: dict[str, str] | None = None) -> None:
        self.names = names or {}

    def recognises(self, token: str) -> bool:
        return token.startswith("jwt.")

    async def verify(self, token: str) -> VerifiedIdentity:
        _, issuer, subject = token.split(".")
        if subject == "expired":
            raise Unauthenticated("the JWT has expired (exp)")
        return VerifiedIdentity(issuer, subject, self.names.get(subject), LATER)


def _with(h: Harness, provider: Provider) -> Harness:
    h.deps = replace(h.deps, identity=provider)
    return h


async def test_an_identity_is_one_player_created_on_first_sight(h: Harness) -> None:
    _with(h, Provider({"u1": "Ann"}))
    first = await authenticate(h.deps, "jwt.idp.u1")
    assert first.name == "Ann"
    assert await authenticate(h.deps, "jwt.idp.u1") == first  # another device, the same player
    other_issuer = await authenticate(h.deps, "jwt.other.u1")
    assert other_issuer.id != first.id  # a subject is only unique at its issuer
    assert len(h.store.players) == 2


async def test_a_first_sight_without_a_usable_name_is_named_player(h: Harness) -> None:
    _with(h, Provider({"u2": "   ", "u3": "x" * 200}))
    assert (await authenticate(h.deps, "jwt.idp.u2")).name == FIRST_NAME
    assert (await authenticate(h.deps, "jwt.idp.u3")).name == FIRST_NAME
    assert (await authenticate(h.deps, "jwt.idp.u4")).name == FIRST_NAME


async def test_two_first_sights_at_once_make_one_player(h: Harness) -> None:
    _with(h, Provider())
    both = await asyncio.gather(*(authenticate(h.deps, "jwt.idp.u5") for _ in range(5)))
    assert len({p.id for p in both}) == 1
    assert list(h.store.identities.values()) == [both[0].id]


async def test_a_refused_token_makes_no_player_and_mmk_tokens_still_work(h: Harness) -> None:
    _with(h, Provider())
    with pytest.raises(Unauthenticated, match="expired"):
        await authenticate(h.deps, "jwt.idp.expired")
    assert h.store.players == {} and h.store.identities == {}
    guest = await create_player(h.deps, "bob")
    assert (await authenticate(h.deps, guest.token)).id == guest.player.id


async def test_without_a_provider_a_jwt_is_an_unknown_token(h: Harness) -> None:
    with pytest.raises(Unauthenticated, match="unknown token"):
        await authenticate(h.deps, "jwt.idp.u1")


async def test_a_guest_links_an_identity_and_keeps_its_player(h: Harness) -> None:
    from domain.errors import BadRequest, Conflict
    from domain.services.players import link_identity

    with pytest.raises(BadRequest, match="no identity provider"):
        await link_identity(h.deps, "nobody", "jwt.idp.u1")
    _with(h, Provider())
    guest = await create_player(h.deps, "ann")
    linked = await link_identity(h.deps, guest.player.id, "jwt.idp.u1")
    assert linked == guest.player
    assert await authenticate(h.deps, "jwt.idp.u1") == guest.player  # the app's sign-in
    assert await authenticate(h.deps, guest.token) == guest.player  # and the old token
    assert await link_identity(h.deps, guest.player.id, "jwt.idp.u1") == guest.player  # again
    bob = await create_player(h.deps, "bob")
    with pytest.raises(Conflict, match="another player"):
        await link_identity(h.deps, bob.player.id, "jwt.idp.u1")
    with pytest.raises(Unauthenticated, match="expired"):
        await link_identity(h.deps, bob.player.id, "jwt.idp.expired")
    assert list(h.store.identities.values()) == [guest.player.id]


async def test_a_player_renames_itself_within_the_name_rules(h: Harness) -> None:
    from domain.errors import BadRequest
    from domain.services.players import update_profile

    guest = await create_player(h.deps, "ann")
    renamed = await update_profile(h.deps, guest.player.id, "  Annie ")
    assert renamed.name == "Annie" and (await authenticate(h.deps, guest.token)).name == "Annie"
    for bad in ("", " ", "x" * 41, "bell\a"):
        with pytest.raises(BadRequest):
            await update_profile(h.deps, guest.player.id, bad)
    assert (await authenticate(h.deps, guest.token)).name == "Annie"


async def test_a_providers_token_is_not_rotated_or_revoked_here(h: Harness) -> None:
    from domain.errors import BadRequest
    from domain.services.players import revoke_token, rotate_token

    _with(h, Provider())
    player = await authenticate(h.deps, "jwt.idp.u9")
    for end in (rotate_token, revoke_token):
        with pytest.raises(BadRequest, match="identity provider's token"):
            await end(h.deps, player.id, "jwt.idp.u9")
    assert await authenticate(h.deps, "jwt.idp.u9") == player
