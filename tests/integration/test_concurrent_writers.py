"""Racing writers on one game (threads, and processes): the log ends with no
gap and no duplicate, and the version counts exactly the committed writes."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ThreadPoolExecutor

import pytest

from infra.db.uow import SqlUnitOfWorkFactory
from tests.integration import records as r
from tests.integration.writers import EVENTS_PER_WRITE, hammer, hammer_in_process, tick_of

THREADS, PROCESSES, WRITES = 4, 2, 25


@pytest.fixture
def game_id(uow: SqlUnitOfWorkFactory) -> str:
    host = r.player()
    game = r.lobby_game(host.id)
    game.version = game.last_seq = 0
    with uow() as u:
        u.players.add(host)
        u.games.add(game)
        u.commit()
    return game.id


def _check_log(uow: SqlUnitOfWorkFactory, game_id: str, committed: int) -> None:
    with uow() as u:
        game = u.games.get(game_id)
        events = u.events.read(game_id, 0, 10 * committed * EVENTS_PER_WRITE, None)
    assert game is not None
    assert game.version == committed
    assert game.last_seq == committed * EVENTS_PER_WRITE
    assert [e.seq for e in events] == list(range(1, game.last_seq + 1))
    # Each write's events are whole and carry the version that write made.
    assert [tick_of(e)[1] for e in events] == [
        v for v in range(1, committed + 1) for _ in range(EVENTS_PER_WRITE)
    ]
    for i in range(0, len(events), EVENTS_PER_WRITE):
        assert len({tick_of(e)[0] for e in events[i : i + EVENTS_PER_WRITE]}) == 1


def test_threads(uow: SqlUnitOfWorkFactory, game_id: str, db_url: str) -> None:
    with ThreadPoolExecutor(THREADS) as pool:
        futures = [pool.submit(hammer, uow, game_id, WRITES, f"t{i}") for i in range(THREADS)]
        results = [f.result(timeout=120) for f in futures]
    committed = sum(c for c, _ in results)
    assert committed == THREADS * WRITES
    _check_log(uow, game_id, committed)
    conflicts = sum(x for _, x in results)
    if db_url.startswith("sqlite"):
        assert conflicts == 0  # BEGIN IMMEDIATE: writers queue, none loses
    else:
        assert conflicts > 0  # the lost races were detected and retried


def test_threads_and_processes(uow: SqlUnitOfWorkFactory, game_id: str, db_url: str) -> None:
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(PROCESSES) as procs, ThreadPoolExecutor(2) as threads:
        remote = procs.starmap_async(
            hammer_in_process, [(db_url, game_id, WRITES, f"p{i}") for i in range(PROCESSES)]
        )
        local = [threads.submit(hammer, uow, game_id, WRITES, f"t{i}") for i in range(2)]
        results = [f.result(timeout=120) for f in local] + remote.get(timeout=120)
    committed = sum(c for c, _ in results)
    assert committed == (PROCESSES + 2) * WRITES
    _check_log(uow, game_id, committed)
    if db_url.startswith("sqlite"):
        assert sum(x for _, x in results) == 0
