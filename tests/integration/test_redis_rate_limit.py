"""The Redis rate limiter (infra.rate_limit.RedisLimiter) on a real Redis,
and on a Redis Cluster (tests/redis_cluster.py): limits shared by server
instances, atomic under concurrency, keys that expire and hold no token, and
per-process limits while Redis is away."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from api.graphql.limits import SharedBudgetParserCache
from api.graphql.schema import build_schema
from infra.rate_limit import (
    FALLBACK_SECONDS,
    MUTATION,
    QUERY,
    SUBSCRIPTION,
    VIEW_FRESH,
    Limits,
    RedisLimiter,
    token_key,
)
from infra.redis_client import close, connect
from infra.settlement import Settler
from tests.api.conftest import Client
from tests.api.test_rate_limits import codes, context
from tests.fakes import harness
from tests.redis_cluster import redis_cluster

__all__ = ["redis_cluster"]  # the fixture

Make = Callable[..., RedisLimiter]


def nowhere(make: Make) -> str:
    """A URL of the kind ``make`` uses (one Redis, or a cluster) where
    nothing listens: a cluster client raises ``RedisClusterException`` there,
    which is no ``RedisError``."""
    url: str = make.url  # type: ignore[attr-defined]
    return f"{url.partition('://')[0]}://127.0.0.1:1/0"


@pytest.fixture(params=["redis", "cluster"])
async def make(request: pytest.FixtureRequest) -> AsyncIterator[Make]:
    """Limiters on one fresh key prefix (as instances of one deployment), on
    the test Redis or on a local Redis Cluster; ``make.keys`` the pattern of
    their keys, ``make.url`` where they are."""
    prefix = f"mmk-test-rl-{uuid.uuid4().hex[:12]}:"
    made: list[RedisLimiter] = []
    if request.param == "cluster":
        server: str = request.getfixturevalue("redis_cluster").url
    else:
        server = request.getfixturevalue("redis_url")

    def factory(
        url: str = server, clock: Callable[[], float] = time.monotonic, **limits: int
    ) -> RedisLimiter:
        limiter = RedisLimiter(url, prefix, Limits(**limits), clock)
        made.append(limiter)
        return limiter

    factory.keys = f"{{{prefix}rl}}:*"  # type: ignore[attr-defined]
    factory.url = server  # type: ignore[attr-defined]
    factory.prefix = prefix  # type: ignore[attr-defined]
    yield factory
    admin = connect(server)
    keys = [k async for k in admin.scan_iter(factory.keys)]  # type: ignore[attr-defined]
    if keys:
        await admin.delete(*keys)  # one hash tag: one slot, also on a cluster
    await close(admin)
    for limiter in made:
        await limiter.aclose()


async def test_instances_share_one_budget(make: Make) -> None:
    a, b = make(mutations_per_token=4), make(mutations_per_token=4)
    results = [await x.check(MUTATION, "1.1.1.1", "tok") for x in (a, b, a, b)]
    assert results == [0.0, 0.0, 0.0, 0.0]
    wait = await b.check(MUTATION, "1.1.1.1", "tok")
    assert 14.0 < wait <= 15.0  # 4 a minute: one every 15 s
    assert await a.check(MUTATION, "1.1.1.1", "other") == 0.0


async def test_a_free_call_on_a_fresh_key_keeps_the_budget_shared(make: Make) -> None:
    """A call that costs nothing, first on its keys, is allowed in Redis (the
    script once asked Redis to keep the key for 0 ms, an error, and the
    instance fell back to per-process limits: no longer shared)."""
    a, b = make(mutations_per_token=4), make(mutations_per_token=4)
    assert await a.check(MUTATION, "1.1.1.9", "free", cost=0) == 0.0
    assert await a.check(MUTATION, "1.1.1.9", "free", cost=4) == 0.0
    assert await b.check(MUTATION, "1.1.1.9", "free") > 0  # the same budget, in Redis


async def test_concurrent_requests_never_pass_more_than_the_limit(
    make: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    """60 checks at once over three instances pass exactly the budget's 10.
    A round in which a check fell back to the per-process limits (its
    connect past the fail-fast timeout: a loaded machine opening ~20
    connections a limiter at once) proves nothing: it runs again once the
    fallback is over, on the connections it opened."""
    limiters = [make(mutations_per_ip=10) for _ in range(3)]
    local: list[object] = []
    for limiter in limiters:
        hit = limiter.fallback.hit

        def counted(*args: Any, _hit: Any = hit, **kwargs: Any) -> Any:
            local.append(args)
            return _hit(*args, **kwargs)

        monkeypatch.setattr(limiter.fallback, "hit", counted)
    for attempt in range(4):
        local.clear()
        checks = [limiters[i % 3].check(MUTATION, f"2.2.2.{attempt}", None) for i in range(60)]
        waits = await asyncio.gather(*checks)
        if not local:  # every check went to Redis
            assert sum(w == 0.0 for w in waits) == 10
            return
        await asyncio.sleep(FALLBACK_SECONDS + 0.5)  # the limiters try Redis again
    pytest.fail("every round fell back to per-process limits")


async def test_both_keys_or_none_and_the_cost(make: Make) -> None:
    rl = make(mutations_per_ip=10, mutations_per_token=3)
    assert await rl.check(MUTATION, "3.3.3.3", "a", cost=3) == 0.0
    assert await rl.check(MUTATION, "3.3.3.3", "a") > 0  # the token's budget is spent
    for i in range(7):  # ... and the refusal took nothing from the IP's
        assert await rl.check(MUTATION, "3.3.3.3", f"t{i}") == 0.0
    assert await rl.check(MUTATION, "3.3.3.3", "z") > 0


async def test_keys_expire_and_hold_no_token(make: Make) -> None:
    # each key lives until its bucket refills: 30 s and 20 s here (a budget
    # of 100 a minute would let the IP's key expire within 0.6 s: under
    # load, before the scan below)
    rl = make(subscriptions_per_token=2, subscriptions_per_ip=3)
    token = "a-secret-bearer-token"
    assert await rl.check(SUBSCRIPTION, "4.4.4.4", token) == 0.0
    admin = connect(make.url, decode_responses=True)  # type: ignore[attr-defined]
    try:
        keys = [k async for k in admin.scan_iter(make.keys)]  # type: ignore[attr-defined]
        assert len(keys) == 2 and not any(token in k for k in keys), keys
        for key in keys:
            assert 0 < await admin.pttl(key) <= 60_000
    finally:
        await close(admin)


async def test_without_redis_the_limits_hold_per_process(make: Make) -> None:
    rl = make(nowhere(make), mutations_per_token=2)
    assert await rl.check(MUTATION, None, "t") == 0.0
    assert await rl.check(MUTATION, None, "t") == 0.0
    assert await rl.check(MUTATION, None, "t") > 0


async def test_two_instances_share_one_query_cost_budget(make: Make) -> None:
    """Issue #14: a query's cost is charged, before its validation, to a
    budget every instance on the Redis shares (the async extension)."""
    client = Client(harness())
    catalog = "{ cardCatalog { id house value rare } }"
    budget = 5_000  # three catalogs (1,120 + the base 500), the first's parse included
    a, b = (build_schema(rate_limiter=make(query_cost_per_ip=budget)) for _ in range(2))
    assert SharedBudgetParserCache in {getattr(f, "func", f) for f in a.extensions}
    answers = []
    for schema in (a, b, a, b):
        result = await schema.execute(catalog, context_value=context(client, None, "4.4.4.4"))
        answers.append(codes(result) or ["ok"])
    assert answers == [["ok"], ["ok"], ["ok"], ["RATE_LIMITED"]]
    other = await b.execute(catalog, context_value=context(client, None, "5.5.5.5"))
    assert other.errors is None


async def test_settlements_are_shared_and_go_in_one_call(make: Make) -> None:
    """docs/decisions/0049: measured work charged after the fact, into debt
    (capped), and given back, on every instance's budget at once."""
    a, b = make(query_cost_per_ip=600, query_cost_per_token=6000), make(query_cost_per_ip=600)
    assert await b.check(QUERY, "3.3.3.4", None, 1) == 0.0  # b runs (has found a cluster's nodes)
    assert await a.check(QUERY, "3.3.3.3", "t", 100) == 0.0
    waits = await a.settle([(QUERY, "3.3.3.3", "t", 800), (QUERY, "4.4.4.4", None, 50)])
    assert 29.9 < waits[0] <= 30.0 and waits[1] == 0.0
    assert 29.9 < await b.check(QUERY, "3.3.3.3", None, 1) <= 30.2
    [capped] = await b.settle([(QUERY, "5.5.5.5", None, 10**9)])
    assert 59.9 < capped <= 60.0
    assert await b.settle([(QUERY, "5.5.5.5", None, -(10**9))]) == [0.0]
    assert await a.check(QUERY, "5.5.5.5", None, 600) == 0.0


async def test_settling_while_redis_is_away_charges_the_process(make: Make) -> None:
    away = make(nowhere(make), query_cost_per_ip=600)
    [wait] = await away.settle([(QUERY, "6.6.6.6", None, 900)])
    assert wait == pytest.approx(30.0, abs=0.1)
    assert await away.check(QUERY, "6.6.6.6", None, 1) > 29


async def test_a_request_needs_room_for_its_estimate_but_pays_its_base(make: Make) -> None:
    rl = make(query_cost_per_ip=6000)
    assert await rl.check(QUERY, "7.7.7.7", None, 500, need=5000) == 0.0
    assert await rl.check(QUERY, "7.7.7.7", None, 500, need=5500) == 0.0
    assert await rl.check(QUERY, "7.7.7.7", None, 500, need=5001) > 0


async def held(make: Make, token: str) -> int | None:
    """The TAT Redis holds for ``token``'s work budget (microseconds, Redis'
    clock), or None."""
    admin = connect(make.url)  # type: ignore[attr-defined]
    try:
        key = f"{{{make.prefix}rl}}:{QUERY}:tk:{token_key(token)}"  # type: ignore[attr-defined]
        value = await admin.get(key)
        return None if value is None else int(value)
    finally:
        await close(admin)


class Clock:
    """A monotonic clock the test moves (the view's freshness); Redis keeps
    its own, and every key here lives tens of seconds."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


SEED = 2000
"""Units a test's first settlement charges: 20 s of a 6,000 a minute budget
(10 ms a unit), so the key outlives a slow machine's test."""


async def test_a_fresh_view_checks_the_work_budget_here_and_the_next_round_charges_it(
    make: Make,
) -> None:
    """docs/decisions/0074: once a settlement round brought a token's work
    budget back, its requests are checked and charged on this instance's
    view (no round trip); the next round sends the charge to Redis."""
    rl = make(clock=Clock(), query_cost_per_token=6000)  # 10 ms a unit, a burst of 60 s
    assert await rl.settle([(QUERY, None, "v1", SEED)]) == [0.0]
    seeded = await held(make, "v1")
    assert seeded is not None
    assert await rl.check(QUERY, None, "v1", 1000) == 0.0
    assert rl.owes()
    assert await held(make, "v1") == seeded  # not sent yet
    assert await rl.settle([]) == []
    assert not rl.owes()
    sent = await held(make, "v1")
    assert sent is not None and sent - seeded == 1000 * 10_000  # 1,000 units of 10 ms


async def test_a_budget_spent_on_the_view_is_refused_there(make: Make) -> None:
    """Charges taken on the view count at once: Redis alone (2,000 units
    spent of 6,000) would let the last request go."""
    rl = make(clock=Clock(), query_cost_per_token=6000)
    await rl.settle([(QUERY, None, "v2", SEED)])
    assert await rl.check(QUERY, None, "v2", 3900) == 0.0
    wait = await rl.check(QUERY, None, "v2", 500)
    assert 3.0 < wait <= 4.01  # 2,000 + 3,900 + 500 units: 4 s over the burst, less Redis' time
    assert await held(make, "v2") is not None
    await rl.settle([])
    other = make(query_cost_per_token=6000)  # another instance, no view: Redis
    assert 3.0 < await other.check(QUERY, None, "v2", 500) <= 4.01


async def test_each_instance_sees_the_others_charges_after_its_next_round(make: Make) -> None:
    a = make(clock=Clock(), query_cost_per_token=6000)
    b = make(clock=Clock(), query_cost_per_token=6000)
    await a.settle([(QUERY, None, "v3", SEED)])
    await b.settle([(QUERY, None, "v3", 0)])  # b's view: 2,000 units
    assert await a.check(QUERY, None, "v3", 3000) == 0.0
    assert await b.check(QUERY, None, "v3", 1000) == 0.0  # b does not know a's yet
    assert b.owes()  # decided on b's view
    await a.settle([])
    await b.settle([])  # b's charge goes, and b learns a's
    assert 0.5 < await b.check(QUERY, None, "v3", 600) <= 6.01  # 6,600 units: 6 s over


async def test_a_stale_view_is_not_trusted(make: Make) -> None:
    clock = Clock()
    rl = make(clock=clock, query_cost_per_token=6000)
    await rl.settle([(QUERY, None, "v4", SEED)])
    seeded = await held(make, "v4")
    clock.now += VIEW_FRESH + 0.5
    assert await rl.check(QUERY, None, "v4", 1000) == 0.0
    assert not rl.owes()  # checked and charged in Redis
    after = await held(make, "v4")
    assert seeded is not None and after is not None and after > seeded


async def test_the_settler_sends_what_is_owed_with_no_work_to_settle(make: Make) -> None:
    rl = make(clock=Clock(), query_cost_per_token=6000)
    await rl.settle([(QUERY, None, "v5", SEED)])
    seeded = await held(make, "v5")
    assert await rl.check(QUERY, None, "v5", 300) == 0.0
    await Settler(rl).settle()  # no meter open or ended
    after = await held(make, "v5")
    assert not rl.owes()
    assert seeded is not None and after is not None and after - seeded == 300 * 10_000


async def test_a_charge_made_while_a_round_is_out_is_sent_with_the_next(make: Make) -> None:
    """A round takes what was owed when it starts; a charge on the view made
    while its reply is awaited is neither lost nor sent twice."""
    rl = make(clock=Clock(), query_cost_per_token=6000)
    await rl.settle([(QUERY, None, "va", SEED)])
    seeded = await held(make, "va")
    assert seeded is not None
    assert await rl.check(QUERY, None, "va", 300) == 0.0
    out = asyncio.create_task(rl.settle([]))
    await asyncio.sleep(0)  # the round has taken the 300
    assert await rl.check(QUERY, None, "va", 200) == 0.0  # on the view, meanwhile
    await out
    assert rl.owes()  # the 200, for the next round
    assert await rl.check(QUERY, None, "va", 3550) > 0  # the view kept them: 6,050 units
    assert await held(make, "va") == seeded + 300 * 10_000
    await rl.settle([])
    assert await held(make, "va") == seeded + 500 * 10_000
    # the view holds both: 2,000 + 500 + 3,400 units fit the burst, 200 more do not
    assert await rl.check(QUERY, None, "va", 3400) == 0.0
    assert await rl.check(QUERY, None, "va", 200) > 0


async def test_a_refund_in_the_round_of_its_reservation_is_given_back(make: Make) -> None:
    """The owed reservation goes first in the round, then the measured
    difference: a refund is not lost against a budget that looked full."""
    rl = make(clock=Clock(), query_cost_per_token=6000)
    other = make(query_cost_per_token=6000)
    await rl.settle([(QUERY, None, "v6", 0)])  # a full budget, in the view
    assert await rl.check(QUERY, None, "v6", 500) == 0.0  # reserved on the view
    await rl.settle([(QUERY, None, "v6", -400)])  # it measured 100
    assert await other.check(QUERY, None, "v6b", 100) == 0.0  # 100 units in Redis
    refunded, charged = await held(make, "v6"), await held(make, "v6b")
    assert refunded is not None and charged is not None
    assert abs(refunded - charged) < 1_000_000  # both 1 s ahead (5 s with the refund lost)


async def test_a_charge_on_the_view_is_at_most_a_burst(make: Make) -> None:
    """As the script charges: a request dearer than the whole burst costs
    the burst (6,000 units a minute, a burst of 10 s: 1,000 units)."""
    rl = make(clock=Clock(), query_cost_per_token=6000, cost_burst=10)
    other = make(query_cost_per_token=6000, cost_burst=10)
    await rl.settle([(QUERY, None, "v7", 0)])  # a full budget, in the view
    assert await rl.check(QUERY, None, "v7", 5000) == 0.0  # on the view
    assert await other.check(QUERY, None, "v8", 5000) == 0.0  # in Redis
    await rl.settle([])
    view, redis = await held(make, "v7"), await held(make, "v8")
    assert view is not None and redis is not None
    assert abs(view - redis) < 2_000_000  # both about 10 s ahead (50 s uncapped)


async def test_the_other_kinds_are_checked_in_redis_every_time(make: Make) -> None:
    rl = make(clock=Clock(), mutations_per_token=2, query_cost_per_token=6000)
    await rl.settle([(QUERY, None, "v9", SEED)])
    a = make(mutations_per_token=2)
    assert await rl.check(MUTATION, None, "v9") == 0.0
    assert await a.check(MUTATION, None, "v9") == 0.0
    assert await rl.check(MUTATION, None, "v9") > 0  # the other instance's counted at once
