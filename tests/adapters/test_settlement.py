"""Measured work settled against the cost budgets (infra/settlement.py,
docs/decisions/0049): an ended request at once (in process), open
connections every round, and callers whose budgets ran dry marked so."""

from __future__ import annotations

import pytest

from infra.rate_limit import QUERY, Limits, LocalLimiter
from infra.settlement import Settler
from infra.work_meter import DEAR_AFTER, DEAR_FOR, DEMOTE_AFTER, UNIT, Meter
from tests.adapters.test_rate_limit import FakeClock


def settler(
    per_ip: int = 60_000, per_token: int = 0, *, hold: bool = False
) -> tuple[Settler, LocalLimiter, FakeClock]:
    clock = FakeClock()
    limiter = LocalLimiter(Limits(query_cost_per_ip=per_ip, query_cost_per_token=per_token), clock)
    return Settler(limiter, clock=clock, hold=hold), limiter, clock


def worked(meter: Meter, units: int) -> Meter:
    meter.add(units * UNIT + UNIT / 2)
    return meter


async def test_an_ended_request_pays_what_it_measured_beyond_its_reservation() -> None:
    s, limiter, _ = settler(per_ip=60_000)  # 1,000 units a second
    meter = Meter("1.2.3.4", None)
    s.open(meter)
    assert await limiter.check(QUERY, "1.2.3.4", None, 500) == 0.0
    meter.reserve(500)
    worked(meter, 70_000)  # far more than its estimate: 10 s of budget into debt
    s.close(meter)
    assert meter.charged == 70_000
    assert meter.dry_until == pytest.approx(1000.0 + 10.0)
    assert await limiter.check(QUERY, "1.2.3.4", None, 1) == pytest.approx(10.001)
    await s.aclose()


async def test_a_request_cheaper_than_its_estimate_gets_the_rest_back() -> None:
    s, limiter, _ = settler(per_ip=60_000)
    meter = Meter("1.2.3.4", None)
    s.open(meter)
    assert await limiter.check(QUERY, "1.2.3.4", None, 60_000) == 0.0  # the whole budget
    meter.reserve(60_000)
    s.close(worked(meter, 100))
    assert await limiter.check(QUERY, "1.2.3.4", None, 59_000) == 0.0
    await s.aclose()


async def test_open_connections_are_settled_each_round_and_marked_when_dry() -> None:
    s, _, clock = settler(per_ip=0, per_token=60_000)
    socket, other = Meter("1.2.3.4", "abuser"), Meter("1.2.3.4", "player")
    s.open(socket)
    s.open(other)
    worked(socket, 30_000)
    await s.settle()
    assert (socket.charged, socket.dry(clock.now)) == (30_000, 0.0)
    worked(socket, 60_000)
    worked(other, 10)
    await s.settle()
    assert socket.dry(clock.now) == pytest.approx(30.0, abs=0.01)
    assert other.dry(clock.now) == 0.0  # its own token's budget has room
    clock.now += 30.01
    worked(socket, 1)
    await s.settle()
    assert socket.dry(clock.now) == 0.0
    await s.aclose()


async def test_a_settler_remembers_who_ran_dry_until_when() -> None:
    """For the view's tarpit (docs/decisions/0049): a dry caller's next HTTP
    request waits before it is answered."""
    s, _, clock = settler(per_ip=60_000)
    meter = Meter("1.2.3.4", "t")
    s.open(meter)
    s.close(worked(meter, 70_000))  # 10 s into debt
    assert s.dry_for("1.2.3.4", "t") == pytest.approx(10.0)
    assert s.dry_for("1.2.3.4", "other") == 0.0  # another caller
    clock.now += 10.5
    assert s.dry_for("1.2.3.4", "t") == 0.0
    await s.aclose()


async def test_a_settler_remembers_a_caller_whose_last_request_was_dear() -> None:
    """docs/decisions/0055: a caller whose query took over DEAR_AFTER of the
    loop has its next requests wait their turn from their start, for
    DEAR_FOR; a cheaper one (even past DEMOTE_AFTER), or a dear
    subscription, marks nobody."""
    s, _, clock = settler(per_ip=10**9, hold=True)
    dear, cheap, stream = Meter("1.2.3.4", "t"), Meter("1.2.3.5", None), Meter("1.2.3.6", None)
    dear.demotable = cheap.demotable = True
    for meter in (dear, cheap, stream):
        s.open(meter)
    dear.add(DEAR_AFTER * 2)
    cheap.add((DEMOTE_AFTER + DEAR_AFTER) / 2)
    stream.add(DEMOTE_AFTER * 10)  # not demotable: a subscription's
    for meter in (dear, cheap, stream):
        s.close(meter)
    assert s.dear("1.2.3.4", "t")
    assert not s.dear("1.2.3.4", "other")
    assert not s.dear("1.2.3.5", None)
    assert not s.dear("1.2.3.6", None)
    clock.now += DEAR_FOR
    assert not s.dear("1.2.3.4", "t")
    await s.aclose()
