"""Caps and abandoned games through the schema (issue #22 part 7,
docs/decisions/0051): each cap's refusal is a coded ``Refusal`` (with
``retryAfter`` for the daily allowance of packs) that changes nothing; an
abandoned game shows its status and outcome, its ``GameEnded`` is a typed
event with termination ``ABANDONED`` that ends every subscriber's stream,
and the lobby hears of it."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from domain.caps import Caps
from domain.channels import LOBBY
from domain.services.abandonment import sweep_abandoned
from tests.api.conftest import Client
from tests.api.support import game, mark, new_game, ok, players, refused, started
from tests.api.test_subscriptions import EVENTS, LOBBY_UPDATES, ended, pull

DEFAULTS = Caps()
PACK = """mutation { r: openBoosterPack {
  __typename ... on Refusal { code message retryAfter } ... on BoosterPack { id } } }"""
ENDED = """query($id: ID!, $after: Int!) {
  gameEvents(gameId: $id, afterSeq: $after, first: 10) { ... on GameEventPage { events {
    __typename ... on GameEnded { termination winners scores seed } } } } }"""
LISTED = """query { games(status: ABANDONED, first: 10) { ... on GameConnection {
  edges { node { id status } } } } }"""


async def test_a_host_at_the_cap_of_open_games_is_refused_and_nothing_changes(
    client: Client,
) -> None:
    (host,) = await players(client, 1)
    games = [await new_game(client, host) for _ in range(DEFAULTS.open_games)]
    before = {g: mark(client, g) for g in games}
    message = await refused(client, host, "createGame", "ILLEGAL_ACTION", input={"seatCount": 3})
    assert f"you host {DEFAULTS.open_games} lobby games" in message
    assert {g: mark(client, g) for g in games} == before
    assert len(client.h.store.games) == DEFAULTS.open_games
    r = await ok(client, host, "leaveGame", gameId=games[0])  # the last person out closes it
    assert [e["type"] for e in r["events"]] == ["SeatLeft", "GameEnded"]
    assert r["events"][-1]["termination"] == "ABANDONED"
    await ok(client, host, "createGame", input={"seatCount": 3})


async def test_quick_play_waits_are_capped(client: Client) -> None:
    (ann,) = await players(client, 1)
    for seats in range(3, 3 + DEFAULTS.quick_play_waits):
        await ok(client, ann, "quickPlay", seatCount=seats)
    before = dict(client.h.store.games)
    message = await refused(client, ann, "quickPlay", "ILLEGAL_ACTION", seatCount=8)
    assert "quick-play games" in message and client.h.store.games == before


async def test_booster_packs_past_the_daily_allowance_say_when_to_retry(client: Client) -> None:
    ann, _ = await client.new_player()
    for _ in range(DEFAULTS.packs_per_day):
        assert (await client.run(PACK, ann))["r"]["__typename"] == "BoosterPack"
    packs = len(client.h.store.boosters)
    r = (await client.run(PACK, ann))["r"]
    assert r["__typename"] == "Refusal" and r["code"] == "RATE_LIMITED", r
    assert 86_000 < r["retryAfter"] <= 86_400 and "24 hours" in r["message"]
    assert len(client.h.store.boosters) == packs
    client.h.clock.advance(timedelta(days=1))
    assert (await client.run(PACK, ann))["r"]["__typename"] == "BoosterPack"


async def test_other_refusals_have_no_retry_after(client: Client) -> None:
    (ann,) = await players(client, 1)
    r = (
        await client.run(
            'mutation { r: joinGame(gameId: "nope") { ... on Refusal { code retryAfter } } }',
            ann,
        )
    )["r"]
    assert r == {"code": "NOT_FOUND", "retryAfter": None}


async def test_an_abandoned_game_ends_every_stream_and_reads_as_abandoned(
    client: Client,
) -> None:
    game_id, tokens = await started(client, 3)
    last = client.h.store.games[game_id].last_seq
    streams = [await client.subscribe(EVENTS, t, id=game_id, after=last) for t in (None, *tokens)]
    lobby = await client.subscribe(LOBBY_UPDATES)
    firsts = [asyncio.ensure_future(pull(s)) for s in (*streams, lobby)]
    while client.h.bus.subscriber_count(LOBBY) == 0:
        await asyncio.sleep(0)
    client.h.clock.advance(client.h.deps.abandon.idle + timedelta(seconds=1))
    assert await sweep_abandoned(client.h.deps) == 1
    *ends, update = [await f for f in firsts]
    for got in ends:
        assert got["gameEvents"]["type"] == "GameEnded"
        assert got["gameEvents"]["seq"] == last + 1
    for s in streams:
        await ended(s)
    await lobby.aclose()
    assert update["lobby"]["status"] == "ABANDONED"
    g = await game(client, tokens[0], game_id)
    assert g["status"] == "ABANDONED" and g["table"]["outcome"]["termination"] == "ABANDONED"
    assert g["table"]["outcome"]["winners"] == [] and g["deadline"] is None
    page = await client.run(ENDED, None, id=game_id, after=last)
    (end,) = page["gameEvents"]["events"]
    assert end["__typename"] == "GameEnded" and end["termination"] == "ABANDONED"
    assert end["winners"] == [] and len(end["scores"]) == 3 and end["seed"]
    listed = (await client.run(LISTED))["games"]["edges"]
    assert [(e["node"]["id"], e["node"]["status"]) for e in listed] == [(game_id, "ABANDONED")]
    before = mark(client, game_id)
    await refused(client, tokens[0], "rematch", "ILLEGAL_ACTION", gameId=game_id)
    await refused(client, tokens[1], "leaveGame", "ILLEGAL_ACTION", gameId=game_id)
    assert mark(client, game_id) == before
