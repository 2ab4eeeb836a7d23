"""What each caller's work costs the process, measured as it runs (issue #22,
docs/decisions/0049).

A :class:`Meter` belongs to one caller: an HTTP request, a WebSocket
connection, or one operation inside either (a child, whose time also counts
for its parent). While a meter is the task's :data:`METER`, every step of
that task, and of every task it starts (tasks copy their context), adds the
CPU time the event loop's thread spent on it; work sent to a worker thread
adds that thread's CPU time (:func:`in_thread`). The steps are timed by
wrapping each task's coroutine (:func:`install`, a task factory: public asyncio API), so nothing
a price list could miss escapes the meter: parsing, validation, resolvers,
the database, encoding, writes to the socket.

One cost unit is :data:`UNIT` seconds (half a microsecond), the unit of the
query cost budgets (docs/decisions/0045).
"""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from collections import deque
from collections.abc import Callable, Coroutine, Generator
from contextvars import ContextVar, copy_context
from typing import Any, TypeVar

UNIT = 5e-7
"""Seconds of work per cost unit."""

cpu = time.thread_time
"""The running thread's CPU time, in seconds: a step preempted by the
system, or waiting for the GIL a worker thread holds, is not its caller's
work (nor is a wait on the disk)."""

T = TypeVar("T")


DEMOTE_AFTER = 0.002
"""Seconds of the loop's CPU a query or mutation may take before each of its
further steps waits its turn (docs/decisions/0055)."""


class Meter:
    """One caller's measured work, in seconds. ``parent``: the meter of the
    connection or request it runs in (its time counts there too)."""

    __slots__ = (
        "_threads",
        "charged",
        "dear_until",
        "demotable",
        "dry_until",
        "hold_after",
        "ip",
        "parent",
        "requested",
        "seconds",
        "shared",
        "token",
    )

    def __init__(
        self,
        ip: str | None = None,
        token: str | None = None,
        parent: Meter | None = None,
        *,
        shared: bool = False,
    ) -> None:
        """``shared``: a connection's, its operations each with a child of
        their own (a request's one operation is measured by the request's)."""
        self.shared = shared
        self.seconds = 0.0
        self._threads: list[float] = []  # worker threads append; the loop folds them
        self.ip, self.token, self.parent = ip, token, parent
        self.charged = 0  # units charged to the budgets so far (reserved, then settled)
        self.requested = 0  # units reserved before running (the estimate)
        self.dry_until = 0.0  # monotonic time until which the budgets are dry
        # a query's or mutation's: past hold_after its steps wait their turn
        self.demotable = False
        self.hold_after = DEMOTE_AFTER  # 0.0: a dear caller's next request, from its start
        self.dear_until = 0.0  # a connection held from the start until then (see held)

    @property
    def root(self) -> Meter:
        meter = self
        while meter.parent is not None:
            meter = meter.parent
        return meter

    def add(self, seconds: float) -> None:
        """Loop time, on the event loop's thread."""
        meter: Meter | None = self
        while meter is not None:
            meter.seconds += seconds
            meter = meter.parent

    def add_from_thread(self, seconds: float) -> None:
        """CPU time of a worker thread (appending is atomic; see :attr:`units`)."""
        meter: Meter | None = self
        while meter is not None:
            meter._threads.append(seconds)
            meter = meter.parent

    @property
    def units(self) -> int:
        """The work so far, in cost units (on the loop's thread)."""
        if self._threads:
            done, self._threads = self._threads, []
            self.seconds += sum(done)
        return int(self.seconds / UNIT)

    def reserve(self, units: int) -> None:
        """``units`` charged before the work (the estimate): the settlement
        charges only what the measurement adds to them (or gives back)."""
        self.requested += units
        self.root.charged += units

    def dry(self, now: float | None = None) -> float:
        """Seconds until the caller's budgets have room again (0.0: they have)."""
        until = self.root.dry_until
        if not until:
            return 0.0
        left = until - (time.monotonic() if now is None else now)
        return left if left > 0 else 0.0


METER: ContextVar[Meter | None] = ContextVar("mmk_meter", default=None)
"""The meter of the caller whose work the running task does."""

_step_started = 0.0
"""When the running task's step began (one loop: steps never overlap)."""


def close_step(meter: Meter) -> None:
    """The running step's time so far is ``meter``'s, now (a caller's last
    step ends after its meter is put away and settled); the rest of the
    step counts afresh."""
    global _step_started
    if _step_started and METER.get() is meter:
        now = cpu()
        meter.add(now - _step_started)
        _step_started = now


def units_so_far(meter: Meter) -> int:
    """``meter``'s units, the running step's time so far included (it is
    added when the step ends) when the step is its own or its parent's (an
    operation's result is reported after its meter was put back)."""
    running = 0.0
    current = METER.get()
    if _step_started and current is not None and current in (meter, meter.parent):
        running = cpu() - _step_started
    return meter.units + int(running / UNIT)


def _step(advance: Callable[..., Any], *args: Any) -> Any:
    """One step of a task, its CPU time added to the task's meter."""
    global _step_started
    start = _step_started = cpu()
    try:
        return advance(*args)
    finally:
        _step_started = 0.0
        meter = METER.get()
        if meter is not None:
            meter.add(cpu() - start)


DEAR_AFTER = 0.010
"""Seconds of the loop's CPU after which an operation's caller is dear: a
player's look at its table (a millisecond or three) never is; an abuser's
aliased pages (tens of milliseconds each) are (docs/decisions/0055)."""

DEAR_FOR = 1.0
"""Seconds a caller whose work was held stays dear: its next HTTP requests
(infra/settlement.py), or its WebSocket connection's next operations, wait
their turn from their first step (docs/decisions/0055)."""


def held(meter: Meter) -> None:
    """A step of ``meter``'s operation is held: the connection it belongs to
    (its parent) has its next operations, which start in its context, held
    from their first step for :data:`DEAR_FOR` (the settler lets it go)."""
    connection = meter.parent
    if meter.seconds <= DEAR_AFTER:
        return  # a step or two past DEMOTE_AFTER, or held from its start: not dear
    if connection is not None and not connection.dear_until:
        connection.demotable, connection.hold_after = True, 0.0
        connection.dear_until = time.monotonic() + DEAR_FOR


def forgiven(meter: Meter, now: float) -> None:
    """A connection past its :data:`DEAR_FOR` is held no more."""
    if meter.dear_until and meter.dear_until <= now:
        meter.demotable, meter.hold_after, meter.dear_until = False, DEMOTE_AFTER, 0.0


ROUND = 0.002
"""Seconds of the loop's CPU the held steps let go together may take; those
whose turn comes after that wait for the next round (after the next poll for
I/O), so a request that arrives meanwhile waits for at most this much held
work (docs/decisions/0055). A round that overran (a step is never cut) is
paid back by the next: held work averages a round per turn of the loop."""


class _Turns:
    """One loop's held steps: their futures, oldest first; all are let go
    each time the loop has polled for I/O and queued what that poll brought,
    and run until the round has taken :data:`ROUND`."""

    __slots__ = ("held", "loop", "releasing", "spent")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.held: deque[asyncio.Future[None]] = deque()
        self.releasing = False
        # CPU seconds the steps let go took, less ROUND for every round begun:
        # over ROUND, the turns to come are owed and let nothing go
        self.spent = 0.0

    def wait(self) -> Any:
        """What a held step yields to its task: a future the release
        resolves (``Future.__await__``, as an ``await`` would)."""
        waiting: asyncio.Future[None] = self.loop.create_future()
        self.held.append(waiting)
        if not self.releasing:
            self.releasing = True
            self.loop.call_soon(self._arm)
        return next(iter(waiting.__await__()))

    def _arm(self) -> None:
        """The release, after the loop's next poll for I/O: a timer due now
        runs once the I/O callbacks that poll brought are queued, so what
        arrived meanwhile (another caller's request) goes first."""
        self.loop.call_at(self.loop.time(), self._release)

    def _release(self) -> None:
        """Lets go every step held so far: they run next, after the steps
        of what the last poll brought (one at a time fell behind at
        saturation: the held outgrew what a loop turn let go). A round
        whose steps overran pays it back first: this turn of the loop lets
        nothing go (a cheap request's next step does not meet another
        overrun), the next turn tries again."""
        self.spent = max(0.0, self.spent - ROUND)
        if self.spent > ROUND:
            self.loop.call_soon(self._arm)
            return
        held, self.held = self.held, deque()
        self.releasing = False
        for waiting in held:
            if not waiting.done():  # a held task may have been cancelled
                waiting.set_result(None)


class _Timed(Coroutine[Any, Any, Any]):
    """A task's coroutine, each step timed for the task's meter (read when
    the step ends: a step that sets the meter counts for it). A step of a
    query or mutation that already took :data:`DEMOTE_AFTER` waits until
    what else is ready has run (docs/decisions/0055): a dear request no
    longer holds up a cheap one for the length of all its steps."""

    __slots__ = ("_coro", "_kept", "_turns")

    def __init__(self, coro: Coroutine[Any, Any, Any], turns: _Turns | None) -> None:
        self._coro = coro
        self._turns = turns
        self._kept: tuple[Any] | None = None  # the value of a held step

    def send(self, value: Any) -> Any:
        kept = self._kept
        turns = self._turns
        if kept is not None and turns is not None:  # its turn came
            if turns.spent > ROUND:  # the round is spent: the next one
                return turns.wait()
            self._kept = None
            start = cpu()
            try:
                return _step(self._coro.send, kept[0])
            finally:
                turns.spent += cpu() - start
        meter = METER.get()
        if (
            turns is not None
            and meter is not None
            and meter.demotable
            and meter.seconds > meter.hold_after
        ):
            self._kept = (value,)
            held(meter)
            return turns.wait()
        return _step(self._coro.send, value)

    def throw(self, *args: Any) -> Any:
        self._kept = None  # cancelled while held: the coroutine is told
        return _step(self._coro.throw, *args)

    def close(self) -> None:
        self._coro.close()

    def __await__(self) -> Generator[Any, None, Any]:
        return self._coro.__await__()

    def __getattr__(self, name: str) -> Any:
        # cr_frame, cr_running, cr_code, __name__, __qualname__: asyncio's
        # repr of a task and anyio's look at its coroutine read these
        return getattr(self._coro, name)


def install(loop: asyncio.AbstractEventLoop, *, hold: bool = False) -> None:
    """Time every task's steps from now on (once per loop); ``hold``: a dear
    query's steps wait their turn (docs/decisions/0055, off by default)."""
    previous = loop.get_task_factory()
    if getattr(previous, "meters", False):
        return

    turns = _Turns(loop) if hold else None

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> Any:
        timed = coro if isinstance(coro, _Timed) else _Timed(coro, turns)
        if previous is not None:
            return previous(loop, timed, **kwargs)
        return asyncio.Task(timed, loop=loop, **kwargs)

    factory.meters = True  # type: ignore[attr-defined]
    loop.set_task_factory(factory)
    global _loop_thread
    _loop_thread = threading.get_ident()
    if _collected not in gc.callbacks:
        gc.callbacks.append(_collected)


def uninstall(loop: asyncio.AbstractEventLoop) -> None:
    if getattr(loop.get_task_factory(), "meters", False):
        loop.set_task_factory(None)
    if _collected in gc.callbacks:
        gc.callbacks.remove(_collected)


_gc_started = 0.0
_loop_thread: int | None = None
"""The event loop's thread (the one :func:`install` ran in)."""
_thread_gc = threading.local()
"""In a worker thread: ``seconds`` of garbage collection it ran so far."""


def _collected(phase: str, info: dict[str, int]) -> None:
    """A garbage collection is the process's housekeeping, not the work of
    the caller whose step happened to allocate when it ran: its time is
    taken back from that caller's meter (a full pass at thousands of
    connections takes tens of milliseconds), or, in a worker thread, from
    what :func:`in_thread` charges (a full pass there once put a player's
    token in 45 s of debt)."""
    global _gc_started
    if phase == "start":
        _gc_started = cpu()
        return
    took = cpu() - _gc_started if _gc_started else 0.0
    _gc_started = 0.0
    if threading.get_ident() != _loop_thread:
        _thread_gc.seconds = getattr(_thread_gc, "seconds", 0.0) + took
        return
    meter = METER.get()
    if meter is not None and _step_started:
        meter.add(-took)


def in_thread(fn: Callable[[], T]) -> Callable[[], T]:
    """``fn`` as run in a worker thread, its CPU time added to the caller's
    meter (the thread runs in a copy of the caller's context)."""

    def timed() -> T:
        meter = METER.get()
        if meter is None:
            return fn()
        start, collected = cpu(), getattr(_thread_gc, "seconds", 0.0)
        try:
            return fn()
        finally:
            housekeeping = getattr(_thread_gc, "seconds", 0.0) - collected
            meter.add_from_thread(cpu() - start - housekeeping)

    return timed


def detached(coro: Coroutine[Any, Any, T], name: str | None = None) -> asyncio.Task[T]:
    """A background task that meters nobody: the server's own work (a bus
    reader, a sweeper, a bot's turns), never the work of the caller whose
    request happened to start it."""
    context = copy_context()
    context.run(METER.set, None)
    return asyncio.get_running_loop().create_task(coro, name=name, context=context)


def moved(meter: Meter | None, seconds: float) -> None:
    """``seconds`` of the running step were ``meter``'s work (a live event
    pushed to its subscriber from the publisher's task, or from a bus
    reader): counted for it, and not for the running task's caller."""
    if meter is None:
        return
    running = METER.get()
    if running is meter:
        return
    meter.add(seconds)
    if running is not None:
        running.add(-seconds)
