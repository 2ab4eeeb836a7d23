"""Driving games end to end: people who play what ``legalActions`` lists, and
subscribers that read ``gameEvents`` streams."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from tests.e2e.client import SUBSCRIBE_EVENTS, Api, Person
from tests.e2e.wsclient import GraphQLWebSocket, Operation, OperationEnded

POLL = 0.01  # seconds between looks at the game while someone else acts
GAME_TIMEOUT = 30.0  # seconds for a whole game
EVENT_TIMEOUT = 10.0  # seconds for the next event of a running game
QUIET = 0.25  # seconds of silence expected once a stream has everything


async def together(*aws: Awaitable[Any], timeout: float = GAME_TIMEOUT) -> list[Any]:
    """Run ``aws`` concurrently and return their results; the first failure
    (or the timeout) cancels the others and is raised as it is."""
    tasks: list[asyncio.Task[Any]] = []
    try:
        async with asyncio.timeout(timeout), asyncio.TaskGroup() as group:
            tasks = [group.create_task(_awaited(aw)) for aw in aws]
    except BaseExceptionGroup as failed:
        if len(failed.exceptions) == 1:
            raise failed.exceptions[0] from None
        raise
    return [t.result() for t in tasks]


async def _awaited(aw: Awaitable[Any]) -> Any:
    return await aw


@dataclass
class Seen:
    """What a seated person saw through ``game(id){viewer}`` while playing."""

    hands: set[str] = field(default_factory=set)
    peeks: set[str] = field(default_factory=set)  # Curious / Hungry decision cards
    moves: int = 0


async def autoplay(
    api: Api,
    person: Person,
    seat: int,
    game_id: str,
    rng: random.Random,
    seen: Seen | None = None,
    choose: Callable[[list[dict[str, Any]], random.Random], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Play whenever this seat is to act, sending a listed legal action as it
    is, until the game ends; returns the finished game as this person sees it."""
    seen = seen if seen is not None else Seen()
    while True:
        game = await api.game(game_id, person.token)
        viewer = game["viewer"]
        assert viewer is not None and viewer["seat"] == seat, viewer
        seen.hands.update(c["id"] for c in viewer["hand"])
        seen.peeks.update(c["id"] for c in viewer["decisionCards"])
        if game["status"] == "FINISHED":
            assert viewer["legalActions"] == [], viewer["legalActions"]
            return game
        table = game["table"]
        if table["toAct"] == seat:
            actions = viewer["legalActions"]
            assert actions, f"seat {seat} is to act but has no legal action: {game}"
            action = (choose or _any)(actions, rng)
            await api.act(person, game_id, action)
            seen.moves += 1
        else:
            await asyncio.sleep(POLL)


def _any(actions: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    return rng.choice(actions)


class Stream(Protocol):
    """A subscription as the tests read it: a WebSocket ``Operation``
    (tests/e2e/wsclient.py) or an ``HttpSubscription`` (tests/e2e/httpsub.py)."""

    errors: list[Any]

    async def next(self, timeout: float) -> dict[str, Any]: ...


def event_of(payload: dict[str, Any]) -> dict[str, Any]:
    """The ``gameEvents`` event of a subscription payload (no errors allowed)."""
    assert not payload.get("errors"), payload
    event: dict[str, Any] = payload["data"]["gameEvents"]
    return event


async def subscribe_events(ws: GraphQLWebSocket, game_id: str, after_seq: int = 0) -> Operation:
    return await ws.subscribe(SUBSCRIBE_EVENTS, {"gameId": game_id, "afterSeq": after_seq})


async def read_until(
    op: Stream,
    into: list[dict[str, Any]],
    stop: Callable[[dict[str, Any]], bool] = lambda e: e["type"] == "GameEnded",
    silence: float = EVENT_TIMEOUT,
) -> None:
    """Append events to ``into`` until ``stop(event)`` holds for one."""
    while True:
        event = event_of(await op.next(silence))
        into.append(event)
        if stop(event):
            return


async def assert_quiet(op: Stream) -> None:
    """Nothing more arrives: no duplicate after the end (the operation may
    have completed, without an error)."""
    try:
        extra = await op.next(QUIET)
    except TimeoutError:
        return
    except OperationEnded:
        assert not op.errors, op.errors
        return
    raise AssertionError(f"unexpected frame after the end of the stream: {extra}")


async def assert_ended(op: Stream, timeout: float = EVENT_TIMEOUT) -> None:
    """The server completed the operation (after ``GameEnded``), with no error
    and nothing more."""
    try:
        extra = await op.next(timeout)
    except OperationEnded:
        assert not op.errors, op.errors
        return
    raise AssertionError(f"a frame instead of the end of the stream: {extra}")


def assert_complete(events: list[dict[str, Any]], last_seq: int, game_id: str) -> None:
    """Every seq 1..last_seq exactly once, in order, for this game."""
    seqs = [e["seq"] for e in events]
    assert seqs == list(range(1, last_seq + 1)), _gaps(seqs, last_seq)
    assert {e["gameId"] for e in events} == {game_id}


def _gaps(seqs: list[int], last: int) -> str:
    missing = sorted(set(range(1, last + 1)) - set(seqs))
    dups = sorted({s for s in seqs if seqs.count(s) > 1})
    unordered = seqs != sorted(seqs)
    return f"missing {missing[:20]}, duplicated {dups[:20]}, out of order {unordered}"


async def new_game(
    api: Api,
    tag: str,
    people: int,
    bots: list[str],
    **options: Any,
) -> tuple[str, list[Person]]:
    """A lobby hosted by the first of ``people`` new persons (seat 0); the
    others join (seats 1, 2, ...), then the host seats ``bots``. Not started;
    full unless ``seatCount`` says otherwise."""
    persons = [await api.new_person(f"{tag}-p{i}") for i in range(people)]
    options.setdefault("seatCount", people + len(bots))
    game_id = await api.create_game(persons[0], seed=f"e2e-{tag}", practice=True, **options)
    for p in persons[1:]:
        await api.join(p, game_id)
    for strategy in bots:
        await api.add_bot(persons[0], game_id, strategy)
    game = await api.game(game_id, persons[0].token)
    assert [s["playerId"] for s in game["seats"][:people]] == [p.id for p in persons]
    return game_id, persons
