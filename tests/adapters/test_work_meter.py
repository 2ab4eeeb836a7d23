"""The work meter (infra/work_meter.py, docs/decisions/0049): a caller's
tasks, the tasks they start and their worker threads count for its meter;
nobody else's work does, nor a background task it happened to start; a
live event pushed from another caller's task counts for its subscriber."""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import AsyncIterator, Coroutine
from typing import Any

import pytest

from infra.work_meter import (
    DEAR_AFTER,
    DEAR_FOR,
    DEMOTE_AFTER,
    METER,
    ROUND,
    UNIT,
    Meter,
    close_step,
    cpu,
    detached,
    forgiven,
    in_thread,
    install,
    moved,
    uninstall,
    units_so_far,
)

WORK = 0.02  # seconds of CPU a piece of work burns


def burn(seconds: float = WORK) -> None:
    """Spends ``seconds`` of this thread's CPU time."""
    end = cpu() + seconds
    while cpu() < end:
        pass


@pytest.fixture
async def metered() -> AsyncIterator[None]:
    loop = asyncio.get_running_loop()
    install(loop, hold=True)
    try:
        yield
    finally:
        uninstall(loop)


def seconds(meter: Meter) -> float:
    return meter.units * UNIT


async def test_a_callers_steps_and_the_tasks_it_starts_count_for_its_meter(
    metered: None,
) -> None:
    meter = Meter("192.0.2.1", "tok")

    async def child() -> None:
        burn()
        await asyncio.sleep(0)
        burn()

    async def request() -> None:
        METER.set(meter)  # the step that sets it counts
        burn()
        await asyncio.gather(child(), child())

    async def neighbour() -> None:
        burn(3 * WORK)

    await asyncio.gather(asyncio.create_task(request()), asyncio.create_task(neighbour()))
    assert 5 * WORK <= seconds(meter) < 5 * WORK + 0.015


async def test_a_worker_threads_cpu_counts_for_the_caller_that_sent_it(metered: None) -> None:
    meter = Meter()

    async def request() -> None:
        METER.set(meter)
        await asyncio.to_thread(in_thread(burn))

    await asyncio.create_task(request())
    assert WORK <= seconds(meter) < WORK + 0.015


def _cycles() -> None:
    """Garbage in cycles, for a full pass to find."""
    garbage = []
    for _ in range(200_000):
        a: list[object] = []
        a.append(a)
        garbage.append(a)
    del garbage


def _collection() -> float:
    """A full pass of the collector: the CPU seconds it took."""
    start = cpu()
    gc.collect()
    return cpu() - start


async def test_a_garbage_collection_in_a_worker_thread_is_nobodys_work(metered: None) -> None:
    """A full pass the collector runs in a worker thread (a transaction's
    allocation set it off) is not charged to the caller that sent the work."""
    meter = Meter()
    _cycles()

    async def request() -> float:
        METER.set(meter)
        return await asyncio.to_thread(in_thread(_collection))

    collecting = await asyncio.create_task(request())
    assert collecting > 0.005, "a measurable collection"
    assert seconds(meter) < collecting / 4


async def test_a_background_task_started_by_a_caller_meters_nobody(metered: None) -> None:
    meter = Meter()

    async def background() -> None:
        assert METER.get() is None
        burn()

    async def request() -> asyncio.Task[None]:
        METER.set(meter)
        return detached(background())

    task = await asyncio.create_task(request())
    await task
    assert seconds(meter) < WORK / 2


async def test_a_child_meter_counts_for_its_parent_too(metered: None) -> None:
    connection = Meter()
    operation = Meter(parent=connection)

    async def run() -> None:
        METER.set(operation)
        burn()

    await asyncio.create_task(run())
    assert WORK <= seconds(operation) <= seconds(connection)
    assert operation.root is connection


async def test_work_done_for_a_subscriber_in_a_publishers_step_is_moved_to_it(
    metered: None,
) -> None:
    publisher, subscriber = Meter(), Meter()

    async def publish() -> None:
        METER.set(publisher)
        burn()
        start = cpu()
        burn()  # the push of a live event to the subscriber
        moved(subscriber, cpu() - start)

    await asyncio.create_task(publish())
    assert WORK <= seconds(publisher) < 1.5 * WORK
    assert WORK <= seconds(subscriber) < 1.5 * WORK


async def test_units_so_far_include_the_running_step(metered: None) -> None:
    meter = Meter()

    async def run() -> int:
        METER.set(meter)
        burn()
        return units_so_far(meter)  # in the step still running

    assert (await asyncio.create_task(run())) * UNIT >= WORK
    assert units_so_far(Meter()) == 0  # not this step's meter: its own units only


def test_reservations_count_as_charged_on_the_root() -> None:
    connection = Meter()
    operation = Meter(parent=connection)
    operation.reserve(700)
    assert (operation.requested, connection.charged, operation.charged) == (700, 700, 0)


def test_dry_tells_the_seconds_left() -> None:
    meter = Meter()
    assert meter.dry() == 0.0
    meter.dry_until = time.monotonic() + 5
    assert 4 < Meter(parent=meter).dry() <= 5


async def test_a_callers_last_step_counts_when_closed_before_its_meter_is_put_away(
    metered: None,
) -> None:
    """A request served in one step: its time is its meter's when the view
    settles it, before the step ends (and the meter is no longer current)."""
    meter = Meter()
    seen: list[int] = []

    async def request() -> None:
        reset = METER.set(meter)
        burn()
        close_step(meter)
        seen.append(meter.units)
        METER.reset(reset)
        burn()  # after the meter was put away: nobody's

    await asyncio.create_task(request())
    assert seen[0] * UNIT >= WORK
    assert meter.units == seen[0]


async def test_a_garbage_collection_is_nobodys_work(metered: None) -> None:
    """The collector runs in whatever step allocates: its time is taken back
    from that step's caller."""
    meter = Meter()
    _cycles()

    async def request() -> float:
        METER.set(meter)
        return _collection()

    collecting = await asyncio.create_task(request())
    assert collecting > 0.005, "a measurable collection"
    assert seconds(meter) < collecting / 4


def dear_meter(demotable: bool = True) -> Meter:
    """A query's meter that took twice DEMOTE_AFTER already."""
    meter = Meter()
    meter.demotable = demotable
    meter.add(DEMOTE_AFTER * 2)
    return meter


def started(meter: Meter, *coros: Coroutine[Any, Any, None]) -> list[asyncio.Task[None]]:
    """Tasks started as ``meter``'s caller (they copy its context)."""
    token = METER.set(meter)
    try:
        return [asyncio.create_task(c) for c in coros]
    finally:
        METER.reset(token)


async def _order(dear: Meter, steps_each: int = 3) -> list[str]:
    """A task of ``dear``'s and a cheap one's, ``steps_each`` steps each,
    started in that order: who ran when."""
    log: list[str] = []

    async def steps(name: str) -> None:
        for _ in range(steps_each):
            log.append(name)
            await asyncio.sleep(0)

    (a,) = started(dear, steps("dear"))
    b = asyncio.create_task(steps("cheap"))
    await asyncio.gather(a, b)
    return log


async def test_a_dear_querys_steps_wait_until_what_else_is_ready_has_run(metered: None) -> None:
    """docs/decisions/0055: once a query or mutation took DEMOTE_AFTER, each
    of its steps waits its turn, so a cheap request is not held up behind
    all of them; it still finishes."""
    log = await _order(dear_meter())
    assert log.count("dear") == 3
    assert log.index("dear") > log.index("cheap") + 1  # the cheap one went first, twice
    assert log[-1] == "dear"


async def _beside_a_cheap_task(dear_steps: int, each: float) -> str:
    """``dear_steps`` held steps of ``each`` CPU seconds beside a cheap task
    that takes a step every turn of the loop: who ran when, ``d`` a dear
    step, ``.`` a cheap one."""
    ran: list[str] = []
    done = asyncio.Event()

    async def dear() -> None:
        burn(each)
        ran.append("d")

    async def cheap() -> None:
        while not done.is_set():
            ran.append(".")
            await asyncio.sleep(0)

    tasks = started(dear_meter(), *(dear() for _ in range(dear_steps)))
    watcher = asyncio.create_task(cheap())
    await asyncio.gather(*tasks)
    done.set()
    await watcher
    return "".join(ran)


async def test_held_steps_are_let_go_a_round_of_cpu_at_a_time(metered: None) -> None:
    """docs/decisions/0055: the held steps let go together run until the
    round took ROUND of CPU; the rest wait for the next round, so a cheap
    task never waits behind more than a round of held work (twenty streams
    set up at once by one socket, each step under DEMOTE_AFTER)."""
    marks = await _beside_a_cheap_task(6, ROUND * 0.75)
    assert marks.count("d") == 6
    assert max(len(run) for run in marks.split(".")) == 2, marks  # never all six back to back


async def test_a_round_that_overran_is_paid_back_before_the_next_lets_go(
    metered: None,
) -> None:
    """docs/decisions/0055: a held step is never cut, so a round may take
    more than ROUND; the turns of the loop after it let nothing go until the
    overrun is paid back, so a cheap task's next steps do not each meet
    another overrun (a neighbour's request spans a few turns)."""
    marks = await _beside_a_cheap_task(3, ROUND * 3)
    between = marks[marks.index("d") + 1 : marks.rindex("d")].split("d")
    assert marks.count("d") == 3
    # a round takes three turns of the loop to come (held, armed, let go);
    # an overrun of two rounds adds a round's turns or two
    assert min(len(gap) for gap in between) >= 5, marks


async def test_a_subscriptions_steps_and_a_cheap_querys_are_never_held(metered: None) -> None:
    """The control: the same dear work, not demotable (a live feed), runs in
    the order its steps were ready."""
    assert await _order(dear_meter(demotable=False)) == ["dear", "cheap"] * 3


async def test_a_held_task_cancelled_ends_and_the_next_held_one_still_runs(
    metered: None,
) -> None:
    ran: list[str] = []

    async def dear(name: str) -> None:
        ran.append(name)

    first, second = started(dear_meter(), dear("first"), dear("second"))
    await asyncio.sleep(0)  # both first steps are held
    assert ran == []
    first.cancel()
    await asyncio.wait_for(second, 5)
    assert first.cancelled()
    assert ran == ["second"]


def test_steps_held_on_a_loop_that_closed_do_not_stop_another_loops() -> None:
    """Each loop has its own held steps: a loop closed with one still held
    (a test's, a worker's) leaves the next loop's release working."""

    def held_then(close: bool) -> bool:
        loop = asyncio.new_event_loop()
        install(loop, hold=True)
        done: list[bool] = []

        async def dear() -> None:
            done.append(True)

        async def main() -> None:
            (task,) = started(dear_meter(), dear())
            if close:
                await asyncio.sleep(0)  # held, never let go: the loop ends first
                task.cancel()
            else:
                await asyncio.wait_for(task, 5)

        try:
            loop.run_until_complete(main())
        finally:
            uninstall(loop)
            loop.close()
        return bool(done)

    assert held_then(close=True) is False
    assert held_then(close=False) is True


async def test_a_dear_callers_next_request_waits_from_its_first_step(metered: None) -> None:
    """hold_after 0 (the view's mark for a caller whose last request was
    dear): its steps are held before it has taken anything."""
    fresh = Meter()
    fresh.demotable, fresh.hold_after = True, 0.0
    fresh.add(UNIT)
    log = await _order(fresh, steps_each=2)
    assert log.index("dear") > log.index("cheap")


async def test_a_held_operation_holds_its_connections_next_ones_from_their_start(
    metered: None,
) -> None:
    """docs/decisions/0055: an operation of a WebSocket connection that is
    held marks the connection, whose next operations start in its context:
    they are held from their first step, until DEAR_FOR has passed."""
    connection = Meter(shared=True)
    operation = Meter(parent=connection)
    operation.demotable = True
    operation.add(DEAR_AFTER * 2)
    (task,) = started(operation, asyncio.sleep(0))
    await task
    assert (connection.demotable, connection.hold_after) == (True, 0.0)
    assert 0 < connection.dear_until - time.monotonic() <= DEAR_FOR
    log = await _order(connection, steps_each=2)  # its next operation: held at once
    assert log.index("dear") > log.index("cheap")
    forgiven(connection, connection.dear_until - 0.1)
    assert connection.hold_after == 0.0  # not yet
    forgiven(connection, connection.dear_until)
    assert (connection.demotable, connection.hold_after) == (False, DEMOTE_AFTER)
    assert await _order(connection, steps_each=2) == ["dear", "cheap"] * 2


async def test_an_operation_held_under_dear_after_does_not_mark_its_connection(
    metered: None,
) -> None:
    """docs/decisions/0055: a step just past DEMOTE_AFTER waits its turn, but
    its connection is dear only once the operation took DEAR_AFTER (a
    player's look at its table never is), nor is it for a step held from
    its start (a stream's set-up)."""
    connection = Meter(shared=True)
    operation = Meter(parent=connection)
    operation.demotable = True
    operation.add((DEMOTE_AFTER + DEAR_AFTER) / 2)
    log = await _order(operation, steps_each=2)
    assert log.index("dear") > log.index("cheap")  # held all the same
    assert (connection.demotable, connection.dear_until) == (False, 0.0)
    setup = Meter(parent=connection)
    setup.demotable, setup.hold_after = True, 0.0
    (task,) = started(setup, asyncio.sleep(0))
    await task
    assert (connection.demotable, connection.dear_until) == (False, 0.0)


async def test_nothing_is_held_when_holding_is_off() -> None:
    """MMK_HOLD_DEAR_STEPS off (the default): steps are only timed."""
    loop = asyncio.get_running_loop()
    install(loop)
    try:
        assert await _order(dear_meter()) == ["dear", "cheap"] * 3
    finally:
        uninstall(loop)
