"""The capacity benchmark's reference (issue #13): a bare broadcaster on the
same stack (Starlette on uvicorn, one process) that answers the workload's
operations by name with no GraphQL and no database, and fans each move's
events out to the table's subscribers over graphql-transport-ws. What it
sustains is the limit of Python on this machine for these clients.

A game is a counter: 4 seats act in turn; each move makes 2.6 events on
average (a card played, who acts next, every 4th move a trick won and a new
trick, every 10th a hand refilled), ~110 moves a game, as MMK's games do.

    python -m tests.bench.capacity.bare --port 8001

With ``--redis URL --channel NAME`` (issue #28's spectators, two processes),
each process fans out what every process emits: an event goes to Redis, and
each process's reader hands it to its own subscribers of the game, as MMK's
instances do; a process subscribes to a game made on another one by its id.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson
import redis.asyncio as aioredis
import uvicorn
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from infra.runtime_metrics import RuntimeMetrics
from tests.bench.capacity.workload import SEATS

MOVES_PER_GAME = 110
CHOICES = [
    {
        "kind": "PLAY_CARD",
        "mutation": "playCard",
        "cards": [{"id": "crazy-7#1"}, {"id": "sassy-3#2"}],
        "discards": [],
        "seats": [],
        "giftCount": 0,
        "gifts": [],
    }
]


@dataclass(eq=False)
class Subscriber:
    socket: WebSocket
    op: str
    game: Game


@dataclass(eq=False)
class Game:
    id: str
    tokens: list[str]
    log: list[bytes] = field(default_factory=list)  # each event's JSON
    subscribers: set[Subscriber] = field(default_factory=set)
    to_act: int = -1
    moves: int = 0

    @property
    def ended(self) -> bool:
        return self.moves >= MOVES_PER_GAME


class Broadcaster:
    def __init__(self, relay: aioredis.Redis | None = None, channel: str = "") -> None:
        """``relay``: events go through this Redis channel to every process."""
        self.games: dict[str, Game] = {}
        self.players: dict[str, str] = {}
        self.ids = itertools.count(1)
        self.relay, self.channel = relay, channel

    async def emit(self, game: Game, kind: str, **fields: Any) -> int:
        seq = len(game.log) + 1
        at = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        event = orjson.dumps(
            {"__typename": kind, "gameId": game.id, "seq": seq, "at": at, **fields}
        )
        game.log.append(event)
        if self.relay is not None:
            last = b"1" if kind == "GameEnded" else b"0"
            await self.relay.publish(self.channel, b"%s %s %s" % (game.id.encode(), last, event))
            return seq
        await self.fan_out(game, event, kind == "GameEnded")
        return seq

    async def fan_out(self, game: Game, event: bytes, last: bool) -> None:
        for sub in list(game.subscribers):
            await self._send(game, sub, event, last)

    async def relayed(self, message: bytes) -> None:
        """An event from the relay: to this process's subscribers of its game."""
        game_id, last, event = message.split(b" ", 2)
        game = self.games.get(game_id.decode())
        if game is not None:
            await self.fan_out(game, event, last == b"1")

    def game(self, game_id: str) -> Game:
        """A game of this process, or (relayed) one made on another process."""
        game = self.games.get(game_id)
        if game is None:
            if self.relay is None:
                raise KeyError(game_id)
            game = self.games[game_id] = Game(game_id, [])
        return game

    async def _send(self, game: Game, sub: Subscriber, event: bytes, last: bool) -> None:
        frame = b'{"id":%s,"type":"next","payload":{"data":{"gameEvents":%s}}}' % (
            orjson.dumps(sub.op),
            event,
        )
        try:
            await sub.socket.send_text(frame.decode())
            if last:
                await sub.socket.send_text(
                    orjson.dumps({"id": sub.op, "type": "complete"}).decode()
                )
                game.subscribers.discard(sub)
        except (WebSocketDisconnect, RuntimeError, OSError):
            game.subscribers.discard(sub)

    def change(self, game: Game, first: int, last: int, **extra: Any) -> dict[str, Any]:
        events = [{"seq": s} for s in range(first, last + 1)]
        return {"__typename": "GameChange", "version": last, "events": events, **extra}

    async def operation(self, name: str, v: dict[str, Any], token: str | None) -> dict[str, Any]:
        if name == "CreatePlayer":
            new = uuid.uuid4().hex
            self.players[new] = v["name"]
            return {"__typename": "NewPlayer", "token": new, "player": {"id": new[:16]}}
        if token not in self.players:
            return {"__typename": "Refusal", "code": "UNAUTHENTICATED", "message": "who?"}
        if name == "CreateGame":
            game = Game(str(uuid.uuid4()), [token])
            self.games[game.id] = game
            seq = await self.emit(game, "GameCreated", host=0)
            return self.change(game, seq, seq, gameId=game.id)
        game = self.games[v.get("gameId") or v["id"]]
        if name == "JoinGame":
            game.tokens.append(token)
            seq = await self.emit(game, "PlayerJoined", seat=len(game.tokens) - 1)
            return self.change(game, seq, seq)
        if name == "StartGame":
            first = await self.emit(game, "GameStarted", seats=len(game.tokens))
            game.to_act = 0
            last = await self.emit(game, "ActionRequired", seat=0, phase="LEAD")
            return self.change(game, first, last)
        if name == "Look":
            viewer = {"seat": game.tokens.index(token), "choices": CHOICES}
            return {"__typename": "Game", "viewer": viewer}
        if name == "Move":
            return await self.move(game, game.tokens.index(token), v)
        if name == "Emit":  # another server's events of a move, as they were (#28)
            seqs = [await self.emit(game, e["__typename"], **fields(e)) for e in v["events"]]
            return self.change(game, seqs[0], seqs[-1])
        return {"__typename": "Refusal", "code": "BAD_INPUT", "message": name}

    async def move(self, game: Game, seat: int, v: dict[str, Any]) -> dict[str, Any]:
        if seat != game.to_act or game.ended:
            return {"__typename": "Refusal", "code": "NOT_YOUR_TURN", "message": "wait"}
        game.moves += 1
        n = game.moves
        first = await self.emit(game, "CardPlayed", seat=seat, card={"id": v.get("card")})
        if n % 4 == 0:
            await self.emit(game, "TrickWon", winner=seat)
            await self.emit(game, "TrickStarted", trick=n // 4 + 1, leader=seat)
        if n % 10 == 0:
            await self.emit(game, "HandRefilled", seat=seat, handSize=10)
        if n >= MOVES_PER_GAME:
            game.to_act = -1
            last = await self.emit(game, "GameEnded", winners=[seat])
        else:
            game.to_act = (seat + 1) % SEATS
            last = await self.emit(game, "ActionRequired", seat=game.to_act, phase="PLAY")
        return self.change(game, first, last)

    async def subscribe(self, socket: WebSocket, op: str, v: dict[str, Any]) -> Subscriber:
        game = self.game(v["gameId"])
        sub = Subscriber(socket, op, game)
        for event in game.log[int(v.get("afterSeq") or 0) :]:
            await self._send(game, sub, event, False)
        if game.ended:
            await socket.send_text(orjson.dumps({"id": op, "type": "complete"}).decode())
        else:
            game.subscribers.add(sub)
        return sub


def fields(event: dict[str, Any]) -> dict[str, Any]:
    """An event's own fields (its kind, game, seq and time are the emitter's)."""
    return {k: v for k, v in event.items() if k not in ("__typename", "gameId", "seq", "at")}


def create_app(redis_url: str | None = None, channel: str = "bare") -> Starlette:
    relay = None if redis_url is None else aioredis.from_url(redis_url)
    hub = Broadcaster(relay, channel)
    registry = CollectorRegistry()
    runtime = RuntimeMetrics(registry, prefix="bare")

    async def graphql_http(request: Request) -> Response:
        body = orjson.loads(await request.body())
        auth = request.headers.get("authorization", "")
        token = auth[7:] if auth.startswith("Bearer ") else None
        name = body.get("operationName", "")
        result = await hub.operation(name, body.get("variables") or {}, token)
        key = "game" if name == "Look" else "r"
        return Response(orjson.dumps({"data": {key: result}}), media_type="application/json")

    async def graphql_ws(socket: WebSocket) -> None:
        await socket.accept(subprotocol="graphql-transport-ws")
        subs: dict[str, Subscriber] = {}
        try:
            while True:
                message = orjson.loads(await socket.receive_text())
                kind = message.get("type")
                if kind == "connection_init":
                    await socket.send_text('{"type":"connection_ack"}')
                elif kind == "subscribe":
                    payload = message["payload"]
                    subs[message["id"]] = await hub.subscribe(
                        socket, message["id"], payload.get("variables") or {}
                    )
                elif kind == "ping":
                    await socket.send_text('{"type":"pong"}')
        except WebSocketDisconnect:
            pass
        finally:
            for sub in subs.values():
                sub.game.subscribers.discard(sub)

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def metrics(request: Request) -> Response:
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    async def relay_reader() -> None:
        assert relay is not None
        pubsub = relay.pubsub()
        await pubsub.subscribe(channel)
        async for message in pubsub.listen():
            if message["type"] == "message":
                await hub.relayed(message["data"])

    async def lifespan(app: Starlette) -> Any:
        runtime.start()
        reader = None if relay is None else asyncio.get_running_loop().create_task(relay_reader())
        yield
        runtime.stop()
        if reader is not None:
            reader.cancel()

    return Starlette(
        routes=[
            Route("/graphql", graphql_http, methods=["POST"]),
            WebSocketRoute("/graphql", graphql_ws),
            Route("/healthz", healthz),
            Route("/metrics", metrics),
        ],
        lifespan=lifespan,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--redis", help="relay events through this Redis (several processes)")
    parser.add_argument("--channel", default="bare", help="the relay's channel")
    args = parser.parse_args()
    uvicorn.run(
        create_app(args.redis, args.channel),
        host="127.0.0.1",
        port=args.port,
        log_level="warning",
        access_log=False,
        backlog=4096,
        ws="websockets-sansio",  # as `mmk serve` (api.fast.ws_protocol subclasses it)
        ws_per_message_deflate=False,
        timeout_keep_alive=75,  # as `mmk serve` (MMK_KEEP_ALIVE_TIMEOUT)
    )


if __name__ == "__main__":
    main()
