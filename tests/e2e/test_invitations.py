"""Private games and invitations (issue #24, docs/decisions/0062) on real
servers: two ``mmk serve`` instances, A and B, on one PostgreSQL database and
one Redis (``tests/e2e/cluster.py``), each person on whichever instance the
scenario names, so every step crosses the database and the bus.

- A private game made on A does not exist for an outsider on B: ``game(id)``
  is ``NOT_FOUND``, so are ``joinGame`` and ``acceptInvitation``; it is not
  in ``games``; a ``gameEvents`` subscription to it ends with ``NOT_FOUND``;
  and the ``lobby`` feed on B never tells of it, first made nor filling,
  while it tells of the public games made before and after it (the positive
  controls the test waits on, instead of sleeping).
- The host invites X (on A): X finds the invitation in ``me.invitations``
  on B, may read the game there (but not its invite code, being unseated),
  follows its ``gameEvents`` on B, and accepts there; the host's stream on A
  and X's on B get ``SeatTaken``.
- Y sits on B with the invite code (as typed: lower case, a dash); the host
  rotates the code on A; Z's old code is ``NOT_FOUND`` on B, and the new one
  (read by Y on B) seats Z once Y has left; Y, gone, no longer sees the
  game, and Y's ``gameEvents`` on A ends with ``NOT_FOUND``.
- The invite code is never in an event nor in a log: no stream's frames and
  neither instance's log show either code.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import AsyncExitStack
from typing import Any

import httpx
import pytest

from tests.e2e.client import CHANGE, JOIN_GAME, Api, Person
from tests.e2e.cluster import Instance, cluster, fresh_backend
from tests.e2e.play import event_of, subscribe_events
from tests.e2e.wsclient import (
    LEGACY_WS,
    TRANSPORT_WS,
    GraphQLWebSocket,
    Operation,
    OperationEnded,
    ws_connection,
)

pytestmark = [pytest.mark.e2e, pytest.mark.services, pytest.mark.timeout(90)]

STEP = 15.0  # seconds for any one awaited event or answer
PROBE = 0.5  # seconds to wait for the lobby feed's answer to one probe

GAME = """
query($id: ID!) {
  game(id: $id) {
    __typename
    ... on Game {
      id status visibility inviteCode
      seats { seat playerId }
      invitations { playerId playerName }
    }
    ... on Refusal { code message }
  }
}"""
GAMES = """
{ games(first: 50) {
    __typename
    ... on GameConnection { edges { node { id } } }
    ... on Refusal { code message }
} }"""
MY_INVITATIONS = """
{ me { invitations(first: 20) {
    edges { node { game { id status } invitedBy invitedByName } }
} } }"""
LOBBY = "subscription { lobby { gameId status seatsTaken } }"
INVITE = f"""
mutation($gameId: ID!, $playerIds: [ID!]!) {{
  invitePlayers(gameId: $gameId, playerIds: $playerIds) {{ {CHANGE} }}
}}"""
ACCEPT = f"""
mutation($gameId: ID!) {{ acceptInvitation(gameId: $gameId) {{ {CHANGE} }} }}"""
JOIN_BY_CODE = f"""
mutation($code: String!) {{ joinByInviteCode(inviteCode: $code) {{ {CHANGE} }} }}"""
ROTATE = f"""
mutation($gameId: ID!) {{ rotateInviteCode(gameId: $gameId) {{ {CHANGE} }} }}"""


# ---------------------------------------------------------------- set-up
@pytest.fixture(scope="module")
def pair(
    database_url: str, redis_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[list[Instance]]:
    """A and B on a fresh database and a bus prefix of their own."""
    with (
        fresh_backend(database_url, redis_url, "invitations") as backend,
        cluster(backend, tmp_path_factory.mktemp("invitations")) as instances,
    ):
        yield instances


async def _api(stack: AsyncExitStack, instance: Instance) -> Api:
    http = await stack.enter_async_context(
        httpx.AsyncClient(base_url=instance.base_url, timeout=STEP, trust_env=False)
    )
    return Api(http)


async def _socket(stack: AsyncExitStack, url: str, who: Person, protocol: str) -> GraphQLWebSocket:
    return await stack.enter_async_context(ws_connection(url, protocol, who.token))


# ---------------------------------------------------------------- reading
async def game_seen(api: Api, game_id: str, who: Person) -> dict[str, Any]:
    """``game(id)`` as ``who`` gets it: a ``Game`` or a ``Refusal``."""
    out: dict[str, Any] = (await api.data(GAME, {"id": game_id}, who.token))["game"]
    return out


async def refused(api: Api, field: str, query: str, variables: dict[str, Any], who: Person) -> str:
    """The code of the ``Refusal`` that ``field`` answers (anything else fails)."""
    out = (await api.data(query, variables, who.token))[field]
    assert out["__typename"] == "Refusal", out
    code: str = out["code"]
    return code


async def next_event(op: Operation, into: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    """Read ``op``'s events into ``into`` up to the first of type ``kind``."""
    while True:
        event = event_of(await op.next(STEP))
        into.append(event)
        if event["type"] == kind:
            return event


async def lobby_until(op: Operation, into: list[dict[str, Any]], game_id: str) -> None:
    """Read lobby updates into ``into`` up to the first about ``game_id``."""
    while True:
        payload = await op.next(STEP)
        assert not payload.get("errors"), payload
        update: dict[str, Any] = payload["data"]["lobby"]
        into.append(update)
        if update["gameId"] == game_id:
            return


async def lobby_live(
    op: Operation, into: list[dict[str, Any]], api: Api, probe_game: str, joiner: Person
) -> None:
    """The lobby subscription is live: a probe (``joiner`` taking, then
    leaving, a seat of the public ``probe_game``) reached it. A subscription
    has no acknowledgement, so the probes go on until one is heard, within
    :data:`STEP`."""
    deadline = time.monotonic() + STEP
    seated = False
    while True:
        if seated:
            await api.leave(joiner, probe_game)
        else:
            await api.join(joiner, probe_game)
        seated = not seated
        try:
            payload = await op.next(PROBE)
        except TimeoutError:
            assert time.monotonic() < deadline, "the lobby feed heard no probe"
            continue
        assert not payload.get("errors"), payload
        into.append(payload["data"]["lobby"])
        return


def seat_change(event: dict[str, Any]) -> tuple[str, int, str]:
    return event["type"], event["data"]["seat"], event["data"]["playerId"]


# ---------------------------------------------------------------- the scenario
async def test_a_private_game_is_seen_by_invitation_or_code_only_across_instances(
    pair: list[Instance],
) -> None:
    a, b = pair
    async with AsyncExitStack() as stack:
        on_a, on_b = await _api(stack, a), await _api(stack, b)
        host = await on_a.new_person("inv-host")
        prober = await on_a.new_person("inv-prober")
        outsider = await on_b.new_person("inv-outsider")
        x = await on_b.new_person("inv-x")
        y = await on_b.new_person("inv-y")
        z = await on_b.new_person("inv-z")

        # The outsider's lobby feed on B, heard live before the private game.
        lobby_ws = await _socket(stack, b.ws_url, outsider, LEGACY_WS)
        lobby = await lobby_ws.subscribe(LOBBY)
        updates: list[dict[str, Any]] = []
        probe_game = await on_a.create_game(prober, seatCount=3)
        await lobby_live(lobby, updates, on_a, probe_game, x)

        # ------------------------------------------------ a private game on A
        game_id = await on_a.create_game(host, seatCount=3, visibility="PRIVATE")
        mine = await game_seen(on_a, game_id, host)
        assert mine["__typename"] == "Game", mine
        assert mine["visibility"] == "PRIVATE" and mine["status"] == "LOBBY"
        code: str = mine["inviteCode"]
        assert code, mine
        public_id = await on_a.create_game(prober, seatCount=4)  # the positive control
        await lobby_until(lobby, updates, public_id)
        assert game_id not in {u["gameId"] for u in updates}, updates

        # ------------------------------------------------ unseen by the outsider on B
        assert await game_seen(on_b, game_id, outsider) == {
            "__typename": "Refusal",
            "code": "NOT_FOUND",
            "message": f"no game {game_id}",
        }
        listed = (await on_b.data(GAMES, token=outsider.token))["games"]
        listed_ids = {e["node"]["id"] for e in listed["edges"]}
        assert {probe_game, public_id} <= listed_ids, listed
        assert game_id not in listed_ids, listed
        joined = {"gameId": game_id}
        assert await refused(on_b, "joinGame", JOIN_GAME, joined, outsider) == "NOT_FOUND"
        assert await refused(on_b, "acceptInvitation", ACCEPT, joined, outsider) == "NOT_FOUND"
        async with ws_connection(b.ws_url, TRANSPORT_WS, outsider.token) as ws:
            op = await subscribe_events(ws, game_id)
            payload = await op.next(STEP)
            assert payload["data"] is None, payload
            assert [e["extensions"]["code"] for e in payload["errors"]] == ["NOT_FOUND"], payload
            with pytest.raises(OperationEnded):  # completed by the server
                await op.next(STEP)
            assert not any(code in raw for raw in ws.raw)

        # ------------------------------------------------ X invited on A, accepts on B
        host_ws = await _socket(stack, a.ws_url, host, TRANSPORT_WS)
        host_stream = await subscribe_events(host_ws, game_id)
        host_events: list[dict[str, Any]] = []
        await next_event(host_stream, host_events, "SeatTaken")  # the host's, replayed
        await on_a.ok("invitePlayers", INVITE, {"gameId": game_id, "playerIds": [x.id]}, host.token)
        invited = await next_event(host_stream, host_events, "PlayersInvited")
        assert invited["data"]["playerIds"] == [x.id], invited

        mail = (await on_b.data(MY_INVITATIONS, token=x.token))["me"]["invitations"]["edges"]
        assert [e["node"] for e in mail] == [
            {
                "game": {"id": game_id, "status": "LOBBY"},
                "invitedBy": host.id,
                "invitedByName": host.name,
            }
        ]
        seen_by_x = await game_seen(on_b, game_id, x)
        assert seen_by_x["__typename"] == "Game", seen_by_x
        assert seen_by_x["inviteCode"] is None  # invited, not seated: no code
        assert seen_by_x["invitations"] == []  # nor the host's list
        hosts_view = await game_seen(on_b, game_id, host)
        assert hosts_view["invitations"] == [{"playerId": x.id, "playerName": x.name}]
        x_ws = await _socket(stack, b.ws_url, x, LEGACY_WS)
        x_stream = await subscribe_events(x_ws, game_id)
        x_events: list[dict[str, Any]] = []
        await next_event(x_stream, x_events, "PlayersInvited")  # replayed: x may follow it
        accepted = await on_b.ok("acceptInvitation", ACCEPT, joined, x.token)
        assert accepted["gameId"] == game_id
        took = await next_event(host_stream, host_events, "SeatTaken")
        assert seat_change(took) == ("SeatTaken", 1, x.id)
        assert seat_change(await next_event(x_stream, x_events, "SeatTaken")) == seat_change(took)
        mail = (await on_b.data(MY_INVITATIONS, token=x.token))["me"]["invitations"]["edges"]
        assert mail == []  # the invitation ended as X sat
        seen_by_x = await game_seen(on_b, game_id, x)
        assert seen_by_x["inviteCode"] == code  # seated now: the code shows
        assert seen_by_x["invitations"] == []

        # ------------------------------------------------ Y by code on B; the code rotated on A
        typed = f"{code[:5].lower()}-{code[5:].lower()}"  # as a person types it
        by_code = await on_b.ok("joinByInviteCode", JOIN_BY_CODE, {"code": typed}, y.token)
        assert by_code["gameId"] == game_id
        assert seat_change(await next_event(host_stream, host_events, "SeatTaken")) == (
            "SeatTaken",
            2,
            y.id,
        )
        y_ws = await _socket(stack, a.ws_url, y, TRANSPORT_WS)  # Y follows it on A
        y_stream = await subscribe_events(y_ws, game_id)
        y_events: list[dict[str, Any]] = []
        while not y_events or y_events[-1]["seq"] < host_events[-1]["seq"]:
            y_events.append(event_of(await y_stream.next(STEP)))
        await on_a.ok("rotateInviteCode", ROTATE, joined, host.token)
        changed = await next_event(host_stream, host_events, "InviteCodeChanged")
        assert changed["data"] == {"cleared": False}, changed
        new_code = (await game_seen(on_b, game_id, y))["inviteCode"]  # Y, seated, on B
        assert new_code and new_code != code
        assert (await game_seen(on_a, game_id, host))["inviteCode"] == new_code

        old = {"code": code}
        assert await refused(on_b, "joinByInviteCode", JOIN_BY_CODE, old, z) == "NOT_FOUND"
        assert (await game_seen(on_b, game_id, z))["code"] == "NOT_FOUND"  # still unseen
        await on_b.leave(y, game_id)  # a seat for Z
        left = await next_event(host_stream, host_events, "SeatLeft")
        assert seat_change(left) == ("SeatLeft", 2, y.id)
        assert (await game_seen(on_b, game_id, y))["code"] == "NOT_FOUND"  # gone, out of sight
        with pytest.raises(OperationEnded):  # and Y's stream on A ends so
            while True:
                payload = await y_stream.next(STEP)
                if payload.get("data"):  # an event up to Y's SeatLeft, none after
                    y_events.append(event_of(payload))
                    assert y_events[-1]["seq"] <= left["seq"], y_events
        assert [e["extensions"]["code"] for e in y_stream.errors] == ["NOT_FOUND"], y_stream.errors
        with_new = await on_b.ok("joinByInviteCode", JOIN_BY_CODE, {"code": new_code}, z.token)
        assert with_new["gameId"] == game_id
        assert seat_change(await next_event(host_stream, host_events, "SeatTaken")) == (
            "SeatTaken",
            2,
            z.id,
        )
        final = await game_seen(on_b, game_id, z)
        assert [s["playerId"] for s in final["seats"]] == [host.id, x.id, z.id], final

        # ------------------------------------------------ the lobby never told of it
        # Its seats filled and emptied meanwhile; a public game made after all
        # that is heard, the private one never.
        after_id = await on_a.create_game(x, seatCount=3)
        await lobby_until(lobby, updates, after_id)
        assert game_id not in {u["gameId"] for u in updates}, updates
        assert not any(game_id in raw for raw in lobby_ws.raw)

        # X's stream followed it all on B, in the same order as the host's on A.
        while x_events[-1]["seq"] < host_events[-1]["seq"]:
            x_events.append(event_of(await x_stream.next(STEP)))
        assert [e["seq"] for e in host_events] == list(range(1, len(host_events) + 1))
        assert [(e["seq"], e["type"]) for e in x_events] == [
            (e["seq"], e["type"]) for e in host_events
        ]
        assert [e["type"] for e in host_events] == [
            "GameCreated",
            "SeatTaken",
            "PlayersInvited",
            "SeatTaken",
            "SeatTaken",
            "InviteCodeChanged",
            "SeatLeft",
            "SeatTaken",
        ]
        # The invite code is a secret: never in an event, on either instance.
        for ws in (host_ws, x_ws, y_ws):
            assert not any(c in raw for raw in ws.raw for c in (code, new_code))
    for instance in pair:  # nor in a log
        text = instance.server.log.read_text(errors="replace")
        assert code not in text and new_code not in text, instance.name
