"""A player's notifications (issue #25) on real servers: two ``mmk serve``
instances, A and B, on one PostgreSQL database and one Redis
(``tests/e2e/cluster.py``), each person on whichever instance the scenario
names, so every notice crosses the database and the bus.

- Bob follows ``notifications(afterSeq: 0)`` on B (a WebSocket), Eve hers
  on A. The host, on A, invites Bob to a private game: Bob's stream gets
  seq 1, ``YourInvitation`` with the host's id. Bob accepts on B; the host
  seats a bot and starts on A: Bob's stream gets seq 2, ``YourGameStarted``
  with his seat, live from A through Redis (seq 1 came, so the stream was
  following by then).
- Bob's socket closes. Meanwhile the host (and the bot) play until Bob is
  to act (``YourTurn``, seat 1), Bob plays a move on B (his own move tells
  him nothing), and the host invites him to a second game. Bob resumes on
  B after seq 2: exactly the missed ones, in order, then nothing twice: the
  next frame is a third invitation, made after the replay, with the next
  seq. ``me.notifications`` on A lists the same seqs;
  ``markNotificationsRead`` on A, then ``unreadOnly`` on B shows the rest.
- Eve's stream on A, open all along, carried none of Bob's: her first
  frame is her own invitation (made after Bob's third), seq 1.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack
from typing import Any

import pytest

from tests.e2e.client import Api, Person
from tests.e2e.cluster import Instance, cluster, fresh_backend
from tests.e2e.test_invitations import ACCEPT, INVITE, _api
from tests.e2e.wsclient import LEGACY_WS, TRANSPORT_WS, GraphQLWebSocket, Operation, ws_connection

pytestmark = [pytest.mark.e2e, pytest.mark.services, pytest.mark.timeout(90)]

STEP = 15.0  # seconds for any one awaited frame, answer or turn
POLL = 0.02  # seconds between looks at a game while a bot is to act

NOTICE = """seq gameId notice { __typename
  ... on YourTurn { seat deadline }
  ... on YourInvitation { hostId }
  ... on YourGameStarted { seat }
  ... on YourGameEnded { seat score place won }
  ... on YourRematch { newGameId }
  ... on YourSeatTakenOver { seat }
}"""
SUBSCRIBE = f"subscription($after: Int!) {{ notifications(afterSeq: $after) {{ at {NOTICE} }} }}"
PAGE = f"""
query($after: Int!, $first: Int!, $unread: Boolean!) {{ me {{
  notifications(afterSeq: $after, first: $first, unreadOnly: $unread) {{
    hasMore lastSeq notifications {{ at readAt {NOTICE} }}
  }}
}} }}"""
MARK_READ = """
mutation($upTo: Int!) { markNotificationsRead(upToSeq: $upTo) {
  __typename
  ... on NotificationsRead { upToSeq marked }
  ... on Refusal { code message }
} }"""
TURN = """
query($id: ID!) { game(id: $id) {
  __typename
  ... on Game { status table { toAct } viewer { seat legalActions { kind mutation arguments } } }
  ... on Refusal { code message }
} }"""


# ---------------------------------------------------------------- set-up
@pytest.fixture(scope="module")
def pair(
    database_url: str, redis_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[list[Instance]]:
    """A and B on a fresh database and a bus prefix of their own."""
    with (
        fresh_backend(database_url, redis_url, "notifications") as backend,
        cluster(backend, tmp_path_factory.mktemp("notifications")) as instances,
    ):
        yield instances


async def _socket(stack: AsyncExitStack, url: str, who: Person, protocol: str) -> GraphQLWebSocket:
    return await stack.enter_async_context(ws_connection(url, protocol, who.token))


# ---------------------------------------------------------------- reading
def invitation(seq: int, game_id: str, host: Person) -> dict[str, Any]:
    notice = {"__typename": "YourInvitation", "hostId": host.id}
    return {"seq": seq, "gameId": game_id, "notice": notice}


def told(seq: int, game_id: str, kind: str, **fields: Any) -> dict[str, Any]:
    return {"seq": seq, "gameId": game_id, "notice": {"__typename": kind, **fields}}


async def next_notice(op: Operation, into: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The stream's next notification (no errors allowed), within
    :data:`STEP`, without its ``at`` (kept, whole, in ``into``)."""
    payload = await op.next(STEP)
    assert not payload.get("errors"), payload
    notification: dict[str, Any] = payload["data"]["notifications"]
    if into is not None:
        into.append(notification)
    return bare(notification)


async def page(
    api: Api, who: Person, after: int = 0, unread: bool = False, first: int = 20
) -> dict[str, Any]:
    variables = {"after": after, "first": first, "unread": unread}
    out: dict[str, Any] = (await api.data(PAGE, variables, who.token))["me"]["notifications"]
    return out


def bare(n: dict[str, Any]) -> dict[str, Any]:
    """A notification without its times (``at``, ``readAt``)."""
    return {k: v for k, v in n.items() if k not in ("at", "readAt")}


async def invite(api: Api, host: Person, game_id: str, *guests: Person) -> None:
    variables = {"gameId": game_id, "playerIds": [g.id for g in guests]}
    await api.ok("invitePlayers", INVITE, variables, host.token)


# ---------------------------------------------------------------- playing
async def turn_of(api: Api, who: Person, game_id: str) -> list[dict[str, Any]]:
    """What ``who`` may do in the game now (empty: not theirs to act)."""
    game = (await api.data(TURN, {"id": game_id}, who.token))["game"]
    assert game["__typename"] == "Game" and game["status"] == "RUNNING", game
    actions: list[dict[str, Any]] = game["viewer"]["legalActions"]
    return actions


async def play_until(
    api: Api, game_id: str, waiter: Person, other: Person, plays: bool = False
) -> None:
    """Until ``waiter`` is to act, within :data:`STEP`: the bot plays its
    own; ``other`` plays the first listed action whenever it is theirs if
    ``plays`` (else their turn fails the test)."""
    deadline = time.monotonic() + STEP
    while not await turn_of(api, waiter, game_id):
        actions = await turn_of(api, other, game_id)
        if actions:
            assert plays, f"{other.name} is to act, not {waiter.name}"
            await api.act(other, game_id, actions[0])
            continue
        assert time.monotonic() < deadline, f"{waiter.name} did not come to act in time"
        await asyncio.sleep(POLL)  # the bot is to act


# ---------------------------------------------------------------- the scenario
async def test_a_player_follows_and_resumes_their_notifications_across_instances(
    pair: list[Instance],
) -> None:
    a, b = pair
    async with AsyncExitStack() as stack:
        on_a, on_b = await _api(stack, a), await _api(stack, b)
        host = await on_a.new_person("nt-host")
        bob = await on_b.new_person("nt-bob")
        eve = await on_a.new_person("nt-eve")

        # Eve follows hers on A all along; Bob his on B.
        eve_ws = await _socket(stack, a.ws_url, eve, LEGACY_WS)
        eve_stream = await eve_ws.subscribe(SUBSCRIBE, {"after": 0})
        bob_ws = await _socket(stack, b.ws_url, bob, TRANSPORT_WS)
        bob_stream = await bob_ws.subscribe(SUBSCRIBE, {"after": 0})
        bobs: list[dict[str, Any]] = []  # every frame of Bob's streams, whole

        # ------------------------------------------------ invited on A, told on B
        first = await on_a.create_game(
            host, seatCount=3, visibility="PRIVATE", practice=True, seed="e2e-nt", ratSeat=0
        )
        await invite(on_a, host, first, bob)
        assert await next_notice(bob_stream, bobs) == invitation(1, first, host)
        await on_b.ok("acceptInvitation", ACCEPT, {"gameId": first}, bob.token)
        await on_a.add_bot(host, first, "GREEDY")
        await on_a.start(host, first)
        assert await next_notice(bob_stream, bobs) == told(2, first, "YourGameStarted", seat=1)
        seen = 2
        await bob_ws.close()
        assert bob_stream.done

        # ------------------------------------------------ away: his turn, his move, an invitation
        # The host (seat 0, the Rat) leads; host and bot play until Bob is to act.
        await play_until(on_a, first, bob, host, plays=True)
        actions = await turn_of(on_b, bob, first)
        await on_b.act(bob, first, actions[0])  # Bob's own move: nothing for him
        # the bot plays on; the host must act next (this seed's deal)
        await play_until(on_a, first, host, bob)
        assert await turn_of(on_b, bob, first) == []
        second = await on_a.create_game(host, seatCount=3, visibility="PRIVATE")
        await invite(on_a, host, second, bob)
        missed = [
            told(3, first, "YourTurn", seat=1, deadline=None),
            invitation(4, second, host),
        ]

        # ------------------------------------------------ resumed on B: the missed ones, once
        bob_ws = await _socket(stack, b.ws_url, bob, LEGACY_WS)
        bob_stream = await bob_ws.subscribe(SUBSCRIBE, {"after": seen})
        assert [await next_notice(bob_stream, bobs) for _ in missed] == missed
        # All replayed: the stream follows now. The next one made is the next
        # frame, with the next seq: nothing came twice in between.
        third = await on_a.create_game(host, seatCount=4, visibility="PRIVATE")
        await invite(on_a, host, third, bob)
        latest = invitation(5, third, host)
        assert await next_notice(bob_stream, bobs) == latest

        # ------------------------------------------------ the same list on A; marked read
        listed = await page(on_a, bob)
        assert listed["hasMore"] is False and listed["lastSeq"] == 5, listed
        everything = [
            invitation(1, first, host),
            told(2, first, "YourGameStarted", seat=1),
            *missed,
            latest,
        ]
        assert [bare(n) for n in listed["notifications"]] == everything
        assert all(n["readAt"] is None for n in listed["notifications"])
        # stored or live, from A or B, each the same, to its time
        assert [{**n, "readAt": None} for n in bobs] == listed["notifications"]
        resumed = await page(on_a, bob, after=seen, first=2)
        assert resumed["hasMore"] is True and resumed["lastSeq"] == 4, resumed
        assert [bare(n) for n in resumed["notifications"]] == missed

        marked = await on_a.ok("markNotificationsRead", MARK_READ, {"upTo": 3}, bob.token)
        assert marked == {"__typename": "NotificationsRead", "upToSeq": 3, "marked": 3}
        unread = await page(on_b, bob, unread=True)
        assert [bare(n) for n in unread["notifications"]] == everything[3:]
        assert unread["lastSeq"] == 5 and unread["hasMore"] is False, unread
        read = (await page(on_b, bob))["notifications"]
        assert [n["readAt"] is not None for n in read] == [True, True, True, False, False]
        again = await on_b.ok("markNotificationsRead", MARK_READ, {"upTo": 3}, bob.token)
        assert again["marked"] == 0  # marked once

        # ------------------------------------------------ Eve's stream: hers alone
        # Made after all of Bob's: had any of his reached her stream, it
        # would have come first.
        await invite(on_a, host, third, eve)
        assert await next_notice(eve_stream) == invitation(1, third, host)
        assert not any(game in raw for raw in eve_ws.raw for game in (first, second))
        assert not any(bob.id in raw for raw in eve_ws.raw)
        # nor is hers in Bob's list
        assert (await page(on_b, bob, after=5))["notifications"] == []
