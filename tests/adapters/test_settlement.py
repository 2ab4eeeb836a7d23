"""Measured work settled against the cost budgets (infra/settlement.py,
docs/decisions/0049): an ended request at once (in process), open
connections every round, and callers whose budgets ran dry marked so."""

from __future__ import annotations

import pytest

from infra.rate_limit import QUERY, Limits, LocalLimiter
from infra.settlement import DEAR_LEVEL, DEAR_SHARE, USAGE_HALF_LIFE, Settler
from infra.work_meter import DEAR_FOR, UNIT, Meter
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


def _queries(s: Settler, clock: FakeClock, caller: tuple[str, str | None], **kw: float) -> None:
    """``count`` queries of ``caller``, each taking ``seconds`` of the loop,
    one every ``every`` seconds."""
    for _ in range(int(kw["count"])):
        meter = Meter(*caller)
        meter.demotable = True
        s.open(meter)
        meter.add(kw["seconds"])
        s.close(meter)
        clock.now += kw["every"]


async def test_a_caller_whose_queries_take_over_its_share_of_the_loop_is_dear() -> None:
    """docs/decisions/0055: a caller whose queries took over DEAR_SHARE of the
    loop lately has its next requests wait their turn from their start, for
    DEAR_FOR; a player looking at its table now and then never does, nor does
    one dear look, nor a subscription (not demotable), nor another caller."""
    s, _, clock = settler(per_ip=10**9, hold=True)
    abuser = ("1.2.3.4", "t")
    _queries(s, clock, abuser, count=2, seconds=0.010, every=0.001)
    assert not s.dear(*abuser)  # 20 ms: not yet
    _queries(s, clock, abuser, count=3, seconds=0.010, every=0.001)
    assert s.dear(*abuser)  # ~50 ms in a few ms: well over its share
    assert not s.dear("1.2.3.4", "other")
    player = ("1.2.3.5", "p")
    _queries(s, clock, player, count=240, seconds=0.003, every=0.25)  # a minute of looks
    assert not s.dear(*player)
    _queries(s, clock, player, count=1, seconds=DEAR_LEVEL * 0.7, every=0.0)  # one dear look
    assert not s.dear(*player)
    stream = Meter("1.2.3.6", None)  # not demotable: a subscription's
    s.open(stream)
    stream.add(DEAR_LEVEL * 10)
    s.close(stream)
    assert not s.dear("1.2.3.6", None)
    clock.now += DEAR_FOR
    assert not s.dear(*abuser)
    await s.aclose()


async def test_a_steady_caller_is_dear_just_over_its_share() -> None:
    """The decayed level tracks a steady rate: a caller at 0.8x DEAR_SHARE
    for ten half-lives is not dear; at 1.25x it is."""
    s, _, clock = settler(per_ip=10**9, hold=True)
    every = USAGE_HALF_LIFE / 20
    _queries(s, clock, ("1.1.1.1", None), count=200, seconds=DEAR_SHARE * 0.8 * every, every=every)
    assert not s.dear("1.1.1.1", None)
    _queries(s, clock, ("1.1.1.2", None), count=200, seconds=DEAR_SHARE * 1.25 * every, every=every)
    assert s.dear("1.1.1.2", None)
    await s.aclose()
