"""Scale-out, end to end: several ``mmk serve`` processes on one PostgreSQL
database and one Redis serve the same games (docs/operations.md "Running",
docs/operations.md "Scaling").

The instances (``tests/e2e/cluster.py``) run on a fresh PostgreSQL database
and a bus channel prefix of their own, so runs on a shared Redis never
collide: a pair A and B for the module, and instances of their own for the
tests that kill one, restart Redis (a private ``redis-server`` on a free
port, so the machine's Redis is never stopped) or run two workers. The
instances are always stopped, and their logs must show no traceback, no
token and no private message text.
Streams are checked on the raw WebSocket frames: each subscriber got every
event of its audience exactly once, in order, as the log (read over HTTP
with the same token) has it, and nothing of another audience (hand cards
before they are public, message texts).
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from api.graphql.player_cache import TTL
from domain.channels import game_channel
from tests.e2e.audiences import first_seq_with, framed, leaks, public_at
from tests.e2e.client import (
    CHANGE,
    ISSUED_TOKENS,
    NEW_PLAYER,
    SECRET_PREFIX,
    Api,
    Person,
    action_document,
    metric,
)
from tests.e2e.cluster import Instance, cluster, fresh_backend
from tests.e2e.play import (
    EVENT_TIMEOUT,
    POLL,
    Seen,
    assert_complete,
    assert_quiet,
    event_of,
    new_game,
    read_until,
    subscribe_events,
    together,
)
from tests.e2e.wsclient import (
    LEGACY_WS,
    TRANSPORT_WS,
    GraphQLWebSocket,
    Operation,
    OperationEnded,
)
from tests.integration.redis_support import PrivateRedis

pytestmark = [pytest.mark.e2e, pytest.mark.services, pytest.mark.timeout(90)]

STEP_TIMEOUT = 15.0  # seconds for any bounded wait of these tests
GAME_TIMEOUT = 60.0  # seconds for a whole scenario
LOBBY = "subscription { lobby { gameId status seatsTaken } }"


# ---------------------------------------------------------------- set-up
@dataclass
class Node:
    """One server instance and an HTTP client to it."""

    instance: Instance
    api: Api

    @property
    def name(self) -> str:
        return self.instance.name

    @property
    def ws_url(self) -> str:
        return self.instance.ws_url


@asynccontextmanager
async def nodes(instances: Sequence[Instance]) -> AsyncIterator[list[Node]]:
    async with AsyncExitStack() as stack:
        out = []
        for inst in instances:
            http = await stack.enter_async_context(
                httpx.AsyncClient(base_url=inst.base_url, timeout=STEP_TIMEOUT, trust_env=False)
            )
            out.append(Node(inst, Api(http)))
        yield out


@pytest.fixture(scope="module")
def shared_pair(
    database_url: str, redis_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[list[Instance]]:
    """Instances A and B on the machine's Redis (a prefix of their own) and
    a fresh database, for the tests that leave them running. No per-player
    caps: the twins test makes 15 games and 15 packs with one player (the
    caps have tests of their own, docs/decisions/0051)."""
    no_caps = {"MMK_MAX_OPEN_GAMES": "0", "MMK_BOOSTER_PACKS_PER_DAY": "0"}
    with (
        fresh_backend(database_url, redis_url, "pair", **no_caps) as backend,
        cluster(backend, tmp_path_factory.mktemp("pair")) as pair,
    ):
        yield pair


# ---------------------------------------------------------------- streams
@dataclass
class Follower:
    """One ``gameEvents`` subscriber: who, where, and what it got (over one
    or more connections, when it had to reconnect)."""

    name: str
    token: str | None
    sockets: list[GraphQLWebSocket] = field(default_factory=list)
    op: Operation | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    where: list[str] = field(default_factory=list)
    silence: float = EVENT_TIMEOUT  # the longest wait for a next event

    @property
    def last_seq(self) -> int:
        return self.events[-1]["seq"] if self.events else 0

    def frames(self) -> list[tuple[int, str]]:
        return [f for ws in self.sockets for f in framed(ws)]

    async def read_to_end(self) -> None:
        await self.read_to(None)

    async def read_to(self, seq: int | None) -> None:
        """Events until ``seq`` (None: the game's end); a silence of
        ``EVENT_TIMEOUT`` fails, naming the follower."""
        assert self.op is not None
        try:
            if seq is None:
                await read_until(self.op, self.events, silence=self.silence)
            else:
                stop = lambda e: e["seq"] >= seq  # noqa: E731
                await read_until(self.op, self.events, stop, silence=self.silence)
        except TimeoutError:
            raise AssertionError(
                f"{self.name} ({self.where}) waited {self.silence} s for the event after "
                f"seq {self.last_seq}"
            ) from None


async def follow(
    stack: AsyncExitStack,
    node: Node,
    name: str,
    who: Person | None,
    game_id: str,
    protocol: str = TRANSPORT_WS,
    follower: Follower | None = None,
) -> Follower:
    """Subscribe ``who`` (None: anonymous) on ``node``; a given ``follower``
    resumes after the last seq it got."""
    f = follower or Follower(name, who.token if who else None)
    ws = GraphQLWebSocket(node.ws_url, protocol)
    await ws.connect(None if who is None else {"authorization": f"Bearer {who.token}"})
    stack.push_async_callback(ws.close)
    f.sockets.append(ws)
    f.where.append(node.name)
    f.op = await subscribe_events(ws, game_id, f.last_seq)
    return f


# ---------------------------------------------------------------- moves
def no_delivery(actions: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    """Any listed action but delivering a message (declining when nothing
    else is listed): a message's readers stay its sender and the Rat."""
    plays = [a for a in actions if a["kind"] not in ("DELIVER_MESSAGE", "DECLINE_MESSAGE")]
    declines = [a for a in actions if a["kind"] == "DECLINE_MESSAGE"]
    return rng.choice(plays or declines or actions)


async def play_moves(
    via: Sequence[Node],
    people: Sequence[Person],
    game_id: str,
    rng: random.Random,
    seen: dict[int, Seen],
    moves: int | None = None,
    first: int = 0,
) -> int:
    """People's moves, each through the next node of ``via`` in turn (the
    game and the mover's legal actions read through that node too), until
    the game ends or ``moves`` were made; bots' turns are waited out.
    Returns the number of moves made."""
    made = 0
    deadline = time.monotonic() + GAME_TIMEOUT
    while moves is None or made < moves:
        assert time.monotonic() < deadline, f"game {game_id} is stuck"
        node = via[(first + made) % len(via)]
        game = await node.api.game(game_id, people[0].token)
        if game["status"] == "FINISHED":
            return made
        seat = game["table"]["toAct"]
        if seat is None or seat >= len(people):  # a bot's turn
            await asyncio.sleep(POLL)
            continue
        view = game if seat == 0 else await node.api.game(game_id, people[seat].token)
        viewer = view["viewer"]
        seen[seat].hands.update(c["id"] for c in viewer["hand"])
        seen[seat].peeks.update(c["id"] for c in viewer["decisionCards"])
        if view["table"]["toAct"] != seat:
            continue  # a bot moved in between
        await node.api.act(people[seat], game_id, no_delivery(viewer["legalActions"], rng))
        seen[seat].moves += 1
        made += 1
    return made


async def final_views(
    api: Api, people: Sequence[Person], game_id: str, seen: dict[int, Seen]
) -> None:
    """What each person holds at the end joins what they were seen holding."""
    for seat, person in enumerate(people):
        viewer = (await api.game(game_id, person.token))["viewer"]
        seen[seat].hands.update(c["id"] for c in viewer["hand"])
        seen[seat].peeks.update(c["id"] for c in viewer["decisionCards"])


async def wait_seq(api: Api, game_id: str, seq: int) -> dict[str, Any]:
    deadline = time.monotonic() + STEP_TIMEOUT
    while True:
        game = await api.game(game_id)
        if game["lastSeq"] >= seq:
            return game
        assert time.monotonic() < deadline, f"game {game_id} stuck at seq {game['lastSeq']}"
        await asyncio.sleep(POLL)


PLAY_CARD = 'mutation="playCard"'  # the label of the moves counter


async def wait_ready(node: Node, ready: bool) -> dict[str, Any]:
    """Poll /readyz until it says ``ready`` (200) or not (503)."""
    deadline = time.monotonic() + STEP_TIMEOUT
    while True:
        r = await node.api.http.get("/readyz")
        if (r.status_code == 200) is ready:
            body: dict[str, Any] = r.json()
            return body
        assert time.monotonic() < deadline, f"{node.name} /readyz still {r.status_code}: {r.text}"
        await asyncio.sleep(0.05)


# ---------------------------------------------------------------- checks
async def check_streams(
    api: Api,
    game_id: str,
    followers: Sequence[Follower],
    people: Sequence[Person],
    seen: dict[int, Seen],
    readers: dict[str, set[int]] | None = None,
) -> int:
    """Every follower got its audience's whole log, once, in order, and
    nothing of another audience. ``readers``: each private message text and
    the seats that may read it. Returns the game's last seq."""
    game = await api.game(game_id)
    assert game["status"] == "FINISHED", game["status"]
    last = game["lastSeq"]
    seats = {p.token: seat for seat, p in enumerate(people)}
    logs: dict[str | None, list[dict[str, Any]]] = {}
    for f in followers:
        assert_complete(f.events, last, game_id)
        if f.token not in logs:
            logs[f.token] = await api.events(game_id, f.token)
        assert f.events == logs[f.token], f"{f.name} ({f.where}) is not its audience's log"
        assert f.op is not None, f.name
        assert not f.op.errors, (f.name, f.op.errors)

    # The public projection: no hand, no given card, no face-down card, no text.
    public_log = await api.events(game_id)
    for e in public_log:
        d = e["data"]
        assert "hand" not in d and "cards" not in d and "text" not in d, e
        if e["type"] in ("CardGiven", "CardTaken"):
            assert "card" not in d, e
        if e["type"] in ("CardPlayed", "SecondCardPlayed") and d["faceDown"]:
            assert d["card"] is None, e

    seat_streams = [f.events for f in followers if f.token in seats]
    public_from = public_at(seat_streams)
    secret = set().union(*(s.hands | s.peeks for s in seen.values()))
    assert secret - set(public_from), "some hand cards stay hidden to the end"
    for f in followers:
        frames = f.frames()
        seat = seats.get(f.token) if f.token is not None else None
        if seat is None:  # a spectator: nobody's hand, no message text
            assert f.events == public_log, f.name
            assert leaks(frames, secret, public_from) == [], f.name
            assert all(SECRET_PREFIX not in raw for _, raw in frames), f.name
            continue
        own = seen[seat].hands | seen[seat].peeks
        others = set().union(*(s.hands | s.peeks for t, s in seen.items() if t != seat))
        assert leaks(frames, others - own, public_from) == [], f.name
        for text, allowed in (readers or {}).items():
            got = first_seq_with(frames, text)
            if seat in allowed:
                assert got is not None, f"{f.name} never got its message {text}"
            else:
                assert got is None, f"{f.name} got another audience's message at seq {got}"
    return int(last)


# ---------------------------------------------------------------- 1. fan-out
async def test_moves_through_both_instances_reach_every_audience_on_both(
    shared_pair: list[Instance],
) -> None:
    """Seats and spectators subscribed on A and on B; the lobby made on B,
    the game started on A, moves made through A and B alternately, private
    messages sent through both: every subscriber gets exactly its own
    audience's stream, whichever instance it is on."""
    async with nodes(shared_pair) as (a, b), AsyncExitStack() as stack:
        lobby_ws = GraphQLWebSocket(a.ws_url, LEGACY_WS)
        await lobby_ws.connect(None)
        stack.push_async_callback(lobby_ws.close)
        lobby = await lobby_ws.subscribe(LOBBY)
        game_id, people = await new_game(b.api, "fanout", 4, [], ratSeat=2)
        sam = await b.api.new_person("fanout-sam")  # a player with no seat
        followers = [
            await follow(stack, a, "seat0@A", people[0], game_id),
            await follow(stack, a, "seat1@A", people[1], game_id, LEGACY_WS),
            await follow(stack, b, "seat2@B", people[2], game_id),
            await follow(stack, b, "seat3@B", people[3], game_id, LEGACY_WS),
            await follow(stack, b, "seat0@B", people[0], game_id, LEGACY_WS),
            await follow(stack, a, "anon@A", None, game_id),
            await follow(stack, b, "anon@B", None, game_id, LEGACY_WS),
            await follow(stack, a, "sam@A", sam, game_id, LEGACY_WS),
            await follow(stack, b, "sam@B", sam, game_id),
        ]
        moves_before = [
            await metric(n.api.http, "mmk_moves_accepted_total", 'mutation="playCard"')
            for n in (a, b)
        ]
        await a.api.start(people[0], game_id)
        # Trick 1's message window (the Rat, a person, leads): one message
        # through each instance. Nobody delivers them, so their readers stay
        # the sender and the Rat.
        marker = f"{SECRET_PREFIX}{uuid.uuid4()}"
        readers = {f"{marker}-0to1": {0, 2}, f"{marker}-3to0": {3, 2}}
        await b.api.send_message(people[0], game_id, 1, f"{marker}-0to1")
        await a.api.send_message(people[3], game_id, 0, f"{marker}-3to0")

        seen = {seat: Seen() for seat in range(4)}
        made, *_ = await together(
            play_moves([a, b], people, game_id, random.Random("fanout"), seen),
            *(f.read_to_end() for f in followers),
            timeout=GAME_TIMEOUT,
        )
        await asyncio.gather(*(assert_quiet(f.op) for f in followers if f.op))
        await final_views(a.api, people, game_id, seen)
        last = await check_streams(b.api, game_id, followers, people, seen, readers)
        lobby_updates = []
        with suppress(TimeoutError):
            while True:
                update = (await lobby.next(0.5))["data"]["lobby"]
                if update["gameId"] == game_id:
                    lobby_updates.append(update)
                    if update["status"] == "FINISHED":
                        break
        moves_after = [
            await metric(n.api.http, "mmk_moves_accepted_total", 'mutation="playCard"')
            for n in (a, b)
        ]

    assert made > 20 and last > made
    # The same audience on both instances got the same frames' events.
    by_name = {f.name: f.events for f in followers}
    assert by_name["seat0@A"] == by_name["seat0@B"]
    assert by_name["anon@A"] == by_name["anon@B"] == by_name["sam@A"] == by_name["sam@B"]
    assert by_name["seat0@A"] != by_name["seat1@A"], "seats get their own projections"
    # Both instances took moves; the lobby made on B was followed on A.
    assert all(after > before for before, after in zip(moves_before, moves_after, strict=True))
    statuses = [u["status"] for u in lobby_updates]
    assert statuses[0] == "LOBBY" and "RUNNING" in statuses and statuses[-1] == "FINISHED", statuses
    assert [u["seatsTaken"] for u in lobby_updates[:4]] == [1, 2, 3, 4], lobby_updates


# ---------------------------------------------------------------- 2. races
def move_document(action: dict[str, Any]) -> str:
    return action_document(
        action["mutation"],
        action["arguments"],
        {"expectedVersion": "Int", "idempotencyKey": "String"},
    )


async def send_move(
    api: Api,
    person: Person,
    game_id: str,
    action: dict[str, Any],
    version: int | None = None,
    key: str | None = None,
) -> dict[str, Any]:
    """The move's result, ``GameChange`` or ``Refusal`` (never a GraphQL error)."""
    variables = {
        "gameId": game_id,
        "expectedVersion": version,
        "idempotencyKey": key,
        **action["arguments"],
    }
    data = await api.data(move_document(action), variables, person.token)
    result: dict[str, Any] = data[action["mutation"]]
    return result


async def test_racing_moves_through_both_instances_one_wins_the_other_is_refused(
    shared_pair: list[Instance],
) -> None:
    """Each move of a game is sent twice at once, through A and through B:
    with ``expectedVersion`` (the same move, or two different ones) the
    loser gets ``CONFLICT`` or ``STALE_STATE``; without it, the same card
    can only be played once; with one ``idempotencyKey``, the move is made
    once and both calls get its result. The log stays gapless and every
    subscriber gets each event once."""
    async with nodes(shared_pair) as (a, b), AsyncExitStack() as stack:
        game_id, people = await new_game(a.api, "race", 3, [], ratSeat=0)
        followers = [
            await follow(stack, a, "seat0@A", people[0], game_id),
            await follow(stack, b, "seat1@B", people[1], game_id, LEGACY_WS),
            await follow(stack, b, "anon@B", None, game_id),
            await follow(stack, a, "anon@A", None, game_id, LEGACY_WS),
        ]
        await b.api.start(people[0], game_id)
        started = (await a.api.game(game_id))["version"]
        rng = random.Random("race")
        refusals: dict[str, int] = {}
        rounds = replays = 0

        async def race() -> None:
            nonlocal rounds, replays
            while True:
                game = await a.api.game(game_id, people[0].token)
                if game["status"] == "FINISHED":
                    return
                seat = game["table"]["toAct"]
                view = await b.api.game(game_id, people[seat].token)
                version = view["version"]
                actions = view["viewer"]["legalActions"]
                mine = no_delivery(actions, rng)
                variant = rounds % 4
                if variant == 2 and mine["kind"] not in ("PLAY_CARD", "DISCARD_AND_PLAY"):
                    variant = 0  # only a card is sure to be gone once played
                other = no_delivery(actions, rng) if variant == 1 else mine
                expected = (
                    version if variant in (0, 1) or (variant == 3 and rounds % 8 == 7) else None
                )
                key = str(uuid.uuid4()) if variant == 3 else None
                first, second = (a, b) if rounds % 2 else (b, a)
                results = await asyncio.gather(
                    send_move(first.api, people[seat], game_id, mine, expected, key),
                    send_move(second.api, people[seat], game_id, other, expected, key),
                )
                won = [r for r in results if r["__typename"] == "GameChange"]
                lost = [r for r in results if r["__typename"] == "Refusal"]
                if variant == 3:  # one move; the other call replays its result
                    assert len(won) == 2 and won[0] == won[1], (mine, results)
                    assert won[0]["version"] == version + 1, (version, won)
                    replays += 1
                    rounds += 1
                    continue
                assert len(won) == 1 and len(lost) == 1, (mine, other, expected, results)
                assert won[0]["version"] == version + 1, (version, won)
                codes = {"CONFLICT", "STALE_STATE"}
                if variant == 2:  # the card is gone, or the turn, or the game
                    codes = {"ILLEGAL_ACTION", "NOT_YOUR_TURN", "GAME_FINISHED"}
                assert lost[0]["code"] in codes, (mine, other, expected, results)
                refusals[lost[0]["code"]] = refusals.get(lost[0]["code"], 0) + 1
                rounds += 1

        await together(race(), *(f.read_to_end() for f in followers), timeout=GAME_TIMEOUT)
        await asyncio.gather(*(assert_quiet(f.op) for f in followers if f.op))
        game = await a.api.game(game_id)
        log_a, log_b = await a.api.events(game_id), await b.api.events(game_id)

    last = game["lastSeq"]
    assert rounds > 20, rounds
    assert game["version"] == started + rounds, "every race committed exactly one move"
    assert_complete(log_a, last, game_id)
    assert log_a == log_b
    for f in followers:
        assert_complete(f.events, last, game_id)
    assert sum(refusals.values()) + replays == rounds, (refusals, replays)
    assert refusals.get("CONFLICT", 0) > 0, f"no race reached the conditional save: {refusals}"
    print(f"\n{rounds} races: refusals {refusals}, {replays} replays of one idempotency key")


CREATE_KEYED = f"""
mutation($input: CreateGameInput!, $key: String) {{
  createGame(input: $input, idempotencyKey: $key) {{ {CHANGE} }}
}}"""
BOOSTER_KEYED = """
mutation($key: String) {
  openBoosterPack(idempotencyKey: $key) {
    __typename ... on BoosterPack { id } ... on Refusal { code message }
  }
}"""
TWINS = 15  # pairs of racing twins per operation


async def test_a_retry_racing_its_first_try_on_the_other_instance_gets_its_result(
    shared_pair: list[Instance],
) -> None:
    """A client's retry (the same ``idempotencyKey`` and input) sent through
    B while its first try is still running on A: both calls get the same
    result, and the change is made once, for ``createGame`` and
    ``openBoosterPack`` (game moves: the race test)."""
    async with nodes(shared_pair) as (a, b):
        host = await a.api.new_person("twins")
        for query, field in ((CREATE_KEYED, "createGame"), (BOOSTER_KEYED, "openBoosterPack")):
            for _ in range(TWINS):
                variables = {"input": {"seatCount": 3}, "key": str(uuid.uuid4())}
                if field == "openBoosterPack":
                    del variables["input"]
                first, retry = await asyncio.gather(
                    a.api.raw(query, variables, host.token), b.api.raw(query, variables, host.token)
                )
                assert first["data"] == retry["data"] and not first.get("errors"), (first, retry)
                assert first["data"][field]["__typename"] in ("GameChange", "BoosterPack"), first
        me = await b.api.data("{ me { collection(first: 100) { totalCount } } }", token=host.token)
        lobbies = await b.api.data(
            "{ games(status: LOBBY, first: 50) { ... on GameConnection {"
            " edges { node { hostId } } } } }"
        )
    assert me["me"]["collection"]["totalCount"] == TWINS, "each pack opened once"
    hosted = [e for e in lobbies["games"]["edges"] if e["node"]["hostId"] == host.id]
    assert len(hosted) == TWINS, "each game created once"


# ---------------------------------------------------------------- 3. Redis restarted
async def test_redis_restarted_mid_game_moves_commit_and_subscribers_catch_up(
    database_url: str, redis_url: str, tmp_path: Path
) -> None:
    """A private redis-server is stopped (by its pid) in the middle of a game
    and started again: moves (people's, through A and B, and a bot's) keep
    committing while it is away, /readyz says the bus is down, and every
    subscriber, including one that arrived during the outage, catches up
    with no gap and no duplicate."""
    private = PrivateRedis(tmp_path)
    private.start()
    try:
        with (
            fresh_backend(database_url, private.url, "redis-restart") as backend,
            cluster(backend, tmp_path) as pair,
        ):
            await _redis_restart(pair, private)
    finally:
        private.stop()


async def _redis_restart(pair: list[Instance], private: PrivateRedis) -> None:
    async with nodes(pair) as (a, b), AsyncExitStack() as stack:
        game_id, people = await new_game(a.api, "redis", 3, ["GREEDY"], ratSeat=0)
        followers = [
            await follow(stack, a, "seat0@A", people[0], game_id),
            await follow(stack, b, "seat1@B", people[1], game_id, LEGACY_WS),
            await follow(stack, a, "seat2@A", people[2], game_id, LEGACY_WS),
            await follow(stack, a, "anon@A", None, game_id),
            await follow(stack, b, "anon@B", None, game_id, LEGACY_WS),
        ]
        readers = [asyncio.create_task(f.read_to_end()) for f in followers]
        stack.callback(lambda: [t.cancel() for t in readers])
        await b.api.start(people[0], game_id)
        seen = {seat: Seen() for seat in range(3)}
        rng = random.Random("redis")
        await play_moves([a, b], people, game_id, rng, seen, moves=8)
        before = (await a.api.game(game_id))["lastSeq"]

        private.stop()  # by its pid
        down = await wait_ready(a, ready=False)
        assert down["bus"] == "down" and down["database"] == "up", down
        started = time.monotonic()
        made = await play_moves([b, a], people, game_id, rng, seen, moves=8)
        away = time.monotonic() - started
        during = (await b.api.game(game_id))["lastSeq"]
        assert made == 8 and during > before, "moves commit while Redis is away"
        assert away < 8 * 1.0, f"8 moves took {away:.1f} s: a move waits for Redis"
        late = await follow(stack, b, "late@B", None, game_id)  # arrives during the outage
        await late.read_to(during)  # the backlog, from the database
        followers.append(late)
        readers.append(asyncio.create_task(late.read_to_end()))

        private.start()
        for node in (a, b):
            await wait_ready(node, ready=True)
        await play_moves([a, b], people, game_id, rng, seen)
        async with asyncio.timeout(STEP_TIMEOUT):
            await asyncio.gather(*readers)
        await asyncio.gather(*(assert_quiet(f.op) for f in followers if f.op))
        await final_views(a.api, people, game_id, seen)
        await check_streams(a.api, game_id, followers, people, seen)
        reconnects = [await metric(n.api.http, "mmk_bus_reconnects_total") for n in (a, b)]
        failures = [await metric(n.api.http, "mmk_bus_publish_failures_total") for n in (a, b)]
    assert all(r >= 1 for r in reconnects), reconnects
    # Each instance made 4 of the 8 moves while Redis was away: each publish was kept.
    assert all(f >= 4 for f in failures), failures
    print(f"\n8 moves with Redis away took {away:.2f} s; publish failures {failures}")


# ---------------------------------------------------------------- 4. an instance killed
async def test_an_instance_killed_mid_game_its_clients_resume_on_the_other(
    database_url: str, redis_url: str, tmp_path: Path
) -> None:
    """Instance A is SIGKILLed in the middle of a people's game (its
    subscribers reconnect to B with ``afterSeq`` and miss nothing) and while
    it drives bots-only games (B's stalled-bot sweeper finishes them)."""
    with (
        fresh_backend(database_url, redis_url, "kill") as backend,
        cluster(backend, tmp_path) as pair,
    ):
        await _instance_killed(pair)


BOT_GAMES = 3
KILL_AT = 30  # seq of a bots-only game at which A dies


async def _instance_killed(pair: list[Instance]) -> None:
    async with nodes(pair) as (a, b), AsyncExitStack() as stack:
        game_id, people = await new_game(b.api, "kill", 3, [], ratSeat=1)
        followers = [
            await follow(stack, a, "seat0", people[0], game_id),
            await follow(stack, a, "seat1", people[1], game_id, LEGACY_WS),
            await follow(stack, b, "seat2", people[2], game_id),
            await follow(stack, a, "anon", None, game_id, LEGACY_WS),
            await follow(stack, b, "anon@B", None, game_id),
        ]
        await a.api.start(people[0], game_id)
        seen = {seat: Seen() for seat in range(3)}
        rng = random.Random("kill")
        await together(
            play_moves([a, b], people, game_id, rng, seen, moves=10),
            *(f.read_to(10) for f in followers),
            timeout=GAME_TIMEOUT,
        )
        await wait_seq(b.api, game_id, 10)

        # Bots-only games, started on A: A's bot tasks drive them.
        host = await b.api.new_person("kill-host")
        bot_games = []
        for g in range(BOT_GAMES):
            bot_game = await b.api.create_game(
                host, seatCount=8, takeSeat=False, seed=f"kill-{g}", practice=True
            )
            for s in range(8):
                await b.api.add_bot(host, bot_game, "GREEDY" if s % 2 else "RANDOM")
            bot_games.append(bot_game)
        watchers = [
            await follow(stack, b, f"bots{g}@B", None, gid) for g, gid in enumerate(bot_games)
        ]
        for w in watchers:  # after A dies they wait for B's stalled-bot sweep (3 s idle +
            w.silence = 3 * EVENT_TIMEOUT  # a 2 s round), longer on a loaded machine
        watching = [asyncio.create_task(w.read_to_end()) for w in watchers]
        stack.callback(lambda: [t.cancel() for t in watching])
        for gid in bot_games:
            await a.api.start(host, gid)
        deadline = time.monotonic() + STEP_TIMEOUT
        while all(w.last_seq < KILL_AT for w in watchers):
            assert time.monotonic() < deadline, "the bots-only games do not move"
            assert not any(t.done() for t in watching), [t.exception() for t in watching]
            await asyncio.sleep(0.001)
        # A person's move is on its way to A when A dies: committed or not,
        # the retry through B with the same idempotency key makes it once.
        game = await b.api.game(game_id)
        mover = people[game["table"]["toAct"]]
        view = (await b.api.game(game_id, mover.token))["viewer"]
        seen[view["seat"]].hands.update(c["id"] for c in view["hand"])
        move = no_delivery(view["legalActions"], rng)
        key = str(uuid.uuid4())
        in_flight = asyncio.create_task(send_move(a.api, mover, game_id, move, key=key))
        await asyncio.sleep(0.002)
        a.instance.kill()
        try:
            first: dict[str, Any] | None = await in_flight
        except httpx.TransportError:
            first = None  # no answer: the client cannot tell whether it committed
        retry = await send_move(b.api, mover, game_id, move, key=key)
        assert retry["__typename"] == "GameChange", retry
        assert retry["version"] == game["version"] + 1, (game["version"], retry)
        assert first is None or first == retry, (first, retry)
        print(f"\nthe move in flight when A died: {'committed' if first else 'no answer'}")
        statuses = [(await b.api.game(gid))["status"] for gid in bot_games]
        assert "RUNNING" in statuses, f"the bots-only games ended before A died: {statuses}"

        # A's subscribers lose their connections, and resume on B.
        on_a = [f for f in followers if f.where[-1] == "A"]
        for f in on_a:
            await f.sockets[-1].wait_closed(STEP_TIMEOUT)
            with suppress(OperationEnded):  # whatever arrived before the close
                while f.op is not None:
                    f.events.append(event_of(await f.op.next(STEP_TIMEOUT)))
        # The game goes on through B while they are away; then they resume.
        await play_moves([b], people, game_id, rng, seen, moves=5)
        away = {f.name: f.last_seq for f in on_a}
        at_return = (await b.api.game(game_id))["lastSeq"]
        for f in on_a:
            who = next((p for p in people if p.token == f.token), None)
            await follow(stack, b, f.name, who, game_id, LEGACY_WS, follower=f)
        await together(
            play_moves([b], people, game_id, rng, seen),
            *(f.read_to_end() for f in followers),
            timeout=GAME_TIMEOUT,
        )
        deadline = time.monotonic() + 2 * STEP_TIMEOUT
        while "RUNNING" in (statuses := [(await b.api.game(g))["status"] for g in bot_games]):
            assert time.monotonic() < deadline, f"B did not finish the bots-only games: {statuses}"
            await asyncio.sleep(0.1)
        await together(*watching, timeout=STEP_TIMEOUT)
        await asyncio.gather(*(assert_quiet(f.op) for f in followers + watchers if f.op))
        await final_views(b.api, people, game_id, seen)
        await check_streams(b.api, game_id, followers, people, seen)
        for f in on_a:
            assert f.where == ["A", "B"], f.where
            resumed = [e["seq"] for e in f.events if e["seq"] > away[f.name]]
            assert resumed[0] == away[f.name] + 1, (f.name, away, resumed[:3])
            assert at_return - away[f.name] >= 6, "moves were made while it was away"
        for w, gid in zip(watchers, bot_games, strict=True):
            game = await b.api.game(gid)
            assert game["status"] == "FINISHED", (gid, game["status"])
            assert_complete(w.events, game["lastSeq"], gid)
            assert w.events == await b.api.events(gid)
    log = b.instance.server.log.read_text(errors="replace")
    assert "resumed the bots of" in log, "B's stalled-bot sweeper took the bots-only games over"


# ---------------------------------------------------------------- 5. mmk serve --workers 2
def redis_numsub(url: str, channel: str) -> int:
    client = redis.Redis.from_url(url)
    try:
        return int(dict(client.pubsub_numsub(channel))[channel.encode()])
    finally:
        client.close()


async def test_serve_with_two_workers_shares_games_and_events_through_redis(
    database_url: str, redis_url: str, tmp_path: Path
) -> None:
    """``mmk serve --workers 2``: two processes on one port, each with its
    own in-process state; spectators end up on both (each worker holds one
    Redis subscription to the game's public channel), moves go to either
    worker, and every subscriber gets the whole game."""
    with (
        fresh_backend(database_url, redis_url, "workers") as backend,
        cluster(backend, tmp_path, names=["W"], workers=2) as (w,),
    ):
        children = Path(f"/proc/{w.pid}/task/{w.pid}/children").read_text().split()
        assert len(children) >= 2, f"expected 2 worker processes, got {children}"
        async with (
            nodes([w]) as (node,),
            AsyncExitStack() as stack,
            httpx.AsyncClient(
                base_url=w.base_url,
                timeout=STEP_TIMEOUT,
                trust_env=False,
                limits=httpx.Limits(max_keepalive_connections=0),  # a new connection a call
            ) as spread,
        ):
            api = Api(spread)
            game_id, people = await new_game(api, "workers", 3, ["RANDOM"], ratSeat=0)
            followers = [
                await follow(stack, node, f"seat{s}", people[s], game_id) for s in range(3)
            ]
            public = backend.prefix + game_channel(game_id, None)
            # Until both workers hold a spectator: the second worker may still be
            # starting (the first answered /healthz), so keep trying for a while.
            deadline = time.monotonic() + 2 * STEP_TIMEOUT
            i = 0
            while time.monotonic() < deadline:
                followers.append(await follow(stack, node, f"anon{i}", None, game_id))
                if redis_numsub(backend.redis_url, public) == 2 and i >= 3:
                    break
                i += 1
                await asyncio.sleep(0.05 if i < 40 else 0.25)
            workers_with_spectators = redis_numsub(backend.redis_url, public)
            print(f"\n{len(followers) - 3} spectator connections put one on each worker")
            await api.start(people[0], game_id)
            seen = {seat: Seen() for seat in range(3)}
            await together(
                play_moves([Node(w, api)], people, game_id, random.Random("workers"), seen),
                *(f.read_to_end() for f in followers),
                timeout=GAME_TIMEOUT,
            )
            await asyncio.gather(*(assert_quiet(f.op) for f in followers if f.op))
            await final_views(api, people, game_id, seen)
            await check_streams(api, game_id, followers, people, seen)
    assert workers_with_spectators == 2, "spectators on both workers (one subscription each)"


# ---------------------------------------------------------------- tokens
async def test_instances_share_the_secret_and_the_token_bound(
    shared_pair: list[Instance],
) -> None:
    """Without MMK_SECRET_KEY both instances take the secret migration 0004
    stored: a createPlayer retried on the other instance gets the same
    player and token (docs/decisions/0041). A token rotated on A stops on A
    at once and on B within the player cache's TTL."""
    keyed = NEW_PLAYER.replace(
        "createPlayer(name: $name)", "createPlayer(name: $name, idempotencyKey: $key)"
    ).replace("mutation($name: String!)", "mutation($name: String!, $key: String)")
    rotate = "mutation { rotateToken { ... on NewToken { token } ... on Refusal { code } } }"
    me = "{ me { player { id } } }"
    async with nodes(shared_pair) as (a, b):
        key = f"scale-out-{uuid.uuid4()}"
        first = await a.api.ok("createPlayer", keyed, {"name": "ann", "key": key})
        again = await b.api.ok("createPlayer", keyed, {"name": "ann", "key": key})
        assert again == first
        token = first["token"]
        assert (await b.api.data(me, token=token))["me"]["player"]["id"]  # cached on B
        new = (await a.api.data(rotate, token=token))["rotateToken"]["token"]
        ISSUED_TOKENS.extend([token, new])
        assert (await a.api.raw(me, token=token)).get("errors")
        deadline = time.monotonic() + TTL + 1
        while not (await b.api.raw(me, token=token)).get("errors"):
            assert time.monotonic() < deadline, "B kept the rotated token past the TTL"
            await asyncio.sleep(0.2)
        assert (await b.api.data(me, token=new))["me"]["player"]["id"]
