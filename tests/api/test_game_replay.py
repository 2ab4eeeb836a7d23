"""``gameReplay`` and ``featuredGames`` over GraphQL (docs/decisions/0067):
each seat's part of a replay is that seat's own log, the public part the
spectators'; a running game shows nothing; featured games are live public
ones, busiest first."""

from __future__ import annotations

from typing import Any

from tests.api.conftest import Client
from tests.api.support import ok, play_to_end

EVENT = (
    "__typename seq ... on GameStarted { hand { id } handSizes } ... on CardsDrawn { cards { id } }"
)
REPLAY = (
    "query($g: ID!, $s: Int!) { gameReplay(gameId: $g, afterSeq: $s, first: 40) { "
    "__typename ... on Refusal { code message } ... on ReplayPage { hasMore lastSeq seatCount "
    f"steps {{ seq at public {{ {EVENT} }} seats {{ {EVENT} }} }} }} }} }}"
)
LOG = (
    "query($g: ID!, $s: Int!) { gameEvents(gameId: $g, afterSeq: $s, first: 100) { "
    f"... on GameEventPage {{ hasMore lastSeq events {{ {EVENT} }} }} }} }}"
)
FEATURED = "{ featuredGames(first: 5) { id status seatsTaken rated } }"


async def _log(client: Client, token: str | None, game_id: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    seq, more = 0, True
    while more:
        page = (await client.run(LOG, token, g=game_id, s=seq))["gameEvents"]
        events += page["events"]
        seq, more = page["lastSeq"], page["hasMore"]
    return events


async def _replay(client: Client, token: str | None, game_id: str) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    seq, more = 0, True
    while more:
        page = (await client.run(REPLAY, token, g=game_id, s=seq))["gameReplay"]
        assert page["__typename"] == "ReplayPage", page
        assert page["seatCount"] == 3
        steps += page["steps"]
        seq, more = page["lastSeq"], page["hasMore"]
    return steps


async def test_a_replay_is_every_audiences_log_once_the_game_ended(client: Client) -> None:
    ann, _ = await client.new_player("ann")
    bob, _ = await client.new_player("bob")
    game_id: str = (await ok(client, ann, "createGame", input={"seatCount": 3}))["gameId"]
    await ok(client, bob, "joinGame", gameId=game_id)
    await ok(client, ann, "addBot", gameId=game_id, strategy="GREEDY")
    await ok(client, ann, "startGame", gameId=game_id)
    running = (await client.run(REPLAY, bob, g=game_id, s=0))["gameReplay"]
    assert running["__typename"] == "Refusal" and running["code"] == "BAD_INPUT"
    featured = (await client.run(FEATURED, None))["featuredGames"]
    assert [g["id"] for g in featured] == [game_id] and featured[0]["status"] == "RUNNING"
    await play_to_end(client, game_id, [ann, bob, None])
    assert (await client.run(FEATURED, None))["featuredGames"] == []  # no longer live
    steps = await _replay(client, None, game_id)
    assert [s["seq"] for s in steps] == list(range(1, len(steps) + 1))
    assert [s["public"] for s in steps] == await _log(client, None, game_id)
    for seat, token in ((0, ann), (1, bob)):
        assert [s["seats"][seat] for s in steps] == await _log(client, token, game_id)
    (start,) = [s for s in steps if s["public"]["__typename"] == "GameStarted"]
    assert start["public"]["hand"] is None
    hands = [e["hand"] for e in start["seats"]]
    assert [len(h) for h in hands] == start["public"]["handSizes"]  # the bot's hand too
    assert len({c["id"] for h in hands for c in h}) == sum(len(h) for h in hands)
