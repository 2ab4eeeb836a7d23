"""Private games and invitations (issue #24, docs/decisions/0062): who may
see, watch and join a game of each visibility; the invite code; the host's
invitations and the invited player's answer; the cap on invitations out.
Every refusal is coded and changes nothing."""

from __future__ import annotations

from dataclasses import replace

import pytest

from domain.bots.strategy import Strategy
from domain.caps import Caps
from domain.channels import LOBBY
from domain.errors import DomainError, ErrorCode
from domain.invitations import MAX_INVITED, NO_SUCH_CODE, check_may_join, normal_code
from domain.records import GameStatus, LobbyUpdate, Visibility
from domain.rematch import RematchOffered
from domain.services import invitations as inv
from domain.services.games import NewGame, add_bot, create_game, join_game, leave_game, start_game
from domain.services.queries import get_game, list_games, read_events
from domain.services.rematch import rematch
from domain.services.streams import game_events, presence_events
from domain.services.transaction import Request
from tests.fakes import Harness, harness
from tests.usecases.conftest import play_first_legal, player, req
from tests.usecases.refused import code_of

PRIVATE, UNLISTED, PUBLIC = Visibility.PRIVATE, Visibility.UNLISTED, Visibility.PUBLIC


@pytest.fixture
def h() -> Harness:
    base = harness()
    return replace(base, deps=replace(base.deps, caps=Caps(pending_invitations=4)))


async def _game(h: Harness, host: str, visibility: Visibility, seats: int = 3) -> str:
    spec = NewGame(seats, visibility=visibility)
    return (await create_game(h.deps, req(host), spec)).game_id


def _frozen(h: Harness) -> tuple[object, ...]:
    """What a refusal must leave as it was."""
    games = {
        g.id: (g.version, list(g.seats), list(g.invitations), g.invite_code)
        for g in h.store.games.values()
    }
    return games, len(h.store.events)


async def _invite(h: Harness, host: str, game_id: str, *players: str) -> None:
    await inv.invite_players(h.deps, req(host), game_id, list(players))


async def test_a_private_game_is_not_found_by_an_outsider_on_every_read(h: Harness) -> None:
    host, outsider = await player(h, "ann"), await player(h, "eve")
    game_id = await _game(h, host, PRIVATE)
    never = "no-such-game"
    for gid in (game_id, never):  # the same refusal as a game that never was
        assert await code_of(get_game(h.deps, gid, outsider)) is ErrorCode.NOT_FOUND
        assert await code_of(get_game(h.deps, gid, None)) is ErrorCode.NOT_FOUND
        assert await code_of(read_events(h.deps, gid, outsider, 0, 10)) is ErrorCode.NOT_FOUND
        assert await code_of(anext(game_events(h.deps, gid, outsider, 0))) is ErrorCode.NOT_FOUND
        stream = presence_events(h.deps, gid, outsider)
        assert await code_of(anext(stream)) is ErrorCode.NOT_FOUND
    messages = {str(e) for e in await _refusals(h, outsider, game_id)}
    assert messages == {str(e) for e in await _refusals(h, outsider, never)}
    assert (await get_game(h.deps, game_id, host)).visibility is PRIVATE


async def _refusals(h: Harness, who: str, game_id: str) -> list[tuple[ErrorCode, str]]:
    """Every game mutation an outsider might try, as (code, message)."""
    calls = [
        join_game(h.deps, req(who), game_id, None),
        leave_game(h.deps, req(who), game_id),
        start_game(h.deps, req(who), game_id),
        add_bot(h.deps, req(who), game_id, Strategy.RANDOM, None),
        rematch(h.deps, req(who), game_id),
        inv.accept_invitation(h.deps, req(who), game_id, None),
        inv.decline_invitation(h.deps, req(who), game_id),
        inv.rotate_invite_code(h.deps, req(who), game_id),
        inv.invite_players(h.deps, req(who), game_id, [who]),
    ]
    found = []
    for call in calls:
        with pytest.raises(DomainError) as e:
            await call
        found.append((e.value.code, e.value.message.replace(game_id, "<game>")))
    assert {c for c, _ in found} == {ErrorCode.NOT_FOUND}
    return found


async def test_listing_and_lobby_feed_show_public_games_only(h: Harness) -> None:
    host = await player(h, "ann")
    heard: list[str] = []
    async with h.bus.subscribe(LOBBY) as feed:
        hidden = [await _game(h, host, PRIVATE), await _game(h, host, UNLISTED)]
        shown = await _game(h, host, PUBLIC)
        async for msg in feed:  # in order: the public game's update comes last
            assert isinstance(msg, LobbyUpdate)
            heard.append(msg.game_id)
            if msg.game_id == shown:
                break
    assert not set(hidden) & set(heard)
    for status in (None, GameStatus.LOBBY):
        items, _ = await list_games(h.deps, status, None, 50)
        assert [g.id for g in items] == [shown]


async def test_an_unlisted_game_is_watched_by_anyone_and_joined_with_its_code(h: Harness) -> None:
    host, eve = await player(h, "ann"), await player(h, "eve")
    game_id = await _game(h, host, UNLISTED)
    assert (await get_game(h.deps, game_id, eve)).summary.id == game_id
    before = _frozen(h)
    assert await code_of(join_game(h.deps, req(eve), game_id, None)) is ErrorCode.FORBIDDEN
    assert _frozen(h) == before
    code = h.store.games[game_id].invite_code
    assert code is not None and normal_code(code) == code
    typed = "-".join((code[:5].lower(), code[5:]))  # as a person types it
    done = await inv.join_by_invite_code(h.deps, req(eve), typed, None)
    assert done.game_id == game_id and h.store.games[game_id].seat_of(eve) == 1


async def test_only_the_host_and_seated_players_read_the_code(h: Harness) -> None:
    host, bob, eve = [await player(h, n) for n in ("ann", "bob", "eve")]
    game_id = await _game(h, host, UNLISTED)
    await _invite(h, host, game_id, bob)
    assert (await get_game(h.deps, game_id, bob)).invite_code is None  # invited, not seated
    assert (await get_game(h.deps, game_id, eve)).invite_code is None
    assert (await get_game(h.deps, game_id, eve)).invitations == ()
    code = (await get_game(h.deps, game_id, host)).invite_code
    assert code is not None
    await join_game(h.deps, req(bob), game_id, None)
    assert (await get_game(h.deps, game_id, bob)).invite_code == code


async def test_an_invited_player_sees_joins_and_ends_the_invitation(h: Harness) -> None:
    host, bob = await player(h, "ann"), await player(h, "bob")
    game_id = await _game(h, host, PRIVATE)
    await _invite(h, host, game_id, bob)
    assert (await get_game(h.deps, game_id, bob)).visibility is PRIVATE
    page = await inv.my_invitations(h.deps, bob, None, 10)
    assert [(i.invited_by, g.id) for i, g in page.items] == [(host, game_id)]
    done = await inv.accept_invitation(h.deps, req(bob), game_id, None)
    assert [e.type for e in done.events] == ["SeatTaken"]
    assert h.store.games[game_id].invitations == []
    assert (await inv.my_invitations(h.deps, bob, None, 10)).items == []
    # seated, bob sees it still; once he leaves the lobby, no longer
    await leave_game(h.deps, req(bob), game_id)
    assert await code_of(get_game(h.deps, game_id, bob)) is ErrorCode.NOT_FOUND


async def test_join_game_takes_an_invitation_too(h: Harness) -> None:
    host, bob = await player(h, "ann"), await player(h, "bob")
    game_id = await _game(h, host, PRIVATE)
    await _invite(h, host, game_id, bob)
    await join_game(h.deps, req(bob), game_id, None)
    assert h.store.games[game_id].seat_of(bob) == 1 and not h.store.games[game_id].invitations


async def test_declining_and_cancelling_end_the_sight_of_a_private_game(h: Harness) -> None:
    host, bob, cy = [await player(h, n) for n in ("ann", "bob", "cy")]
    game_id = await _game(h, host, PRIVATE)
    await _invite(h, host, game_id, bob, cy)
    declined = await inv.decline_invitation(h.deps, req(bob), game_id)
    assert [e.type for e in declined.events] == ["InvitationDeclined"]
    cancelled = await inv.cancel_invitation(h.deps, req(host), game_id, cy)
    assert [e.type for e in cancelled.events] == ["InvitationCancelled"]
    for who in (bob, cy):
        assert await code_of(get_game(h.deps, game_id, who)) is ErrorCode.NOT_FOUND
        assert await code_of(inv.accept_invitation(h.deps, req(who), game_id, None)) is (
            ErrorCode.NOT_FOUND
        )
    before = _frozen(h)
    assert await code_of(inv.cancel_invitation(h.deps, req(host), game_id, cy)) is (
        ErrorCode.NOT_FOUND
    )
    assert _frozen(h) == before


async def test_an_invited_players_stream_ends_when_the_invitation_does(h: Harness) -> None:
    host, bob = await player(h, "ann"), await player(h, "bob")
    game_id = await _game(h, host, PRIVATE)
    await _invite(h, host, game_id, bob)
    stream = game_events(h.deps, game_id, bob, 0)
    seen = [(await anext(stream))[1].type for _ in range(3)]
    assert seen == ["GameCreated", "SeatTaken", "PlayersInvited"]
    await inv.cancel_invitation(h.deps, req(host), game_id, bob)
    assert (await anext(stream))[1].type == "InvitationCancelled"
    assert await code_of(anext(stream)) is ErrorCode.NOT_FOUND


async def test_invitations_are_checked_whole_and_asked_again_change_nothing(h: Harness) -> None:
    host, bob, cy = [await player(h, n) for n in ("ann", "bob", "cy")]
    game_id = await _game(h, host, PRIVATE)
    await _invite(h, host, game_id, bob)
    await join_game(h.deps, req(bob), game_id, None)
    before = _frozen(h)
    bad: tuple[list[str], ...] = (
        [],  # nobody
        [cy, cy],  # twice
        [cy, "nobody"],  # not a player
        [host],  # the host
        [cy, bob],  # seated
        [f"p{i}" for i in range(21)],  # too many at once
    )
    for ids in bad:
        assert await code_of(inv.invite_players(h.deps, req(host), game_id, ids)) is (
            ErrorCode.BAD_INPUT
        ), ids
    assert _frozen(h) == before
    await _invite(h, host, game_id, cy)
    again = await inv.invite_players(h.deps, req(host), game_id, [cy])
    assert again.events == ()


async def test_the_host_of_a_private_game_sits_without_an_invitation(h: Harness) -> None:
    host = await player(h, "ann")
    game_id = await create_game(h.deps, req(host), NewGame(3, take_seat=False, visibility=PRIVATE))
    await join_game(h.deps, req(host), game_id.game_id, None)
    assert h.store.games[game_id.game_id].seat_of(host) == 0


async def test_rotating_and_clearing_the_code(h: Harness) -> None:
    host, bob, cy, dee = [await player(h, n) for n in ("ann", "bob", "cy", "dee")]
    game_id = await _game(h, host, PRIVATE, seats=4)
    old = h.store.games[game_id].invite_code
    assert old is not None
    await inv.rotate_invite_code(h.deps, req(host), game_id)
    new = h.store.games[game_id].invite_code
    assert new not in (None, old)
    assert await code_of(inv.join_by_invite_code(h.deps, req(bob), old, None)) is (
        ErrorCode.NOT_FOUND
    )
    await inv.join_by_invite_code(h.deps, req(bob), new, None)
    done = await inv.clear_invite_code(h.deps, req(host), game_id)
    assert [e.type for e in done.events] == ["InviteCodeChanged"]
    assert h.store.games[game_id].invite_code is None
    assert await code_of(inv.join_by_invite_code(h.deps, req(cy), new, None)) is (
        ErrorCode.NOT_FOUND
    )
    # invitations still seat players
    await _invite(h, host, game_id, dee)
    await inv.accept_invitation(h.deps, req(dee), game_id, None)
    # bad codes are refused as such, the host's only operations refuse others
    assert await code_of(inv.join_by_invite_code(h.deps, req(cy), "short", None)) is (
        ErrorCode.BAD_INPUT
    )
    assert await code_of(inv.rotate_invite_code(h.deps, req(bob), game_id)) is ErrorCode.FORBIDDEN
    public = await _game(h, host, PUBLIC)
    assert h.store.games[public].invite_code is None
    assert await code_of(inv.rotate_invite_code(h.deps, req(host), public)) is (ErrorCode.BAD_INPUT)


async def test_nothing_changes_once_the_game_has_started(h: Harness) -> None:
    host, bob, cy = [await player(h, n) for n in ("ann", "bob", "cy")]
    game_id = await _game(h, host, PRIVATE)
    await _invite(h, host, game_id, bob)
    for seat in (1, 2):
        await add_bot(h.deps, req(host), game_id, Strategy.RANDOM, seat)
    await start_game(h.deps, req(host), game_id)
    assert (await inv.my_invitations(h.deps, bob, None, 10)).items == []
    # the invited who did not sit may still watch; nobody new is invited
    assert (await get_game(h.deps, game_id, bob)).summary.status is GameStatus.RUNNING
    before = _frozen(h)
    for call in (
        inv.invite_players(h.deps, req(host), game_id, [cy]),
        inv.rotate_invite_code(h.deps, req(host), game_id),
        inv.cancel_invitation(h.deps, req(host), game_id, bob),
    ):
        assert await code_of(call) is ErrorCode.ILLEGAL_ACTION
    assert _frozen(h) == before


async def test_the_cap_on_invitations_out_counts_lobby_games_only(h: Harness) -> None:
    host = await player(h, "ann")
    guests = [await player(h, f"g{i}") for i in range(6)]
    first, second = await _game(h, host, PRIVATE), await _game(h, host, PRIVATE)
    await _invite(h, host, first, *guests[:3])
    before = _frozen(h)
    assert await code_of(inv.invite_players(h.deps, req(host), second, guests[3:5])) is (
        ErrorCode.ILLEGAL_ACTION
    )
    assert _frozen(h) == before
    await _invite(h, host, second, guests[3])  # the 4th: at the cap
    await inv.decline_invitation(h.deps, req(guests[0]), first)  # one answered: room for one
    await _invite(h, host, second, guests[4])
    assert await code_of(inv.invite_players(h.deps, req(host), second, [guests[5]])) is (
        ErrorCode.ILLEGAL_ACTION
    )
    # another host is not held by it
    other = await player(h, "zed")
    await _invite(h, other, await _game(h, other, PRIVATE), guests[5])


async def test_a_game_holds_at_most_max_invited_invitations() -> None:
    h = harness()  # no cap per host: the game's own bound holds
    h = replace(h, deps=replace(h.deps, caps=Caps(pending_invitations=0)))
    host = await player(h, "ann")
    game_id = await _game(h, host, PRIVATE)
    guests = [await player(h, f"g{i}") for i in range(MAX_INVITED + 1)]
    for start in range(0, MAX_INVITED, 20):
        await _invite(h, host, game_id, *guests[start : min(start + 20, MAX_INVITED)])
    assert await code_of(inv.invite_players(h.deps, req(host), game_id, guests[-1:])) is (
        ErrorCode.ILLEGAL_ACTION
    )


async def test_invitations_list_newest_first_a_page_at_a_time(h: Harness) -> None:
    from datetime import timedelta

    hosts = [await player(h, f"h{i}") for i in range(3)]
    bob = await player(h, "bob")
    games = []
    for host in hosts:
        games.append(await _game(h, host, PRIVATE))
        await _invite(h, host, games[-1], bob)
        h.clock.advance(timedelta(seconds=1))
    first = await inv.my_invitations(h.deps, bob, None, 2)
    assert [g.id for _, g in first.items] == games[::-1][:2] and first.has_next
    last, g = first.items[-1]
    rest = await inv.my_invitations(h.deps, bob, (last.at, g.id), 2)
    assert [g.id for _, g in rest.items] == [games[0]] and not rest.has_next
    assert await code_of(inv.my_invitations(h.deps, bob, None, 0)) is ErrorCode.BAD_INPUT


async def test_a_private_games_rematch_is_private_with_a_fresh_code(h: Harness) -> None:
    host, bob, eve = [await player(h, n) for n in ("ann", "bob", "eve")]
    game_id = await _game(h, host, PRIVATE)
    await _invite(h, host, game_id, bob)
    await join_game(h.deps, req(bob), game_id, None)
    await add_bot(h.deps, req(host), game_id, Strategy.RANDOM, None)
    await start_game(h.deps, req(host), game_id)
    await play_first_legal(h, game_id, {0: host, 1: bob})
    again = await rematch(h.deps, req(bob), game_id)
    new = h.store.games[again.game_id]
    assert new.visibility is PRIVATE and new.invite_code not in (
        None,
        h.store.games[game_id].invite_code,
    )
    assert (await get_game(h.deps, new.id, host)).summary.id == new.id  # a kept seat
    assert await code_of(get_game(h.deps, new.id, eve)) is ErrorCode.NOT_FOUND
    assert isinstance(h.store.log(game_id)[-1].event, RematchOffered)


async def test_a_code_rotated_between_its_lookup_and_the_join_names_no_game(h: Harness) -> None:
    """The join found the game by its code, then the game has another: the
    refusal is the unknown code's, never the private game's id."""
    host, eve = [await player(h, n) for n in ("ann", "eve")]
    game_id = await _game(h, host, PRIVATE)
    game = h.store.games[game_id].clone()
    old = game.invite_code
    assert old is not None
    game.invite_code = "ZZZZZZZZZZ"  # rotated meanwhile
    with pytest.raises(DomainError) as e:
        check_may_join(game, eve, old)
    assert e.value.code is ErrorCode.NOT_FOUND and e.value.message == NO_SUCH_CODE
    check_may_join(game, eve, "ZZZZZZZZZZ")  # the current one lets them in


async def test_nothing_to_decline_once_the_game_started(h: Harness) -> None:
    """After the start an invitation is a right to watch: declining it then
    would log a lobby event in a running (or finished) game's log."""
    host, bob = [await player(h, n) for n in ("ann", "bob")]
    game_id = await _game(h, host, PRIVATE)
    await _invite(h, host, game_id, bob)
    for seat in (1, 2):
        await add_bot(h.deps, req(host), game_id, Strategy.RANDOM, seat)
    await start_game(h.deps, req(host), game_id)
    before = _frozen(h)
    assert await code_of(inv.decline_invitation(h.deps, req(bob), game_id)) is (
        ErrorCode.ILLEGAL_ACTION
    )
    assert _frozen(h) == before


async def test_a_repeat_under_its_key_keeps_its_first_result_after_sight_is_gone(
    h: Harness,
) -> None:
    """A repeat of a decline (or of a join by a code since rotated) gets its
    first result; the game in it is not shown once the game moved on."""
    host, bob, cy = [await player(h, n) for n in ("ann", "bob", "cy")]
    game_id = await _game(h, host, PRIVATE)
    await _invite(h, host, game_id, bob)
    keyed = Request(bob, "declineInvitation", {"gameId": game_id}, "k" * 16)
    first = await inv.decline_invitation(h.deps, keyed, game_id)
    assert (await inv.decline_invitation(h.deps, keyed, game_id)) == first
    assert (await get_game(h.deps, game_id, bob, changed_to=first.version)).summary.id == game_id
    await _invite(h, host, game_id, cy)  # the game moves on
    assert await code_of(get_game(h.deps, game_id, bob, changed_to=first.version)) is (
        ErrorCode.NOT_FOUND
    )
    code = h.store.games[game_id].invite_code
    assert code is not None
    dee = await player(h, "dee")
    joined_key = Request(dee, "joinByInviteCode", {"inviteCode": code}, "j" * 16)
    joined = await inv.join_by_invite_code(h.deps, joined_key, code, None)
    await inv.rotate_invite_code(h.deps, req(host), game_id)
    assert (await inv.join_by_invite_code(h.deps, joined_key, code, None)) == joined
