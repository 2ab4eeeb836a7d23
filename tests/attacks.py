"""The attack catalogue of issue #22: documents and streams the limits
*accept* that cost the server far more than a plain request, sent as an
attacker would (as fast as answered, from its own address, ignoring
``retryAfter``), and a neighbour who sends ``{ __typename }`` meanwhile.

tests/e2e/test_abuse.py runs each family against a real server with small
budgets and checks that every abuser ends ``RATE_LIMITED`` while the
neighbour is always served; tests/bench/test_abuse_bench.py runs them at
the default budgets for longer and measures the neighbour's latency, alone
and beside them, in the same run.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed
from websockets.typing import Subprotocol

HOST = "127.0.0.1"
NEIGHBOUR = "127.0.0.1"
TRIVIAL = json.dumps({"query": "{ __typename }"}).encode()
RATE_LIMITED = "RATE_LIMITED"
PACKS = 10  # the booster packs a day a player may open (MMK_BOOSTER_PACKS_PER_DAY)
SUBSCRIPTIONS = 20  # a socket's subscriptions at once (Strawberry's cap per connection)


@dataclass(frozen=True)
class Target:
    """What the families aim at on one server."""

    port: int
    finished: str  # a finished 8-bot game: a long log to page and replay
    token: str  # a player with a full collection and a seat in ``finished``'s lobby


@dataclass
class Outcome:
    """What one abuser saw: its requests (or subscriptions) answered, how
    many were refused ``RATE_LIMITED``, and the code of the last answer."""

    sent: int = 0
    limited: int = 0
    events: int = 0  # a stream's events received (a replay served, if only in part)
    last: str | None = None
    codes: set[str] = field(default_factory=set)

    def saw(self, code: str | None) -> None:
        self.sent += 1
        self.last = code
        if code is not None:
            self.codes.add(code)
        if code == RATE_LIMITED:
            self.limited += 1

    @property
    def served(self) -> bool:
        """Answered at least once, or sent events, before (or between) refusals."""
        return self.sent > self.limited or self.events > 0

    @property
    def ended_limited(self) -> bool:
        return self.limited > 0 and self.last == RATE_LIMITED


# ---------------------------------------------------------------- documents


def growing_lists(t: Target, n: int) -> tuple[str, str | None]:
    """The dearest accepted reads of lists that grow with use: a whole page
    of a collection, and a finished game's piles and messages."""
    if n % 2:
        return (
            "{ me { collection(first: 20) { totalCount edges { cursor node { id openedAt "
            "commons { id house value } rares { id house value } } } } } }",
            t.token,
        )
    return (
        f'{{ game(id: "{t.finished}") {{ ... on Game {{ table {{ discard {{ id house value }} '
        "messages { id fromSeat toSeat status } seats { won { id } prizes { id house } } } } } }",
        None,
    )


def introspection(t: Target, n: int) -> tuple[str, str | None]:
    """Deep introspection, a new document each time (no cache serves it)."""
    return (
        f"{{ s{n}: __schema {{ types {{ name kind fields {{ name args {{ name type {{ name "
        "kind ofType { name kind ofType { name } } } } type { name kind ofType { name } } } "
        "inputFields { name } enumValues { name } } } }",
        None,
    )


def aliased_pages(t: Target, n: int) -> tuple[str, str | None]:
    """Aliased pages of a finished game's events, as many as the estimate
    accepts (each call and each row are priced: fifteen pages of 100, the
    issue's attack, are refused up front)."""
    pages = " ".join(
        f'p{i}: gameEvents(gameId: "{t.finished}", afterSeq: {(i * 7 + n) % 40}, first: 10) '
        "{ ... on GameEventPage { events { seq at __typename } } }"
        for i in range(4)
    )
    return "{ " + pages + " }", None


Document = Callable[[Target, int], tuple[str, str | None]]
HTTP_FAMILIES: dict[str, Document] = {
    "growing lists": growing_lists,
    "introspection": introspection,
    "aliases of pages": aliased_pages,
}


# ---------------------------------------------------------------- abusers


async def read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """One HTTP/1.1 response's status and body (with Content-Length)."""
    head = await reader.readuntil(b"\r\n\r\n")
    lower = head.lower()
    at = lower.find(b"\r\ncontent-length:")
    end = lower.index(b"\r\n", at + 2)
    return int(head[9:12]), await reader.readexactly(int(lower[at + 17 : end]))


def _post(port: int, body: bytes, token: str | None) -> bytes:
    auth = b"" if token is None else f"Authorization: Bearer {token}\r\n".encode()
    return (
        f"POST /graphql HTTP/1.1\r\nHost: {HOST}:{port}\r\n".encode()
        + auth
        + b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
        + body
    )


def _code(body: bytes) -> str | None:
    """The code of the answer's first error, if any."""
    errors = json.loads(body).get("errors") or []
    return (errors[0].get("extensions") or {}).get("code") if errors else None


async def http_abuser(
    t: Target, document: Document, address: str, stop: asyncio.Event, out: Outcome
) -> None:
    """Sends the family's documents as fast as they are answered."""
    counter = itertools.count()
    while not stop.is_set():
        reader, writer = await asyncio.open_connection(HOST, t.port, local_addr=(address, 0))
        try:
            while not stop.is_set():
                query, token = document(t, next(counter))
                writer.write(_post(t.port, json.dumps({"query": query}).encode(), token))
                _, body = await read_response(reader)
                out.saw(_code(body))
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


async def replay_abuser(t: Target, address: str, stop: asyncio.Event, out: Outcome) -> None:
    """One anonymous socket replaying the finished game's log from seq 0 on
    every subscription it may hold, again as soon as each ends."""
    url = f"ws://{HOST}:{t.port}/graphql"
    query = (
        "subscription($g: ID!) { gameEvents(gameId: $g, afterSeq: 0) { seq __typename "
        "... on CardPlayed { seat card { id house value } } ... on TrickWon { winner scores } } }"
    )
    ids = itertools.count()
    while not stop.is_set():
        try:
            async with connect(
                url, subprotocols=[Subprotocol("graphql-transport-ws")], local_addr=(address, 0)
            ) as ws:
                await ws.send(json.dumps({"type": "connection_init", "payload": {}}))
                await ws.recv()

                async def subscribe() -> None:
                    payload = {"query": query, "variables": {"g": t.finished}}
                    await ws.send(
                        json.dumps({"id": str(next(ids)), "type": "subscribe", "payload": payload})
                    )

                refused: set[str] = set()  # ended by an error frame, their complete to come
                for _ in range(SUBSCRIPTIONS):
                    await subscribe()
                while not stop.is_set():
                    try:
                        async with asyncio.timeout(0.5):
                            frame = json.loads(await ws.recv())
                    except TimeoutError:
                        continue
                    if frame["type"] == "complete":
                        if frame["id"] in refused:  # the end of a refused one: told already
                            refused.discard(frame["id"])
                            continue
                        out.saw(None)
                        await subscribe()
                    elif frame["type"] == "error" or (
                        frame["type"] == "next" and frame["payload"].get("errors")
                    ):
                        errors = (
                            frame["payload"]
                            if frame["type"] == "error"
                            else frame["payload"]["errors"]
                        )
                        if frame["type"] == "next":
                            refused.add(frame["id"])  # its complete follows
                        out.saw((errors[0].get("extensions") or {}).get("code"))
                        await subscribe()  # an abuser ignores retryAfter
                    elif frame["type"] == "next":
                        out.events += 1
        except (ConnectionClosed, OSError):
            pass


def mixed(
    t: Target, address: str, stop: asyncio.Event, out: Outcome, i: int
) -> Coroutine[Any, Any, None]:
    """Every family at once: each abuser of the mixed family picks one."""
    if i == 3:
        return replay_abuser(t, address, stop, out)
    return http_abuser(t, list(HTTP_FAMILIES.values())[i], address, stop, out)


Abuser = Callable[[Target, str, asyncio.Event, Outcome, int], Coroutine[Any, Any, None]]
FAMILIES: dict[str, Abuser] = {
    **{
        name: (lambda d: lambda t, a, s, o, i: http_abuser(t, d, a, s, o))(document)
        for name, document in HTTP_FAMILIES.items()
    },
    "replays": lambda t, a, s, o, i: replay_abuser(t, a, s, o),
    "mixed": mixed,
}
"""Every family of the catalogue, by name: an abuser's coroutine, told its
target, its own address, when to stop, where to count and its number."""


def abuser_address(family: int, i: int) -> str:
    """A loopback address of its own for abuser ``i`` of family number
    ``family`` (the neighbour is 127.0.0.1)."""
    return f"127.0.{family + 1}.{10 + i}"


# ---------------------------------------------------------------- the neighbour


async def neighbour(
    port: int, until: asyncio.Event, pause: float, address: str = NEIGHBOUR
) -> list[float]:
    """``{ __typename }`` every ``pause`` seconds from ``address`` over one
    keep-alive connection, each answer checked; the latencies."""
    reader, writer = await asyncio.open_connection(HOST, port, local_addr=(address, 0))
    request = _post(port, TRIVIAL, None)
    times: list[float] = []
    try:
        while not until.is_set():
            start = time.perf_counter()
            writer.write(request)
            status, body = await read_response(reader)
            times.append(time.perf_counter() - start)
            assert status == 200 and json.loads(body)["data"] == {"__typename": "Query"}, body
            await asyncio.sleep(pause)
    finally:
        writer.close()
    return times


async def prepare(api: Any, port: int, started: Callable[[str], Awaitable[None]]) -> Target:
    """A player with a full collection and a finished 8-bot game (``api``:
    tests/e2e/client.Api; ``started`` waits for the game's end)."""
    owner = await api.new_person("abuser")
    for _ in range(PACKS):
        await api.data("mutation { openBoosterPack { __typename } }", token=owner.token)
    game_id = await api.create_game(owner, seatCount=8, seed="abuse", practice=True, takeSeat=False)
    for _ in range(8):
        await api.add_bot(owner, game_id, "RANDOM")
    await api.start(owner, game_id)
    await started(game_id)
    return Target(port, game_id, owner.token)
