"""Webhooks (issue #25, docs/decisions/0064) end to end, as an app's backend
uses them: real ``mmk serve`` processes post each player's notifications to
a real receiver (``tests/e2e/webhook_receiver.py``) that verifies every
delivery with the Standard Webhooks reference library, never with the
server's code, and keeps what came.

- One instance (SQLite, the in-process bus): a service key (scopes
  ``players:write`` and ``webhooks``) makes an endpoint for the receiver and
  issues three players' tokens (external ids); they play a whole game. The
  receiver first answers 500, then hangs past ``MMK_WEBHOOK_TIMEOUT``, then
  is down, then recovers: every notification of the three players' (their
  own ``me.notifications``) is a message of the endpoint's log
  (``webhookMessages``), and each came, verified, with the exact body the
  log shows, its ``data.playerId`` and ``data.externalId``; the distinct
  ``webhook-id``\\s taken are exactly the log's; the log shows the 500s, the
  timeouts and the refused connections before each message's 200.
- Two instances (PostgreSQL + Redis): the receiver hangs; the instance whose
  delivery comes first is killed (SIGKILL) while it waits for the answer.
  The other instance delivers what the dead one had leased once the lease
  (``2 * timeout + 5`` s) ran out, and the rest: every message taken, none
  lost, exactly once by ``webhook-id``.
- A server without ``MMK_WEBHOOK_ALLOWED_NETWORKS`` refuses a loopback,
  private or link-local endpoint (``BAD_INPUT``), and never posts to a name
  that resolves to one: the SSRF guard.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from tests.e2e.client import ISSUED_TOKENS, Api, Person
from tests.e2e.cluster import Instance, cluster, fresh_backend
from tests.e2e.conftest import SIGNS_OF_FAILURE
from tests.e2e.own_server import own_server
from tests.e2e.test_service_keys import ISSUE, new_key
from tests.e2e.webhook_receiver import Delivery, Receiver, always

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

T = TypeVar("T")
STEP = 15.0  # seconds for any one awaited condition
POLL = 0.05  # seconds between two looks at a condition
ALLOWED = {"MMK_WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8"}
TIMED_OUT = "no answer within"  # the start of a timed-out attempt's error

CREATE = """
mutation($url: String!, $kinds: [NoticeKind!]!) {
  r: createWebhookEndpoint(url: $url, kinds: $kinds, description: "e2e receiver") {
    __typename
    ... on WebhookEndpointSecret { secret endpoint { id url kinds disabledAt } }
    ... on Refusal { code message }
  }
}"""
ENDPOINTS = "{ webhookEndpoints { id url disabledAt disabledReason } }"
MESSAGES = """
query($id: ID!, $after: String) {
  r: webhookMessages(id: $id, first: 25, after: $after) {
    __typename
    ... on WebhookMessagePage {
      hasMore endCursor
      messages {
        id playerId seq kind gameId status payload
        attempts { at statusCode latencyMs error }
      }
    }
    ... on Refusal { code message }
  }
}"""
# Each player's notifications with every field a message's body carries (no
# YourDeadlineSoon: its deadline is non-null, YourTurn's nullable, and one
# selection cannot take both; an untimed game never warns).
NOTICES = """
{ me { id notifications(afterSeq: 0, first: 100) { hasMore notifications { seq gameId notice {
  __typename
  ... on YourTurn { gameId seat deadline }
  ... on YourInvitation { gameId hostId }
  ... on YourGameStarted { gameId seat }
  ... on YourGameEnded { gameId seat score place won }
  ... on YourRematch { gameId newGameId }
  ... on YourTurnTimedOut { gameId seat }
  ... on YourSeatTakenOver { gameId seat }
} } } } }"""
KINDS = [  # every kind: each notification is a message
    "YOUR_TURN",
    "YOUR_INVITATION",
    "YOUR_GAME_STARTED",
    "YOUR_GAME_ENDED",
    "YOUR_REMATCH",
    "YOUR_DEADLINE_SOON",
    "YOUR_TURN_TIMED_OUT",
    "YOUR_SEAT_TAKEN_OVER",
]


# ---------------------------------------------------------------- helpers
@dataclass(frozen=True)
class Player:
    """A person whose token the backend issued for its own id (``external``)."""

    person: Person
    external: str


async def until(probe: Callable[[], Awaitable[T | None]], what: str, timeout: float = STEP) -> T:
    """``probe()`` until it gives something (not None, not False), within
    ``timeout`` seconds; else fail, saying what was awaited."""
    deadline = time.monotonic() + timeout
    while True:
        found = await probe()
        if found is not None and found is not False:
            return found
        assert time.monotonic() < deadline, f"not within {timeout:g} s: {what}"
        await asyncio.sleep(POLL)


async def issue(api: Api, key: str, external: str, name: str) -> Player:
    """The backend signs its user in: a token for its external id."""
    made = await api.ok("issuePlayerToken", ISSUE, {"x": external, "n": name}, key)
    assert made["__typename"] == "IssuedPlayerToken" and made["created"], made
    ISSUED_TOKENS.append(made["token"])
    return Player(Person(name, made["player"]["id"], made["token"]), external)


async def create_endpoint(api: Api, key: str, url: str) -> tuple[str, str]:
    """The endpoint's id and its secret (shown this once)."""
    made = await api.ok("r", CREATE, {"url": url, "kinds": KINDS}, key)
    assert made["__typename"] == "WebhookEndpointSecret", made
    assert made["endpoint"]["url"] == url and made["endpoint"]["disabledAt"] is None, made
    secret: str = made["secret"]
    assert secret.startswith("whsec_"), made
    ISSUED_TOKENS.append(secret)  # never in a server's log
    return made["endpoint"]["id"], secret


async def messages(api: Api, key: str, endpoint: str) -> dict[str, dict[str, Any]]:
    """The endpoint's whole delivery log, by message id."""
    out: dict[str, dict[str, Any]] = {}
    after: str | None = None
    while True:
        page = await api.ok("r", MESSAGES, {"id": endpoint, "after": after}, key)
        out.update((m["id"], m) for m in page["messages"])
        if not page["hasMore"]:
            return out
        after = page["endCursor"]


async def told(api: Api, players: Sequence[Player]) -> dict[tuple[str, int], dict[str, Any]]:
    """Every notification of these players, as each reads their own, by
    (player id, seq)."""
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for p in players:
        me = (await api.data(NOTICES, token=p.person.token))["me"]
        page = me["notifications"]
        assert me["id"] == p.person.id and not page["hasMore"], page
        for n in page["notifications"]:
            out[(p.person.id, n["seq"])] = n
    return out


async def lobby(api: Api, players: Sequence[Player]) -> str:
    """A three-seat game: the first player hosts, the others join (not started)."""
    host = players[0].person
    game_id = await api.create_game(host, seatCount=3, practice=True, seed="e2e-webhooks")
    for p in players[1:]:
        await api.join(p.person, game_id)
    return game_id


async def play(
    api: Api, players: Sequence[Player], game_id: str, rng: random.Random, moves: int | None
) -> int:
    """Whoever is to act plays a listed action, ``moves`` times (None: to the
    game's end); how many were played."""
    by_id = {p.person.id: p.person for p in players}
    done = 0
    deadline = time.monotonic() + 60
    while moves is None or done < moves:
        assert time.monotonic() < deadline, f"the game did not end ({done} moves)"
        game = await api.game(game_id, players[0].person.token)
        if game["status"] == "FINISHED":
            return done
        seat = game["table"]["toAct"]
        if seat is None:
            await asyncio.sleep(POLL)
            continue
        who = by_id[game["seats"][seat]["playerId"]]
        actions = (await api.game(game_id, who.token))["viewer"]["legalActions"]
        if actions:
            await api.act(who, game_id, rng.choice(actions))
            done += 1
    return done


def check_log(log: Path, secret: str) -> None:
    """No sign of failure, no token, never the endpoint's secret."""
    text = log.read_text(errors="replace")
    for sign in (*SIGNS_OF_FAILURE, *ISSUED_TOKENS, secret):
        assert sign not in text, f"the server log shows {sign!r}"


def check_delivered(
    rx: Receiver,
    log: dict[str, dict[str, Any]],
    notices: dict[tuple[str, int], dict[str, Any]],
    players: Sequence[Player],
) -> None:
    """Every notification is a message of the log, every message taken by
    the receiver, verified, with the log's exact body; exactly the log's
    webhook-ids, once each after dropping repeats."""
    assert rx.refused == [], rx.refused
    assert {(m["playerId"], m["seq"]) for m in log.values()} == set(notices)
    assert {m["status"] for m in log.values()} == {"DELIVERED"}, log
    assert rx.ids() <= set(log), f"unknown webhook-ids: {rx.ids() - set(log)}"
    taken: dict[str, Delivery] = {}
    for d in rx.accepted():
        taken.setdefault(d.webhook_id, d)  # the receiver drops repeats by webhook-id
    assert set(taken) == set(log), (
        f"missing {sorted(set(log) - set(taken))}, unknown {sorted(set(taken) - set(log))}"
    )
    external = {p.person.id: p.external for p in players}
    for webhook_id, d in taken.items():
        m = log[webhook_id]
        assert d.raw == m["payload"].encode(), (d.raw, m["payload"])
        data = d.body["data"]
        assert d.body["type"] == "notification." + m["kind"].lower()
        assert data["playerId"] == m["playerId"] and data["seq"] == m["seq"], data
        assert data["externalId"] == external[m["playerId"]], data
        assert data["kind"] == m["kind"], data
        n = notices[(m["playerId"], m["seq"])]
        assert data["notice"] == n["notice"] and n["gameId"] == m["gameId"], (data, n)
    for m in log.values():
        last = m["attempts"][-1]
        assert last["statusCode"] == 200 and last["error"] is None, m


def describe(log: dict[str, dict[str, Any]]) -> str:
    return json.dumps(
        {
            i: [m["status"], [(a["statusCode"], a["error"]) for a in m["attempts"]]]
            for i, m in log.items()
        },
        indent=1,
    )


def timed_out(attempt: dict[str, Any]) -> bool:
    return attempt["statusCode"] is None and str(attempt["error"]).startswith(TIMED_OUT)


def unanswered(attempt: dict[str, Any]) -> bool:
    """No answer and no timeout: the connection was refused (or cut)."""
    return attempt["statusCode"] is None and not timed_out(attempt)


# ---------------------------------------------------------------- one instance
async def test_every_notification_reaches_a_receiver_that_fails_hangs_and_goes_down(
    tmp_path: Path,
) -> None:
    database = f"sqlite:///{tmp_path}/webhooks.sqlite3"
    env = {**ALLOWED, "MMK_WEBHOOK_TIMEOUT": "1", "MMK_WEBHOOK_FIRST_RETRY": "1"}
    async with Receiver() as rx:
        with own_server(tmp_path, database, **env) as (srv, proc):
            rx.senders = [proc.pid]  # an answer after the server gave up is no delivery
            key = new_key(database, "App backend", "players:write,webhooks")
            async with httpx.AsyncClient(
                base_url=srv.base_url, timeout=STEP, trust_env=False
            ) as http:
                api = Api(http)
                # loopback is allowed here; a link-local address still is not
                metadata = {"url": "http://169.254.169.254/latest/meta-data", "kinds": KINDS}
                refused = (await api.data(CREATE, metadata, key))["r"]
                assert refused["__typename"] == "Refusal" and refused["code"] == "BAD_INPUT"
                endpoint, secret = await create_endpoint(api, key, rx.url)
                rx.secret = secret
                names = ("Ann", "Bob", "Cy")
                players = [await issue(api, key, f"app-user-{n}", n) for n in names]
                game_id = await lobby(api, players)
                rng = random.Random("webhooks")

                # 500 to each message's first try; no answer to its second
                rx.behaviour = lambda _id, nth: "fail" if nth == 1 else "hang"
                await api.start(players[0].person, game_id)
                first = set(await messages(api, key, endpoint))
                assert first, "the start told nobody"

                async def a_timeout() -> bool:
                    log = await messages(api, key, endpoint)
                    return any(any(map(timed_out, log[i]["attempts"])) for i in first)

                await until(a_timeout, "a 500, then a timeout")

                # down (a delivery still hung is cut): what is made now is refused
                await rx.go_down()
                rx.behaviour = always("ok")
                second: set[str] = set()
                for _ in range(10):
                    await play(api, players, game_id, rng, 1)
                    second = set(await messages(api, key, endpoint)) - first
                    if second:
                        break
                assert second, "ten moves told nobody"

                async def refused_once() -> bool:
                    log = await messages(api, key, endpoint)
                    return any(any(map(unanswered, log[i]["attempts"])) for i in second)

                await until(refused_once, "a try refused while the receiver is down")

                # back: the game goes on to its end, everything is delivered
                await rx.come_back()
                await play(api, players, game_id, rng, None)
                notices = await told(api, players)

                async def all_delivered() -> dict[str, dict[str, Any]] | None:
                    log = await messages(api, key, endpoint)
                    done = {m["status"] for m in log.values()} == {"DELIVERED"}
                    came = rx.ids("ok") >= set(log)
                    return log if done and came and len(log) == len(notices) else None

                log = await until(all_delivered, "every message delivered", timeout=45)
                endpoints = (await api.data(ENDPOINTS, token=key))["webhookEndpoints"]
                assert [(e["id"], e["disabledAt"]) for e in endpoints] == [(endpoint, None)]

    check_log(srv.log, secret)
    check_delivered(rx, log, notices, players)
    assert {"YOUR_GAME_STARTED", "YOUR_TURN", "YOUR_GAME_ENDED"} <= {
        m["kind"] for m in log.values()
    }
    # The log shows each failure as the receiver dealt it: the start's
    # messages failed twice or more (a 500, then a timeout, or a refusal
    # once the receiver was down) before their 200; a message made while it
    # was down was refused first.
    for i in first:
        attempts = log[i]["attempts"]
        assert len(attempts) >= 3 and all(a["statusCode"] != 200 for a in attempts[:-1]), attempts
        assert [d.behaviour for d in rx.deliveries if d.webhook_id == i][-1] == "ok"
    for i in second:
        attempts = log[i]["attempts"]
        assert unanswered(attempts[0]) and len(attempts) >= 2, attempts
        assert [d.behaviour for d in rx.deliveries if d.webhook_id == i][-1] == "ok"
    tries = [a for i in first for a in log[i]["attempts"]]
    assert {(a["statusCode"], a["error"]) for a in tries if a["statusCode"]} == {
        (500, "HTTP 500"),
        (200, None),
    }, describe(log)
    assert any(map(timed_out, tries)), describe(log)
    assert rx.ids("fail") <= first and rx.ids("hang") <= first, "a late message was failed"
    assert len(log) > len(first) + len(second), "no message made after the receiver recovered"


# ---------------------------------------------------------------- two instances
LEASE_TIMEOUT = 2  # MMK_WEBHOOK_TIMEOUT of the two instances
LEASE = 2 * LEASE_TIMEOUT + 5  # seconds a delivery's lease lasts (WebhookDeliverer.round)


@pytest.mark.services
async def test_a_killed_instance_s_deliveries_are_made_by_the_other_once_its_lease_ends(
    database_url: str, redis_url: str, tmp_path: Path
) -> None:
    env = {
        **ALLOWED,
        "MMK_WEBHOOK_TIMEOUT": str(LEASE_TIMEOUT),
        "MMK_WEBHOOK_FIRST_RETRY": "1",
    }
    async with Receiver() as rx:
        with (
            fresh_backend(database_url, redis_url, "webhooks-kill", **env) as backend,
            cluster(backend, tmp_path) as (a, b),
        ):
            key = new_key(backend.database_url, "App backend", "players:write,webhooks")
            async with (
                httpx.AsyncClient(base_url=a.base_url, timeout=STEP, trust_env=False) as ha,
                httpx.AsyncClient(base_url=b.base_url, timeout=STEP, trust_env=False) as hb,
            ):
                apis = {a.pid: Api(ha), b.pid: Api(hb)}
                instances = {a.pid: a, b.pid: b}
                endpoint, secret = await create_endpoint(apis[a.pid], key, rx.url)
                rx.secret = secret
                rx.senders = [a.pid, b.pid]
                names = ("Dee", "Eli", "Fay")
                players = [await issue(apis[b.pid], key, f"app-user-{n}", n) for n in names]
                game_id = await lobby(apis[a.pid], players)

                # the receiver hangs: the first instance to deliver dies mid-wait
                killed: list[tuple[Instance, Delivery]] = []

                def kill(d: Delivery) -> None:
                    if not killed and d.pid in instances:
                        instances[d.pid].kill()
                        killed.append((instances[d.pid], d))

                rx.on_hang = kill
                rx.behaviour = always("hang")
                await apis[a.pid].start(players[0].person, game_id)

                async def a_kill() -> bool:
                    return bool(killed)

                await until(a_kill, "a delivery from one of the instances")
                victim, hung = killed[0]
                rx.on_hang = None
                rx.behaviour = always("ok")
                rx.release_hung()
                survivor = b if victim is a else a
                api = apis[survivor.pid]

                # the game goes on on the survivor meanwhile
                await play(api, players, game_id, random.Random("webhooks-kill"), 6)
                notices = await told(api, players)

                async def all_delivered() -> dict[str, dict[str, Any]] | None:
                    log = await messages(api, key, endpoint)
                    done = {m["status"] for m in log.values()} == {"DELIVERED"}
                    came = rx.ids("ok") >= set(log)
                    return log if done and came and len(log) == len(notices) else None

                log = await until(all_delivered, "every message delivered", timeout=LEASE + 20)

    check_log(victim.server.log, secret)
    check_log(survivor.server.log, secret)
    check_delivered(rx, log, notices, players)
    assert {d.pid for d in rx.accepted()} == {survivor.pid}, "a dead instance delivered"
    # The message the dead instance was posting waited for its lease to run
    # out (the other instance's rounds come every second): its try left no
    # trace in the log, the survivor's came after the lease.
    after_lease = hung.at + LEASE - 3  # the lease began just before the post came
    taken = next(d for d in rx.accepted() if d.webhook_id == hung.webhook_id)
    assert taken.pid == survivor.pid and taken.at >= after_lease, (taken, hung)
    attempts = log[hung.webhook_id]["attempts"]
    assert all(_epoch(a["at"]) >= after_lease for a in attempts), describe(log)


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


# ---------------------------------------------------------------- the SSRF guard
async def test_a_server_without_allowed_networks_refuses_private_endpoints(
    tmp_path: Path,
) -> None:
    database = f"sqlite:///{tmp_path}/guard.sqlite3"
    async with Receiver() as rx:
        with own_server(tmp_path, database, MMK_WEBHOOK_ALLOWED_NETWORKS="") as (srv, _):
            key = new_key(database, "App backend", "webhooks")
            async with httpx.AsyncClient(
                base_url=srv.base_url, timeout=STEP, trust_env=False
            ) as http:
                api = Api(http)
                for url in (
                    rx.url,
                    f"http://localhost:{rx.port}/hooks",
                    f"http://[::1]:{rx.port}/hooks",
                    "http://10.1.2.3/hooks",
                    "http://169.254.169.254/latest/meta-data",
                    "http://[::ffff:127.0.0.1]/hooks",
                ):
                    made = (await api.data(CREATE, {"url": url, "kinds": KINDS}, key))["r"]
                    assert made["__typename"] == "Refusal" and made["code"] == "BAD_INPUT", (
                        url,
                        made,
                    )
                guest = await api.new_person("Guest")  # a player's token is no service key
                denied = await api.raw(CREATE, {"url": rx.url, "kinds": KINDS}, guest.token)
                assert denied["errors"][0]["extensions"]["code"] == "FORBIDDEN", denied
                assert (await api.data(ENDPOINTS, token=key))["webhookEndpoints"] == []

                # A name is checked once resolved, at each delivery: "127.1" is
                # no address literal to the URL check, but resolves to 127.0.0.1.
                named = {"url": f"http://127.1:{rx.port}/hooks", "kinds": KINDS}
                made = (await api.data(CREATE, named, key))["r"]
                if made["__typename"] == "Refusal":  # refused at once: as good
                    assert made["code"] == "BAD_INPUT", made
                else:
                    ISSUED_TOKENS.append(made["secret"])
                    endpoint = made["endpoint"]["id"]
                    guests = [Player(await api.new_person(n), "") for n in ("Gus", "Hal", "Ida")]
                    game_id = await lobby(api, guests)
                    await api.start(guests[0].person, game_id)

                    async def refused_address() -> bool:
                        log = await messages(api, key, endpoint)
                        return bool(log) and all(
                            m["status"] == "PENDING"
                            and m["attempts"]
                            and all(
                                a["statusCode"] is None and "refused address" in a["error"]
                                for a in m["attempts"]
                            )
                            for m in log.values()
                        )

                    await until(refused_address, "each try refused: 127.1 is loopback")
    check_log(srv.log, "whsec_")
    assert rx.deliveries == [] and rx.refused == []
