"""The in-process rate limiter (GCRA, infra.rate_limit), its settings and
the composition root's choice of limiter."""

from __future__ import annotations

import pytest

from infra.bootstrap import limits_of
from infra.rate_limit import (
    MUTATION,
    QUERY,
    SUBSCRIPTION,
    Limits,
    LocalLimiter,
    RedisLimiter,
    budgets,
    build_limiter,
    ip_key,
    token_key,
)
from infra.settings import ENV_VARS, Settings, SettingsError


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def limiter(**limits: int) -> tuple[LocalLimiter, FakeClock]:
    clock = FakeClock()
    return LocalLimiter(Limits(**limits), clock), clock


async def test_a_burst_of_the_limit_then_one_per_interval() -> None:
    rl, clock = limiter(mutations_per_token=6)  # 6 a minute: one per 10 s
    for _ in range(6):
        assert await rl.check(MUTATION, "1.2.3.4", "tok") == 0.0
    assert await rl.check(MUTATION, "1.2.3.4", "tok") == pytest.approx(10.0)
    clock.now += 9.0
    assert await rl.check(MUTATION, "1.2.3.4", "tok") == pytest.approx(1.0)
    clock.now += 1.0
    assert await rl.check(MUTATION, "1.2.3.4", "tok") == 0.0
    assert await rl.check(MUTATION, "1.2.3.4", "tok") == pytest.approx(10.0)
    clock.now += 60.0  # a full minute later the whole burst is back
    for _ in range(6):
        assert await rl.check(MUTATION, "1.2.3.4", "tok") == 0.0


async def test_a_refused_request_is_not_charged() -> None:
    rl, clock = limiter(mutations_per_token=2)
    assert await rl.check(MUTATION, None, "t") == 0.0
    assert await rl.check(MUTATION, None, "t") == 0.0
    for _ in range(100):  # hammering does not push the wait further out
        assert await rl.check(MUTATION, None, "t") == pytest.approx(30.0)
    clock.now += 30.0
    assert await rl.check(MUTATION, None, "t") == 0.0


async def test_tokens_and_kinds_have_their_own_budgets() -> None:
    rl, _ = limiter(mutations_per_token=1, subscriptions_per_token=1)
    assert await rl.check(MUTATION, "ip", "a") == 0.0
    assert await rl.check(MUTATION, "ip", "a") > 0
    assert await rl.check(MUTATION, "ip", "b") == 0.0
    assert await rl.check(SUBSCRIPTION, "ip", "a") == 0.0
    assert await rl.check(SUBSCRIPTION, "ip", "a") > 0


async def test_the_ip_budget_is_shared_by_its_tokens_and_anonymous_callers() -> None:
    rl, _ = limiter(mutations_per_ip=3, mutations_per_token=100)
    assert await rl.check(MUTATION, "9.9.9.9", "a") == 0.0
    assert await rl.check(MUTATION, "9.9.9.9", "b") == 0.0
    assert await rl.check(MUTATION, "9.9.9.9", None) == 0.0
    assert await rl.check(MUTATION, "9.9.9.9", "c") > 0
    assert await rl.check(MUTATION, "8.8.8.8", "c") == 0.0


async def test_a_request_is_charged_to_both_keys_or_to_none() -> None:
    rl, _ = limiter(mutations_per_ip=10, mutations_per_token=2)
    for _ in range(2):
        assert await rl.check(MUTATION, "ip", "a") == 0.0
    for _ in range(5):  # refused by the token's budget: the IP's is not spent
        assert await rl.check(MUTATION, "ip", "a") > 0
    for i in range(8):
        assert await rl.check(MUTATION, "ip", f"b{i}") == 0.0
    assert await rl.check(MUTATION, "ip", "c") > 0


async def test_cost_counts_several_moves_and_is_capped_at_the_burst() -> None:
    rl, clock = limiter(mutations_per_token=10)
    assert await rl.check(MUTATION, None, "t", cost=7) == 0.0
    assert await rl.check(MUTATION, None, "t", cost=4) == pytest.approx(6.0)
    assert await rl.check(MUTATION, None, "t", cost=3) == 0.0
    clock.now += 120
    # A cost above the whole burst would never pass: it costs the burst.
    assert await rl.check(MUTATION, None, "t", cost=50) == 0.0
    assert await rl.check(MUTATION, None, "t") == pytest.approx(6.0)


async def test_a_limit_of_zero_is_off() -> None:
    rl, _ = limiter(mutations_per_ip=0, mutations_per_token=0, subscriptions_per_ip=1)
    for _ in range(1000):
        assert await rl.check(MUTATION, "ip", "t") == 0.0
    assert len(rl) == 0
    assert await rl.check(SUBSCRIPTION, "ip", "t") == 0.0
    assert await rl.check(SUBSCRIPTION, "ip", "t") > 0


async def test_expired_keys_are_swept() -> None:
    rl, clock = limiter(mutations_per_token=5)
    rl.SWEEP_AT = rl._sweep_at = 100
    for i in range(100):
        assert await rl.check(MUTATION, None, f"t{i}") == 0.0
    clock.now += 13  # one request's interval (12 s) has passed for all of them
    assert await rl.check(MUTATION, None, "fresh") == 0.0
    assert len(rl) == 1


def test_keys_hold_no_token_and_group_ipv6_by_64() -> None:
    keys = budgets(Limits(1, 1, 1, 1), MUTATION, "2001:db8:1:2:aaaa::1", "secret-token")
    assert all("secret-token" not in k for k, _, _ in keys)
    assert keys[1][0] == f"m:tk:{token_key('secret-token')}"
    assert ip_key("2001:db8:1:2:aaaa::1") == ip_key("2001:db8:1:2:ffff::9") == "2001:db8:1:2::/64"
    assert ip_key("2001:db8:1:3::1") != ip_key("2001:db8:1:2::1")
    assert ip_key("10.0.0.1") == "10.0.0.1" and ip_key("not:an:ip") == "not:an:ip"


def test_settings_read_the_limits_and_zero_is_off() -> None:
    assert {
        "MMK_RATE_MUTATIONS_TOKEN",
        "MMK_RATE_MUTATIONS_IP",
        "MMK_RATE_SUBSCRIPTIONS_TOKEN",
        "MMK_RATE_SUBSCRIPTIONS_IP",
        "MMK_RATE_QUERY_COST_TOKEN",
        "MMK_RATE_QUERY_COST_IP",
        "MMK_RATE_SERVICE_KEY_CALLS",
        "MMK_FORWARDED_ALLOW_IPS",
    } <= set(ENV_VARS)
    default = Settings.from_env({})
    assert limits_of(default) == Limits(600, 3000, 120, 600, 1_500_000, 3_000_000, 10, 1200)
    assert default.forwarded_allow_ips is None
    s = Settings.from_env(
        {
            "MMK_RATE_MUTATIONS_TOKEN": "0",
            "MMK_RATE_MUTATIONS_IP": "0",
            "MMK_RATE_SUBSCRIPTIONS_TOKEN": "0",
            "MMK_RATE_SUBSCRIPTIONS_IP": "0",
            "MMK_RATE_QUERY_COST_TOKEN": "0",
            "MMK_RATE_QUERY_COST_IP": "0",
            "MMK_RATE_SERVICE_KEY_CALLS": "0",
            "MMK_FORWARDED_ALLOW_IPS": "10.0.0.2",
        }
    )
    assert limits_of(s).off and s.forwarded_allow_ips == "10.0.0.2"
    assert build_limiter(limits_of(s), None, "mmk:") is None


@pytest.mark.parametrize("value", ["-1", "lots", "1.5"])
def test_a_bad_limit_stops_the_server(value: str) -> None:
    with pytest.raises(SettingsError, match="MMK_RATE_MUTATIONS_IP"):
        Settings.from_env({"MMK_RATE_MUTATIONS_IP": value})


async def test_the_limiter_follows_the_bus() -> None:
    local = build_limiter(Limits(1, 0, 0, 0), None, "mmk:")
    assert isinstance(local, LocalLimiter)
    shared = build_limiter(Limits(1, 0, 0, 0), "redis://127.0.0.1:1/0", "mmk:")
    assert isinstance(shared, RedisLimiter)
    await shared.aclose()


async def test_a_request_that_fits_exactly_is_allowed_whatever_the_clock() -> None:
    """Float rounding: ``now + 60 - now - 60`` is not always 0.0; a cost equal
    to the limit must still fit a fresh budget at any time."""
    rl, clock = limiter(subscriptions_per_ip=1, query_cost_per_ip=7)
    for now in (524245.1451745077, 131063.39703226944, 16375.65740168878, 1000.0):
        clock.now = now
        assert await rl.check(SUBSCRIPTION, f"ip{now}", None) == 0.0
        assert await rl.check(QUERY, f"ip{now}", None, 7) == 0.0


async def test_measured_work_is_charged_whatever_the_budget_holds() -> None:
    """docs/decisions/0049: settling charges after the fact, into debt."""
    rl, clock = limiter(query_cost_per_ip=600, query_cost_per_token=1200)
    assert await rl.check(QUERY, "1.2.3.4", "t", 100) == 0.0
    [wait] = await rl.settle([(QUERY, "1.2.3.4", "t", 800)])  # 900 of 600 a minute
    assert wait == pytest.approx(30.0)  # the IP's: 300 units over, at 10 a second
    assert await rl.check(QUERY, "1.2.3.4", "t", 1) == pytest.approx(30.1)
    assert await rl.check(QUERY, "1.2.3.4", "other", 1) > 0  # the IP's budget
    assert await rl.check(QUERY, "5.6.7.8", "t", 1) == 0.0  # the token still has room
    clock.now += 30.1
    assert await rl.check(QUERY, "1.2.3.4", "t", 1) == 0.0


async def test_a_debt_is_capped_and_unused_reservations_are_given_back() -> None:
    rl, _ = limiter(query_cost_per_ip=600)
    [wait] = await rl.settle([(QUERY, "1.2.3.4", None, 10**9)])
    assert wait == pytest.approx(60.0)  # at most a period past a full budget
    rl2, _ = limiter(query_cost_per_ip=600)
    assert await rl2.check(QUERY, "9.9.9.9", None, 600) == 0.0  # the whole budget reserved
    assert await rl2.check(QUERY, "9.9.9.9", None, 1) > 0
    assert await rl2.settle([(QUERY, "9.9.9.9", None, -500)]) == [0.0]  # 100 used
    assert await rl2.check(QUERY, "9.9.9.9", None, 500) == 0.0
    assert await rl2.settle([(QUERY, "9.9.9.9", None, -(10**6))]) == [0.0]
    assert len(rl2) == 0  # given back down to a full budget: nothing kept


async def test_a_request_needs_room_for_its_estimate_but_pays_its_base() -> None:
    """docs/decisions/0049: the estimate gates, the measured work is settled."""
    rl, _ = limiter(query_cost_per_ip=6000)
    assert await rl.check(QUERY, "1.2.3.4", None, 500, need=5000) == 0.0
    assert await rl.check(QUERY, "1.2.3.4", None, 500, need=5500) == 0.0  # 500 charged so far
    assert await rl.check(QUERY, "1.2.3.4", None, 500, need=5001) > 0  # 1,000 charged
    assert await rl.check(QUERY, "1.2.3.4", None, 500, need=10**9) > 0  # never fits


async def test_a_cost_budget_lets_a_burst_of_its_tolerance_through_then_its_rate() -> None:
    """MMK_RATE_COST_BURST: 6,000 units a minute (100 a second), 10 s of
    them (1,000) at once; the request budgets keep their minute's burst."""
    clock = FakeClock()
    rl = LocalLimiter(Limits(query_cost_per_ip=6000, mutations_per_ip=6, cost_burst=10), clock)
    assert await rl.check(QUERY, "1.1.1.1", None, 1000) == 0.0
    assert await rl.check(QUERY, "1.1.1.1", None, 100) == pytest.approx(1.0)
    clock.now += 1.0
    assert await rl.check(QUERY, "1.1.1.1", None, 100) == 0.0
    assert [await rl.check(MUTATION, "1.1.1.1", None) for _ in range(6)] == [0.0] * 6
    [wait] = await rl.settle([(QUERY, "1.1.1.1", None, 10**9)])
    assert wait == pytest.approx(60.0)  # the most debt: a minute past the burst
