"""What Redis raises while away or moving, one node or a cluster
(infra/redis_client.py ``AWAY``): each one makes the rate limiter fall back
to per-process limits, a persisted query a miss, and a presence read
:class:`~domain.ports.PresenceUnavailable`. No Redis needed: the scripts
are stubbed to raise."""

from __future__ import annotations

from typing import Any

import pytest
from redis.exceptions import (
    ClusterDownError,
    ConnectionError,
    MovedError,
    RedisClusterException,
    SlotNotCoveredError,
    TryAgainError,
)

from domain.ports import PresenceUnavailable
from infra.persisted_queries import PersistedQueries, sha256_of
from infra.presence.redis import RedisPresence
from infra.rate_limit import MUTATION, Limits, RedisLimiter

URL = "redis+cluster://127.0.0.1:1/0"  # never reached: the scripts are stubbed
ERRORS = [
    RedisClusterException("Redis Cluster cannot be connected"),
    SlotNotCoveredError("slot 42 not covered"),
    ClusterDownError("CLUSTERDOWN The cluster is down"),
    TryAgainError("TRYAGAIN"),
    MovedError("42 127.0.0.1:7001"),
    ConnectionError("gone"),
]


def raising(error: Exception) -> Any:
    async def script(*_args: object, **_kwargs: object) -> object:
        raise error

    return script


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__)
async def test_the_limiter_falls_back_to_per_process_limits(error: Exception) -> None:
    limiter = RedisLimiter(URL, "mmk-test:", Limits(mutations_per_token=1))
    limiter._script = raising(error)
    try:
        assert await limiter.check(MUTATION, None, "t") == 0.0
        assert await limiter.check(MUTATION, None, "t") > 0  # the process's own budget
    finally:
        await limiter.aclose()


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__)
async def test_a_persisted_query_is_a_miss(error: Exception) -> None:
    store = PersistedQueries(URL, "mmk-test:")
    store._read = raising(error)
    try:
        assert await store.get(sha256_of("{ x }")) is None
    finally:
        await store.aclose()


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__)
async def test_a_presence_read_is_presence_unavailable(error: Exception) -> None:
    presence = RedisPresence(URL, "mmk-test:")
    presence._online = raising(error)
    try:
        with pytest.raises(PresenceUnavailable):
            await presence.online("g")
    finally:
        await presence.aclose()
