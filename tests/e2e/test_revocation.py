"""A rotated or revoked token's open streams end, on real servers
(docs/decisions/0053): its WebSockets (both sub-protocols) close with 4401,
its HTTP streams (SSE, multipart) send ``UNAUTHENTICATED`` and complete.

- On the instance that revoked (the session's embedded server: in-process
  notices), within :data:`SAME_INSTANCE` (1 s), and an operation sent over
  the old socket right after the revocation is never answered with data.
- On another instance (two ``mmk serve`` on PostgreSQL and Redis, with the
  periodic check pushed out to 10 minutes so that only the Redis notice can
  end them in time), within :data:`OTHER_INSTANCE`; that instance then
  refuses the old token at once (the notice evicted it from its cache,
  which would otherwise keep it for 5 s) and takes the rotated one.
- With Redis away when the token is revoked (a private ``redis-server``
  stopped by its pid), at the other instance's next check of the tokens in
  use (``MMK_TOKEN_RECHECK_INTERVAL``, 1 s there).

Each stream is a seated player's ``gameEvents`` of a running game: it
carries the seat's hand until it ends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import ConnectionClosed

from api.graphql.revocation import REVOKED_CLOSE, REVOKED_MESSAGE, REVOKED_REASON
from tests.e2e.client import ISSUED_TOKENS, Api, Person
from tests.e2e.cluster import Instance, cluster, fresh_backend
from tests.e2e.conftest import Server
from tests.e2e.httpsub import HTTP_TRANSPORTS, HttpSubscription, http_subscribe_events
from tests.e2e.httpsub import streaming_client as http_client
from tests.e2e.play import event_of, subscribe_events
from tests.e2e.wsclient import PROTOCOLS, TRANSPORT_WS, GraphQLWebSocket, Operation, OperationEnded
from tests.integration.redis_support import PrivateRedis

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

SAME_INSTANCE = 1.0  # seconds: the bound on the instance that revoked
OTHER_INSTANCE = 5.0  # seconds: one Redis pub/sub hop, on a loaded machine
STEP = 15.0
ME = "{ me { player { id } } }"
ROTATE = "mutation { rotateToken { __typename ... on NewToken { token } } }"
REVOKE = "mutation { revokeToken { __typename } }"


@dataclass
class Streams:
    """One player's open streams on one instance: a socket per WebSocket
    sub-protocol and an HTTP stream per transport, each with a live
    ``gameEvents`` whose replay has come."""

    sockets: dict[str, GraphQLWebSocket]
    operations: dict[str, Operation]
    http: dict[str, HttpSubscription]


async def open_streams(
    stack: AsyncExitStack, base_url: str, ws_url: str, who: Person, game_id: str
) -> Streams:
    streams = Streams({}, {}, {})
    for protocol in PROTOCOLS:
        ws = GraphQLWebSocket(ws_url, protocol)
        await ws.connect({"authorization": f"Bearer {who.token}"})
        stack.push_async_callback(ws.close)
        op = await subscribe_events(ws, game_id)
        assert event_of(await op.next(STEP))["seq"] == 1
        streams.sockets[protocol], streams.operations[protocol] = ws, op
    client = await stack.enter_async_context(http_client(base_url))
    for transport in HTTP_TRANSPORTS:
        sub = await http_subscribe_events(client, transport, game_id, who.token)
        stack.push_async_callback(sub.close)
        assert event_of(await sub.next(STEP))["seq"] == 1
        streams.http[transport] = sub
    return streams


async def running_game(api: Api, tag: str) -> tuple[Person, str]:
    """A practice game the person plays against two bots, started; the
    person (seat 0, the Rat) is to act, so the stream waits."""
    ann = await api.new_person(f"{tag}-ann")
    game_id = await api.create_game(ann, seatCount=3, seed=f"e2e-{tag}", practice=True, ratSeat=0)
    for strategy in ("GREEDY", "RANDOM"):
        await api.add_bot(ann, game_id, strategy)
    await api.start(ann, game_id)
    return ann, game_id


async def revoke(api: Api, who: Person, via: str) -> str | None:
    """Revoke (or rotate) ``who``'s token; the rotated token, if any."""
    if via == "rotateToken":
        r = await api.ok("rotateToken", ROTATE, {}, who.token)
        ISSUED_TOKENS.append(r["token"])
        token: str = r["token"]
        return token
    assert (await api.ok("revokeToken", REVOKE, {}, who.token))["__typename"] == "TokenRevoked"
    return None


async def all_ended(streams: Streams, within: float) -> None:
    """Every socket closed with 4401 and every HTTP stream ended with the
    coded error and its end, all within ``within`` seconds of now."""
    async with asyncio.timeout(within):
        for protocol, ws in streams.sockets.items():
            code = await ws.wait_closed(within)
            assert (code, ws.close_reason) == (REVOKED_CLOSE, REVOKED_REASON), protocol
        for transport, sub in streams.http.items():
            await sub.wait_done(within)
            assert sub.completed, f"{transport}: cut, not completed"
            codes = [e.get("extensions", {}).get("code") for e in sub.errors]
            assert codes == ["UNAUTHENTICATED"], (transport, sub.errors)
            assert sub.errors[0]["message"] == REVOKED_MESSAGE


# ---------------------------------------------------------------- one instance
@pytest.mark.parametrize("via", ["revokeToken", "rotateToken"])
async def test_the_instance_that_revoked_ends_the_streams_within_a_second(
    server: Server, api: Api, via: str
) -> None:
    ann, game_id = await running_game(api, f"rv1-{via}")
    async with AsyncExitStack() as stack:
        streams = await open_streams(stack, server.base_url, server.ws_url, ann, game_id)
        idle = GraphQLWebSocket(server.ws_url, TRANSPORT_WS)  # a socket without a stream
        await idle.connect({"authorization": f"Bearer {ann.token}"})
        stack.push_async_callback(idle.close)
        rotated = await revoke(api, ann, via)
        try:  # right after: refused, or the socket is closed already
            asked: Operation | None = await idle.subscribe(ME)
        except ConnectionClosed:
            asked = None
        await all_ended(streams, SAME_INSTANCE)
        if asked is not None:
            try:
                answer = await asked.next(SAME_INSTANCE)
            except OperationEnded:
                answer = {"errors": asked.errors}
            assert not (answer.get("data") or {}).get("me"), answer
        assert await idle.wait_closed(SAME_INSTANCE) == REVOKED_CLOSE
    old = await api.raw(ME, token=ann.token)
    assert old["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    if rotated is not None:
        assert (await api.data(ME, token=rotated))["me"]["player"]["id"] == ann.id


# ---------------------------------------------------------------- two instances
@pytest.fixture(scope="module")
def pair(
    database_url: str, redis_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[list[Instance]]:
    """A and B on a fresh database and a prefix of their own; the periodic
    check of open tokens pushed out of the tests' reach."""
    with (
        fresh_backend(
            database_url, redis_url, "revocation", MMK_TOKEN_RECHECK_INTERVAL="600"
        ) as backend,
        cluster(backend, tmp_path_factory.mktemp("revocation")) as instances,
    ):
        yield instances


async def _api(stack: AsyncExitStack, instance: Instance) -> Api:
    http = await stack.enter_async_context(
        httpx.AsyncClient(base_url=instance.base_url, timeout=STEP, trust_env=False)
    )
    return Api(http)


@pytest.mark.services
@pytest.mark.parametrize("via", ["revokeToken", "rotateToken"])
async def test_another_instance_ends_the_streams_when_the_notice_comes(
    pair: list[Instance], via: str
) -> None:
    a, b = pair
    async with AsyncExitStack() as stack:
        on_a, on_b = await _api(stack, a), await _api(stack, b)
        ann, game_id = await running_game(on_a, f"rv2-{via}")
        streams = await open_streams(stack, b.base_url, b.ws_url, ann, game_id)
        assert (await on_b.data(ME, token=ann.token))["me"]["player"]["id"] == ann.id  # cached
        rotated = await revoke(on_a, ann, via)
        await all_ended(streams, OTHER_INSTANCE)
        # evicted by the notice: not served from B's cache for its 5 s
        old = await on_b.raw(ME, token=ann.token)
        assert old["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
        if rotated is not None:
            assert (await on_b.data(ME, token=rotated))["me"]["player"]["id"] == ann.id


CREATE_SESSION = (
    "mutation($l: String) { createSession(label: $l) { __typename "
    "... on NewSession { token session { id } } } }"
)
REVOKE_SESSION = (
    "mutation($id: ID!) { revokeSession(id: $id) { __typename "
    "... on SessionRevoked { sessionId } } }"
)
SESSIONS = "{ me { sessions { id label current } } }"
MY_GAMES = "{ me { games { edges { node { yourTurn game { id } } } } } }"


@pytest.mark.services
async def test_a_session_revoked_on_one_instance_ends_its_streams_on_the_other(
    pair: list[Instance],
) -> None:
    """Issue #24: a player's second device (``createSession`` on A) finds on
    B, in ``me.games``, the game the first started on A, waiting for it, and
    streams it from B; ``revokeSession`` on A, from the first device, ends
    the second's streams on B; the first token goes on, on both."""
    a, b = pair
    async with AsyncExitStack() as stack:
        on_a, on_b = await _api(stack, a), await _api(stack, b)
        ann, game_id = await running_game(on_a, "rv2-session")
        new = await on_a.ok("createSession", CREATE_SESSION, {"l": "tv"}, ann.token)
        ISSUED_TOKENS.append(new["token"])
        tv = Person(ann.name, ann.id, new["token"])
        streams = await open_streams(stack, b.base_url, b.ws_url, tv, game_id)
        mine = (await on_b.data(MY_GAMES, token=tv.token))["me"]["games"]["edges"]
        assert [(e["node"]["game"]["id"], e["node"]["yourTurn"]) for e in mine] == [
            (game_id, True)  # ann (seat 0, the Rat) leads: the stream waits for her
        ]
        listed = (await on_b.data(SESSIONS, token=tv.token))["me"]["sessions"]
        assert sorted((s["label"] or "", s["current"]) for s in listed) == [
            ("", False),
            ("tv", True),
        ]
        ended = await on_a.ok(
            "revokeSession", REVOKE_SESSION, {"id": new["session"]["id"]}, ann.token
        )
        assert ended["sessionId"] == new["session"]["id"]
        await all_ended(streams, OTHER_INSTANCE)
        old = await on_b.raw(ME, token=tv.token)
        assert old["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
        for on in (on_a, on_b):
            assert (await on.data(ME, token=ann.token))["me"]["player"]["id"] == ann.id


# ---------------------------------------------------------------- Redis away
RECHECK = 1  # seconds: MMK_TOKEN_RECHECK_INTERVAL of this test's instances


@pytest.mark.services
async def test_with_redis_away_the_other_instance_ends_them_at_its_next_check(
    database_url: str, redis_url: str, tmp_path: Path
) -> None:
    """Redis is away when the token is revoked: the revocation still
    commits and answers; the notice cannot cross, and B ends the streams at
    its next check of the tokens in use (``MMK_TOKEN_RECHECK_INTERVAL``),
    then refuses the old token."""
    private = PrivateRedis(tmp_path)
    private.start()
    try:
        with (
            fresh_backend(
                database_url,
                private.url,
                "revocation-away",
                MMK_TOKEN_RECHECK_INTERVAL=str(RECHECK),
            ) as backend,
            cluster(backend, tmp_path) as (a, b),
        ):
            async with AsyncExitStack() as stack:
                on_a, on_b = await _api(stack, a), await _api(stack, b)
                ann, game_id = await running_game(on_a, "rv-away")
                streams = await open_streams(stack, b.base_url, b.ws_url, ann, game_id)
                private.stop()  # by its pid
                await revoke(on_a, ann, "revokeToken")
                await all_ended(streams, RECHECK + OTHER_INSTANCE)
                old = await on_b.raw(ME, token=ann.token)
                assert old["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
                private.start()
    finally:
        private.stop()
