"""What a stream may take (issue #22 item 3, docs/decisions/0049): open
subscriptions per token and per IP in this process (:class:`Slots`), events
a second a connection's streams send from the log (:class:`Pace`), events a
minute a caller's streams replay (:class:`Replays`, by IP and token), and
the caller's cost budgets (a stream whose caller ran them dry ends with
``RATE_LIMITED`` and ``retryAfter``: the client resumes later with
``afterSeq``). Every subscription, every transport: ``gameEvents``,
``seatPresence``, ``lobby``."""

from __future__ import annotations

import asyncio
import math
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

from graphql import GraphQLError

from domain.errors import ErrorCode
from infra.rate_limit import ip_key, token_key
from infra.work_meter import Meter


class Slots:
    """Open subscriptions per token and per client IP (0: no cap)."""

    def __init__(self, per_token: int, per_ip: int) -> None:
        self.per_token, self.per_ip = per_token, per_ip
        self._tokens: Counter[str] = Counter()
        self._ips: Counter[str] = Counter()

    @contextmanager
    def held(self, ip: str | None, token: str | None) -> Iterator[None]:
        """One subscription's slot while it runs; over a cap, ``RATE_LIMITED``
        and nothing held."""
        tk = token_key(token) if token else None
        address = ip_key(ip) if ip else None
        if tk is not None and 0 < self.per_token <= self._tokens[tk]:
            raise _too_many(f"{self.per_token} open subscriptions per token")
        if address is not None and 0 < self.per_ip <= self._ips[address]:
            raise _too_many(f"{self.per_ip} open subscriptions per address")
        if tk is not None:
            self._tokens[tk] += 1
        if address is not None:
            self._ips[address] += 1
        try:
            yield
        finally:
            if tk is not None:
                _drop(self._tokens, tk)
            if address is not None:
                _drop(self._ips, address)

    def __len__(self) -> int:
        return sum(self._ips.values())


def _drop(counts: Counter[str], key: str) -> None:
    counts[key] -= 1
    if counts[key] <= 0:
        del counts[key]


def _refusal(message: str, wait: float) -> GraphQLError:
    """``RATE_LIMITED`` with ``retryAfter`` (the seconds, to the millisecond)."""
    seconds = math.ceil(wait * 1000) / 1000
    return GraphQLError(
        message.format(seconds=seconds),
        extensions={"code": ErrorCode.RATE_LIMITED.value, "retryAfter": seconds},
    )


def _too_many(what: str) -> GraphQLError:
    return _refusal(f"too many subscriptions: at most {what}; end one first", 1.0)


class Pace:
    """What a connection's streams send from the log. Every event keeps the
    pace: a bucket of ``rate`` tokens refilled at ``rate`` a second (0: no
    pace), more wait their turn. A replayed event also takes one of its
    caller's :class:`ReplayMinute` (shared by all of the caller's
    connections: one that reconnects starts with what it left)."""

    __slots__ = ("_at", "_clock", "_level", "minute", "rate")

    def __init__(
        self,
        rate: int,
        clock: Callable[[], float] = time.monotonic,
        minute: ReplayMinute | None = None,
    ) -> None:
        self.rate = rate
        self._clock = clock
        self._level = float(rate)
        self._at = clock()
        self.minute = minute  # None: no cap

    def delay(self) -> float:
        """Takes one event's token; the seconds to wait before sending it."""
        if not self.rate:
            return 0.0
        now = self._clock()
        self._level = min(float(self.rate), self._level + (now - self._at) * self.rate) - 1
        self._at = now
        return 0.0 if self._level >= 0 else -self._level / self.rate

    def replay(self) -> float:
        """Takes one replayed event's share of the minute's: 0.0, or the
        seconds until the caller may replay again (nothing taken)."""
        return self.minute.take() if self.minute is not None else 0.0

    def dry(self) -> float:
        """The seconds until a caller that ran out of replays may replay
        again (0.0: it may now): a new ``gameEvents`` is refused at once
        meanwhile, before it reads the log."""
        return self.minute.dry() if self.minute is not None else 0.0


class ReplayMinute:
    """A caller's replayed events: a bucket of ``per_minute`` refilled over a
    minute. A caller that replays the log over and over (a whole 8-seat game
    is ~670 events), on one connection or on many, is then refused,
    ``RATE_LIMITED``, until the bucket holds :data:`REPLAY_ROOM` again."""

    __slots__ = ("_at", "_clock", "_dry", "_level", "per_minute")

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute, self._clock = per_minute, clock
        self._level = float(per_minute)
        self._at = clock()
        self._dry = False  # ran out: refused until REPLAY_ROOM is back

    def take(self) -> float:
        """One replayed event: 0.0, or the seconds until there is room."""
        wait = self.dry()
        if wait:
            return wait
        if self._level >= 1:
            self._level -= 1
            return 0.0
        self._dry = True
        return self.dry()

    def dry(self) -> float:
        """The seconds until this caller may replay again (0.0: now)."""
        now = self._clock()
        gained = (now - self._at) * self.per_minute / 60
        self._level = min(float(self.per_minute), self._level + gained)
        self._at = now
        room = min(REPLAY_ROOM, self.per_minute)
        if self._dry and self._level >= room:
            self._dry = False
        return (room - self._level) * 60 / self.per_minute if self._dry else 0.0

    @property
    def full(self) -> bool:
        """Nothing taken that has not come back (forgotten at no loss)."""
        self.dry()
        return self._level >= self.per_minute


class Replays:
    """Each caller's :class:`ReplayMinute` in this process, by client IP and
    token (0 a minute: no cap). At most :data:`CALLERS_KEPT` are kept; past
    that, the full ones are forgotten."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute, self._clock = per_minute, clock
        self._minutes: dict[tuple[str | None, str | None], ReplayMinute] = {}

    def of(self, ip: str | None, token: str | None) -> ReplayMinute | None:
        """The caller's minute (None: no cap)."""
        if not self.per_minute:
            return None
        key = (ip_key(ip) if ip else None, token_key(token) if token else None)
        minute = self._minutes.get(key)
        if minute is None:
            if len(self._minutes) >= CALLERS_KEPT:
                self._forget()
            minute = self._minutes[key] = ReplayMinute(self.per_minute, self._clock)
        return minute

    def _forget(self) -> None:
        kept = {k: m for k, m in self._minutes.items() if not m.full}
        self._minutes = kept if len(kept) < CALLERS_KEPT else {}

    def __len__(self) -> int:
        return len(self._minutes)


CALLERS_KEPT = 10_000
"""Callers whose replays a process keeps count of."""

REPLAY_ROOM = 100
"""Replayed events a caller that ran out of its minute's must have
again before its ``retryAfter`` has passed: not one event at a time."""


def replays_dry(wait: float) -> GraphQLError:
    """The error ending a replay of a caller that replayed its minute's."""
    return _refusal(
        "too many events replayed by this caller: resubscribe in {seconds:g} s "
        "(gameEvents: with afterSeq = the last seq you got)",
        wait,
    )


def over_budget(wait: float) -> GraphQLError:
    """The error ending a stream whose caller ran its cost budgets dry."""
    return _refusal(
        "the cost budget ran dry: resubscribe in {seconds:g} s "
        "(gameEvents: with afterSeq = the last seq you got)",
        wait,
    )


async def gate(meter: Meter | None, pace: Pace | None = None, replayed: bool = False) -> None:
    """Before a stream sends an event: a replayed one (from the log) only
    while its caller's budgets have room and it has replays
    left (else ``RATE_LIMITED``); every one keeps the connection's pace."""
    if replayed:
        wait = meter.dry() if meter is not None else 0.0
        if wait:
            raise over_budget(wait)
        wait = pace.replay() if pace is not None else 0.0
        if wait:
            raise replays_dry(wait)
    if pace is not None:
        delay = pace.delay()
        if delay:
            await asyncio.sleep(delay)


TARPIT = 1.0
"""Seconds at most an operation of a caller whose work budgets ran dry waits
before it runs (or is refused): a client that ignores ``retryAfter`` gets
one answer a second, not thousands that each cost the loop."""


async def tarpit(meter: Meter | None) -> None:
    """Waits while the caller's budgets are dry, :data:`TARPIT` at most."""
    if meter is not None:
        wait = meter.dry()
        if wait:
            await asyncio.sleep(min(wait, TARPIT))


def slot(slots: Slots | None, ip: str | None, token: str | None) -> AbstractContextManager[None]:
    """``slots.held(...)``, or nothing held when there are no caps."""
    if slots is None:
        return _nothing()
    return slots.held(ip, token)


@contextmanager
def _nothing() -> Iterator[None]:
    yield
