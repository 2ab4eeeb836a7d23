"""One transaction for every change (domain/services/transaction.py): only
that module writes through the unit of work, and every use case that
changes something goes through it. Then, on the fakes, what the transaction
promises: a refused change writes and publishes nothing (but its refusal,
under a key: tests/usecases/test_kept_refusals.py); a committed one
publishes each audience's projection once, after the commit; a repeat with
the same idempotency key gets the first result and publishes nothing; a lost
race is run again on the fresh state, or is ``CONFLICT`` with
``expectedVersion``."""

from __future__ import annotations

import ast
import asyncio
import dataclasses
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import cast

import pytest

import domain.services
from domain.channels import LOBBY, game_channel
from domain.errors import DomainError, ErrorCode
from domain.game.commands import PlayCard
from domain.game.engine import to_act
from domain.game.legal import legal_actions
from domain.ports import Resync
from domain.records import GameRecord, LobbyUpdate, Refused
from domain.services.boosters import open_booster_pack
from domain.services.games import NewGame, create_game, join_game, start_game
from domain.services.play import act
from domain.services.transaction import ATTEMPTS, Request
from infra.bus.memory import Message, QueueSubscription
from tests.fakes import FakeUnitOfWork, Harness
from tests.usecases.conftest import player, req, started_game

# ---------------------------------------------------------------- structure
SERVICES = Path(domain.services.__file__).parent
THE_TRANSACTION = SERVICES / "transaction.py"
ENDS = {"commit", "rollback"}
"""Ending a unit of work's transaction, whatever the receiver."""
REPOSITORY_WRITES = {"add", "save", "append", "put"}
"""Writes through a repository of a unit of work (``uow.games.save``)."""
ENTRY_POINTS = {"transact", "change_game", "add_game"}
USE_CASES = {
    # module: the use cases that change something (None: every public async one)
    "games.py": None,
    "play.py": None,
    "boosters.py": None,
    "bots.py": {"drive_bots"},
    "players.py": {"create_player"},
    "timeouts.py": {"fire_deadline", "reclaim_seat"},
}
KNOWN = {
    "games.py": {"create_game", "join_game", "leave_game", "add_bot", "start_game"},
    "play.py": {"act"},
    "boosters.py": {"open_booster_pack"},
    "bots.py": {"drive_bots"},
    "players.py": {"create_player"},
    "timeouts.py": {"fire_deadline", "reclaim_seat"},
}


def _is_uow(node: ast.expr) -> bool:
    """``uow``, or any ``<x>.uow`` (``tx.uow``, ``self.uow``)."""
    return (isinstance(node, ast.Name) and node.id == "uow") or (
        isinstance(node, ast.Attribute) and node.attr == "uow"
    )


def uow_writes(source: str) -> list[str]:
    """Each write through a unit of work in ``source``, as ``line: code``: a
    call of ``.commit`` or ``.rollback`` (on anything), and a write method of
    a unit of work's repository, called or not (``tx.uow.games.save``)."""
    tree = ast.parse(source)
    called = {id(c.func) for c in ast.walk(tree) if isinstance(c, ast.Call)}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        repo = node.value
        ends = node.attr in ENDS and id(node) in called
        writes = (
            node.attr in REPOSITORY_WRITES
            and isinstance(repo, ast.Attribute)
            and _is_uow(repo.value)
        )
        if ends or writes:
            found.append((node.lineno, ast.unparse(node)))
    return [f"{line}: {code}" for line, code in sorted(found)]


def use_cases_outside_the_transaction(source: str, only: set[str] | None) -> list[str]:
    """The public async functions of ``source`` (or those named in ``only``)
    that call none of ``transact``, ``change_game``, ``add_game``."""
    tree = ast.parse(source)
    missing = []
    for fn in tree.body:
        if not isinstance(fn, ast.AsyncFunctionDef) or fn.name.startswith("_"):
            continue
        if only is not None and fn.name not in only:
            continue
        calls = {
            c.func.id
            for c in ast.walk(fn)
            if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
        }
        if not calls & ENTRY_POINTS:
            missing.append(fn.name)
    return missing


def _public_async(source: str) -> set[str]:
    return {
        fn.name
        for fn in ast.parse(source).body
        if isinstance(fn, ast.AsyncFunctionDef) and not fn.name.startswith("_")
    }


def test_the_services_are_found() -> None:
    names = {p.name for p in SERVICES.glob("*.py")}
    assert {"transaction.py", *USE_CASES} <= names
    assert len(names) > len(USE_CASES) + 1


@pytest.mark.parametrize(
    "module",
    sorted(p for p in SERVICES.glob("*.py") if p != THE_TRANSACTION),
    ids=lambda p: p.name,
)
def test_only_the_transaction_writes_through_the_unit_of_work(module: Path) -> None:
    assert uow_writes(module.read_text()) == [], f"{module.name} writes outside transaction.py"


def test_the_transaction_does_write_through_the_unit_of_work() -> None:
    """The checker sees the writes where they are."""
    writes = " ".join(uow_writes(THE_TRANSACTION.read_text()))
    for write in ("uow.commit", "uow.events.append", "uow.games.save", "uow.games.add"):
        assert write in writes


@pytest.mark.parametrize("module", sorted(USE_CASES))
def test_every_use_case_that_changes_something_is_one_transaction(module: str) -> None:
    source = (SERVICES / module).read_text()
    only = USE_CASES[module]
    assert KNOWN[module] <= _public_async(source), "a use case was renamed: update KNOWN"
    assert use_cases_outside_the_transaction(source, only) == []


@pytest.mark.parametrize(
    "source",
    [
        "def f(uow):\n    uow.commit()",
        "def f(uow):\n    uow.rollback()",
        "def f(tx):\n    tx.commit()",
        "def f(tx, g):\n    tx.uow.games.save(g, 1)",
        "def f(uow, g):\n    uow.games.add(g)",
        "def f(uow, e):\n    uow.events.append(e)",
        "def f(uow, r):\n    uow.idempotency.put(r)",
        "def f(self, p):\n    self.uow.players.add(p)",
        "def f(tx, b):\n    save = tx.uow.boosters.add\n    save(b)",
    ],
)
def test_the_checker_finds_a_write(source: str) -> None:
    assert len(uow_writes(source)) == 1, source


def test_the_checker_lets_reads_and_other_appends_pass() -> None:
    source = (
        "def f(uow, tx, out):\n"
        "    uow.games.get('g')\n"
        "    tx.uow.boosters.of_player('p')\n"
        "    out.append(1)\n"
        "    out.games.save(1)\n"
        "    tx.player('p')\n"
    )
    assert uow_writes(source) == []


def test_the_checker_finds_a_use_case_outside_the_transaction() -> None:
    source = (
        "async def changes(deps, req):\n"
        "    with deps.uow() as uow:\n"
        "        uow.games.save(req.game, 1)\n"
        "async def keyed(deps, req):\n"
        "    return await transact(deps, req, STEPS)\n"
        "async def game(deps, req):\n"
        "    return await change_game(deps, req, 'g', decide)\n"
        "async def new(deps, req):\n"
        "    return await add_game(deps, req, make)\n"
        "async def _helper(deps):\n"
        "    return None\n"
        "def not_async(deps):\n"
        "    return None\n"
    )
    assert use_cases_outside_the_transaction(source, None) == ["changes"]
    assert use_cases_outside_the_transaction(source, {"keyed"}) == []


# ---------------------------------------------------------------- the bus
@asynccontextmanager
async def listening(h: Harness, channels: list[str]) -> AsyncIterator[dict[str, QueueSubscription]]:
    """Subscriptions to ``channels``, entered before what they should hear."""
    async with AsyncExitStack() as stack:
        yield {ch: await stack.enter_async_context(h.bus.subscribe(ch)) for ch in channels}


async def heard(sub: QueueSubscription) -> list[Message]:
    """Everything the subscription has received so far."""
    out: list[Message] = []
    while True:
        try:
            out.append(await asyncio.wait_for(anext(aiter(sub)), 0.01))
        except TimeoutError:
            return out


def audiences(game_id: str, seats: int) -> list[str]:
    return [LOBBY, game_channel(game_id, None), *(game_channel(game_id, s) for s in range(seats))]


def _snapshot(h: Harness) -> tuple[object, ...]:
    """Everything the fake database holds, copied."""
    s = h.store
    return (
        {gid: g.clone() for gid, g in s.games.items()},
        dict(s.events),
        dict(s.keys),
        list(s.boosters),
        dict(s.players),
    )


def _to_act(h: Harness, gid: str) -> tuple[int, PlayCard]:
    state = h.store.games[gid].state
    assert state is not None
    seat = to_act(state)
    assert seat is not None
    cmd = legal_actions(state, seat)[0]
    assert isinstance(cmd, PlayCard)
    return seat, cmd


async def _refused(code: ErrorCode, coro: object) -> None:
    with pytest.raises(DomainError) as e:
        await coro  # type: ignore[misc]
    assert e.value.code is code, e.value.message


# ---------------------------------------------------------------- refused
async def test_a_refused_change_writes_nothing_and_publishes_nothing(h: Harness) -> None:
    gid, ids = await started_game(h, people=4, seats=4, rat_seat=0)
    seat, cmd = _to_act(h, gid)
    other = ids[(seat + 1) % 4]
    full = (await create_game(h.deps, req(ids[0]), NewGame(3))).game_id
    for pid in ids[1:3]:
        await join_game(h.deps, req(pid), full, None)
    before, published = _snapshot(h), h.bus.published
    async with listening(h, audiences(gid, 4) + audiences(full, 3)) as subs:
        keyed = Request(other, "playCard", {"card": cmd.card}, idempotency_key="k-refused")
        await _refused(ErrorCode.NOT_YOUR_TURN, act(h.deps, keyed, gid, cmd))
        await _refused(ErrorCode.ILLEGAL_ACTION, join_game(h.deps, req(ids[3]), full, None))
        await _refused(ErrorCode.FORBIDDEN, start_game(h.deps, req(ids[1]), full))
        stale = Request(ids[seat], "playCard", {}, expected_version=0)
        await _refused(ErrorCode.STALE_STATE, act(h.deps, stale, gid, cmd))
        for sub in subs.values():
            assert await heard(sub) == []
    after = _snapshot(h)
    assert after[:2] + after[3:] == before[:2] + before[3:], "nothing applied"
    assert set(h.store.keys) - set(cast(dict[object, object], before[2])) == {
        (other, "k-refused")
    }, "only the keyed refusal, as its first result (decision 0042)"
    assert isinstance(h.store.keys[(other, "k-refused")].result, Refused)
    assert h.bus.published == published
    assert h.scheduled == []


# ---------------------------------------------------------------- committed
async def test_a_committed_change_publishes_each_audiences_projection_once_after_the_commit(
    h: Harness,
) -> None:
    host = await player(h, "host")
    others = [await player(h, f"p{i}") for i in range(3)]
    gid = (await create_game(h.deps, req(host), NewGame(4))).game_id
    for pid in others:
        await join_game(h.deps, req(pid), gid, None)
    version, last_seq = h.store.games[gid].version, h.store.games[gid].last_seq
    stored_when_published: list[int] = []
    publish = h.bus.publish

    async def watched(messages: object) -> None:
        stored_when_published.append(h.store.games[gid].version)
        await publish(messages)  # type: ignore[arg-type]

    h.bus.publish = watched  # type: ignore[method-assign]
    async with listening(h, audiences(gid, 4)) as subs:
        result = await start_game(h.deps, req(host), gid)
        got = {ch: await heard(sub) for ch, sub in subs.items()}
    assert stored_when_published == [version + 1], "published once, after the commit"
    game = h.store.games[gid]
    logged = [e for e in h.store.log(gid) if e.seq > last_seq]  # whole events
    assert [e.type for e in logged] == ["GameStarted", "TrickStarted", "ActionRequired"]
    assert got[game_channel(gid, None)] == [e.seen_by(None) for e in logged]
    for seat in range(4):
        assert got[game_channel(gid, seat)] == [e.seen_by(seat) for e in logged], seat
    deals = [got[game_channel(gid, s)][0] for s in range(4)]
    assert len({str(d) for d in deals}) == 4, "each seat its own deal"
    assert got[LOBBY] == [LobbyUpdate.of(game)]
    assert result.events == tuple(e.seen_by(0) for e in logged), "the caller's projection"
    assert not any(isinstance(m, Resync) for ms in got.values() for m in ms)


async def test_a_change_that_leaves_the_listing_alone_tells_the_lobby_nothing(
    h: Harness,
) -> None:
    gid, ids = await started_game(h, people=4, seats=4, rat_seat=0)
    seat, cmd = _to_act(h, gid)
    async with listening(h, [LOBBY, game_channel(gid, None)]) as subs:
        await act(h.deps, req(ids[seat]), gid, cmd)
        assert await heard(subs[LOBBY]) == []
        assert [m for m in await heard(subs[game_channel(gid, None)])]  # the move was heard


# ---------------------------------------------------------------- repeated
async def test_a_retry_with_the_same_key_returns_the_first_result_and_publishes_nothing(
    h: Harness,
) -> None:
    gid, ids = await started_game(h, people=4, seats=4, rat_seat=0)
    seat, cmd = _to_act(h, gid)
    keyed = Request(ids[seat], "playCard", {"card": cmd.card}, idempotency_key="k1")
    first = await act(h.deps, keyed, gid, cmd)
    opened = await open_booster_pack(h.deps, Request(ids[0], "openBoosterPack", {}, "k2"))
    before, published = _snapshot(h), h.bus.published
    async with listening(h, audiences(gid, 4)) as subs:
        assert await act(h.deps, keyed, gid, cmd) == first
        again = await open_booster_pack(h.deps, Request(ids[0], "openBoosterPack", {}, "k2"))
        assert again == opened
        for sub in subs.values():
            assert await heard(sub) == []
    assert _snapshot(h) == before and h.bus.published == published


# ---------------------------------------------------------------- lost races
def _racing(h: Harness, gid: str, times: int) -> list[int]:
    """Before each of the next ``times`` commits, another writer moves the
    stored game to a new version (after this writer loaded it). Returns the
    list of versions the racer left, filled as it runs."""
    raced: list[int] = []

    def racer() -> None:
        if len(raced) == times:
            return
        game = h.store.games[gid].clone()
        game.version += 1
        h.store.games[gid] = game
        raced.append(game.version)

    h.store.fail_before_commit = racer
    return raced


def _counting(h: Harness) -> tuple[Harness, list[GameRecord | None]]:
    """The harness with a unit of work factory that notes each game it loads."""
    loads: list[GameRecord | None] = []

    class Counting(FakeUnitOfWork):
        def __enter__(self) -> FakeUnitOfWork:
            load = self.games.get

            def get(game_id: str) -> GameRecord | None:
                game = load(game_id)
                loads.append(None if game is None else game.clone())
                return game

            self.games.get = get  # type: ignore[method-assign]
            return self

    deps = dataclasses.replace(h.deps, uow=lambda: Counting(h.store))
    return dataclasses.replace(h, deps=deps), loads


async def test_a_lost_race_is_run_again_on_the_fresh_state(h: Harness) -> None:
    gid, ids = await started_game(h, people=4, seats=4, rat_seat=0)
    seat, cmd = _to_act(h, gid)
    start = h.store.games[gid].version
    last_seq = h.store.games[gid].last_seq
    counted, loads = _counting(h)
    raced = _racing(h, gid, times=1)
    async with listening(h, [game_channel(gid, None)]) as subs:
        result = await act(counted.deps, req(ids[seat]), gid, cmd)
        public = await heard(subs[game_channel(gid, None)])
    assert raced == [start + 1]
    assert [g.version for g in loads if g is not None] == [start, start + 1], "loaded afresh"
    assert result.version == start + 2, "decided on the racer's version"
    assert h.store.games[gid].version == start + 2
    log = h.store.log(gid)
    assert [e.seq for e in log] == list(range(1, len(log) + 1)), "the loser wrote nothing"
    assert [e.seq for e in result.events] == list(range(last_seq + 1, len(log) + 1))
    assert public == [e.seen_by(None) for e in log[last_seq:]], "published once, the winner's"


async def test_a_lost_race_with_expected_version_is_conflict(h: Harness) -> None:
    gid, ids = await started_game(h, people=4, seats=4, rat_seat=0)
    seat, cmd = _to_act(h, gid)
    start = h.store.games[gid].version
    events = dict(h.store.events)
    counted, loads = _counting(h)
    raced = _racing(h, gid, times=1)
    expecting = Request(ids[seat], "playCard", {}, expected_version=start)
    async with listening(h, audiences(gid, 4)) as subs:
        await _refused(ErrorCode.CONFLICT, act(counted.deps, expecting, gid, cmd))
        for sub in subs.values():
            assert await heard(sub) == []
    assert len(loads) == 1 and raced == [start + 1], "not run again"
    assert h.store.games[gid].version == start + 1, "only the racer's change"
    assert h.store.events == events


async def test_a_writer_that_loses_every_race_gives_up_with_conflict(h: Harness) -> None:
    gid, ids = await started_game(h, people=4, seats=4, rat_seat=0)
    seat, cmd = _to_act(h, gid)
    start = h.store.games[gid].version
    counted, loads = _counting(h)
    raced = _racing(h, gid, times=ATTEMPTS)
    await _refused(ErrorCode.CONFLICT, act(counted.deps, req(ids[seat]), gid, cmd))
    assert len(loads) == ATTEMPTS and len(raced) == ATTEMPTS
    assert h.store.games[gid].version == start + ATTEMPTS
