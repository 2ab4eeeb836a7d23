"""What the seams of ``api/fast/`` save against the libraries' own paths,
in the same run (issue #23: each seam re-measured with and without it), run
by ``make bench``; each stays while it saves over 5 % (``MIN_SAVING``).

Plain selections: every event of seeded 5-seat bots games, as a spectator sees it, is framed
for the capacity workload's selection (``tests/bench/capacity/workload.py``,
what a real client's feed selects) twice, in turns: by the compiled plan,
and by graphql-core's ``execute`` with the event as the root value (what its
``subscribe`` does for each event). Both frames must be equal. CPU per frame
for each, and the saving. Shared frames and direct statements: below.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from graphql import OperationDefinitionNode, execute, parse
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext

from api.fast.core_schema import core_schema
from api.fast.plain_selection import plain_selection
from api.graphql.schema import build_schema
from api.graphql.types.event_kinds import typed
from domain.game.engine import apply, to_act
from domain.game.legal import legal_actions
from domain.game.rng import Rng
from domain.game.setup import new_game
from domain.log import LoggedEvent
from infra.db.direct import DirectStatement
from infra.db.engine import make_engine
from infra.db.migrate import upgrade
from infra.db.tables import game_events, games, idempotency_keys, players
from tests.bench.capacity.workload import SUBSCRIBE
from tests.bench.test_stream_runner_bench import SUBSCRIBERS, fan_outs
from tests.integration.databases import sqlite_url
from tests.integration.test_direct_statements import PLAYER
from tests.integration.test_direct_statements import _event as event_row
from tests.integration.test_direct_statements import _game as game_row

GAMES = 20
ROUNDS = 7
MIN_SAVING = 0.05


def _events() -> list[LoggedEvent]:
    """Every event of ``GAMES`` seeded bots games, as a spectator sees it."""
    at = datetime(2026, 12, 6, tzinfo=UTC)
    out: list[LoggedEvent] = []
    for game in range(GAMES):
        setup = new_game(5, game)
        state, rng = setup.state, Rng(game)
        events = list(setup.events)
        while (seat := to_act(state)) is not None:
            legal = legal_actions(state, seat)
            events += apply(state, seat, legal[rng.below(len(legal))])
        out += [
            LoggedEvent(f"g{game}", seq, at, e.seen_by(None))
            for seq, e in enumerate(events, start=1)
        ]
    return out


def _cpu(frame: Any, events: list[LoggedEvent]) -> float:
    start = time.process_time()
    for e in events:
        frame(e)
    return (time.process_time() - start) / len(events)


def test_plain_frames_against_the_executor() -> None:
    schema = core_schema(build_schema())
    document = parse(SUBSCRIBE)
    operation = document.definitions[0]
    assert isinstance(operation, OperationDefinitionNode)
    plan = plain_selection(schema, operation)
    assert plan is not None, "the workload's selection is plain"
    variables = {"gameId": "g0", "afterSeq": 0}
    events = _events()

    def planned(e: LoggedEvent) -> Any:
        return plan.frame(typed(e))

    def executed(e: LoggedEvent) -> Any:
        return execute(schema, document, root_value=typed(e), variable_values=variables)

    for e in events[:200]:  # the same frames, and both warm
        assert planned(e) == executed(e), e
    lean, stock = [], []
    for _ in range(ROUNDS):
        lean.append(_cpu(planned, events))
        stock.append(_cpu(executed, events))
    plain_us, executor_us = statistics.median(lean) * 1e6, statistics.median(stock) * 1e6
    saving = 1 - plain_us / executor_us
    print(
        f"\n  {len(events)} frames, median of {ROUNDS} rounds in turns: plain plan "
        f"{plain_us:.1f} us CPU/frame, graphql-core's executor {executor_us:.1f} us/frame; "
        f"the plan saves {saving:.0%} (kept above {MIN_SAVING:.0%})"
    )
    assert saving > MIN_SAVING, f"plain selections save only {saving:.0%}: remove them"


def test_shared_frames_against_strawberrys_execution_context() -> None:
    """SharedFrames (``api/fast/frames.py``: one frame per audience and
    selection, built by the plain plan where it can): live frames to
    ``SUBSCRIBERS`` spectators of one game, with the schema as built and with
    Strawberry's own execution context (its public ``execution_context_class``
    default), in turns; the LeanRunner bench's fan-out."""

    shared, stock = build_schema(), build_schema()
    stock.execution_context_class = StrawberryGraphQLCoreExecutionContext
    with_shared, with_stock, events = asyncio.run(fan_outs(shared, stock))
    frames = SUBSCRIBERS * events
    shared_us = statistics.median(with_shared) / frames * 1e6
    stock_us = statistics.median(with_stock) / frames * 1e6
    saving = 1 - shared_us / stock_us
    print(
        f"\n  live frames, {SUBSCRIBERS} spectators x {events} events, median of {ROUNDS} "
        f"rounds in turns: shared frames {shared_us:.1f} us CPU/frame, Strawberry's execution "
        f"context {stock_us:.1f} us/frame; shared frames save {saving:.0%} (kept above "
        f"{MIN_SAVING:.0%})"
    )
    assert saving > MIN_SAVING, f"shared frames save only {saving:.0%}: remove them"


def test_direct_statements_against_sqlalchemy_core(tmp_path: Path) -> None:
    """DirectStatement (``infra/db/direct.py``): a move's three events
    inserted (one ``executemany``) and its idempotency key looked up, on
    SQLite, with the statements run on the DBAPI cursor and with Core's
    ``Connection.execute``, in turns, each inside a transaction rolled back."""
    engine = make_engine(sqlite_url(tmp_path))
    upgrade(engine)
    insert = DirectStatement(sa.insert(game_events), [c.key for c in game_events.columns])
    key = sa.select(idempotency_keys).where(
        idempotency_keys.c.player_id == sa.bindparam("p"),
        idempotency_keys.c.key == sa.bindparam("k"),
    )
    look = DirectStatement(key)
    with engine.begin() as conn:
        conn.execute(sa.insert(players), [PLAYER])
        conn.execute(sa.insert(games), [game_row()])
    moves = 300

    def rows(move: int) -> list[dict[str, Any]]:
        return [event_row(move * 3 + i) for i in range(1, 4)]

    def direct() -> float:
        with engine.connect() as conn, conn.begin() as tx:
            start = time.process_time()
            for move in range(moves):
                look.first(conn, {"p": "p1", "k": f"k{move}"})
                insert.run(conn, rows(move))
            spent = time.process_time() - start
            tx.rollback()
        return spent / moves

    def core() -> float:
        with engine.connect() as conn, conn.begin() as tx:
            start = time.process_time()
            for move in range(moves):
                conn.execute(key, {"p": "p1", "k": f"k{move}"}).first()
                conn.execute(sa.insert(game_events), rows(move))
            spent = time.process_time() - start
            tx.rollback()
        return spent / moves

    direct(), core()  # warm both up
    with_direct: list[float] = []
    with_core: list[float] = []
    for _ in range(ROUNDS):
        with_direct.append(direct())
        with_core.append(core())
    engine.dispose()
    direct_us = statistics.median(with_direct) * 1e6
    core_us = statistics.median(with_core) * 1e6
    saving = 1 - direct_us / core_us
    print(
        f"\n  a move's key look-up and 3 events on SQLite, median of {ROUNDS} rounds in turns: "
        f"direct {direct_us:.0f} us CPU, Core {core_us:.0f} us; direct statements save "
        f"{saving:.0%} (kept above {MIN_SAVING:.0%})"
    )
    assert saving > MIN_SAVING, f"direct statements save only {saving:.0%}: remove them (0016)"
