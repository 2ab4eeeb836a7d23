"""Revocation notices over a real Redis (infra/revocations/redis.py,
docs/decisions/0053): a notice reaches the other instances' listeners (and
its own instance's once, at once, never again from its echo); with Redis
away, an announce never fails, its own instance hears it at once, the
notice is sent once Redis is back, and every listener is told to check
again after its reconnect; a periodic check runs whatever happens; a
malformed message is dropped with a line.

Every test uses its own channel prefix; the tests that stop Redis run their
own private ``redis-server``."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from domain.services.auth import token_hash
from infra.revocations.redis import CHANNEL, RedisRevocations
from tests.integration.redis_support import (
    RECOVERING_TEST_TIMEOUT,
    RECOVERY_TIMEOUT,
    PrivateRedis,
    eventually,
    stray_task_errors,
)

pytestmark = [pytest.mark.services, pytest.mark.timeout(60)]

DIGEST = token_hash("a-token")
OTHER = token_hash("another-token")
NOTICE_TIMEOUT = 5.0  # seconds for a notice to cross Redis on a loaded machine


class Listener:
    def __init__(self) -> None:
        self.heard: list[str] = []
        self.misses = 0

    def revoked(self, digest: str) -> None:
        self.heard.append(digest)

    def missed(self) -> None:
        self.misses += 1


Factory = Callable[..., tuple[RedisRevocations, Listener]]


no_stray_task_errors = pytest.fixture(autouse=True)(stray_task_errors)


@pytest.fixture
async def instance(prefix: str) -> AsyncIterator[Factory]:
    """Builds started instances' notices (with a listener) on this test's
    prefix; every one is closed afterwards."""
    made: list[RedisRevocations] = []

    def make(url: str, recheck: float = 3600.0) -> tuple[RedisRevocations, Listener]:
        notices = RedisRevocations(url, prefix, recheck)
        listener = Listener()
        notices.listen(listener)
        notices.start()
        made.append(notices)
        return notices, listener

    yield make
    for notices in made:
        await notices.aclose()


@pytest.fixture
def private_redis(redis_url: str, tmp_path: Path) -> Iterator[PrivateRedis]:
    server = PrivateRedis(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


async def subscribed(*notices: tuple[RedisRevocations, Listener]) -> None:
    """Each is subscribed (it said so with its first ``missed``)."""
    for n, listener in notices:

        def ready(n: RedisRevocations = n, listener: Listener = listener) -> bool:
            return n.connected and listener.misses >= 1

        await eventually(ready, NOTICE_TIMEOUT, "the subscription")


async def test_a_notice_reaches_every_instance_and_its_own_once(
    redis_url: str, instance: Factory
) -> None:
    a, b, c = instance(redis_url), instance(redis_url), instance(redis_url)
    await subscribed(a, b, c)
    await a[0].announce(DIGEST)
    assert a[1].heard == [DIGEST]  # this instance's listener: at once
    for _, listener in (b, c):

        def heard(listener: Listener = listener) -> bool:
            return listener.heard == [DIGEST]

        await eventually(heard, NOTICE_TIMEOUT, "the notice")
    await b[0].announce(OTHER)
    await eventually(lambda: a[1].heard == [DIGEST, OTHER], NOTICE_TIMEOUT, "b's notice")
    await asyncio.sleep(0.2)  # an echo would have come back by now
    assert a[1].heard == [DIGEST, OTHER] and b[1].heard == [DIGEST, OTHER]


async def test_a_malformed_message_is_dropped_with_a_line(
    redis_url: str, prefix: str, instance: Factory, caplog: pytest.LogCaptureFixture
) -> None:
    a = instance(redis_url)
    await subscribed(a)
    admin = aioredis.from_url(redis_url)
    try:
        with caplog.at_level(logging.ERROR, logger="mmk.revocations"):
            await admin.publish(prefix + CHANNEL, "not a digest")
            await admin.publish(prefix + CHANNEL, f"{DIGEST}|elsewhere")
            await eventually(lambda: a[1].heard == [DIGEST], NOTICE_TIMEOUT)
    finally:
        await admin.aclose()
    assert "dropped a malformed notice" in caplog.text


async def test_listeners_check_again_periodically(redis_url: str, instance: Factory) -> None:
    a = instance(redis_url, recheck=0.1)
    await eventually(lambda: a[1].misses >= 3, NOTICE_TIMEOUT, "three checks")


@pytest.mark.timeout(RECOVERING_TEST_TIMEOUT)
async def test_with_redis_away_a_notice_is_heard_here_at_once_and_elsewhere_later(
    private_redis: PrivateRedis, instance: Factory, caplog: pytest.LogCaptureFixture
) -> None:
    """Redis away at the moment of the revocation: the announce returns
    (within the command timeout), this instance heard it; once Redis is back
    the others check again (``missed``: the kept notice, sent again then, may
    reach them before or after they subscribed again) and hear later ones."""
    a, b = instance(private_redis.url), instance(private_redis.url)
    await subscribed(a, b)
    misses = b[1].misses
    private_redis.stop()
    await eventually(lambda: not a[0].connected and not b[0].connected, NOTICE_TIMEOUT)
    with caplog.at_level(logging.WARNING, logger="mmk.revocations"):
        await asyncio.wait_for(a[0].announce(DIGEST), 2.0)
    assert a[1].heard == [DIGEST]
    assert a[0].publish_failures == 1
    assert "publish failed" in caplog.text
    private_redis.start()
    await eventually(lambda: b[1].misses > misses, RECOVERY_TIMEOUT, "a check after the return")
    await eventually(lambda: not a[0]._pending, RECOVERY_TIMEOUT, "the kept notice sent")
    assert b[1].heard in ([], [DIGEST])
    await subscribed(a)
    await b[0].announce(OTHER)
    await eventually(lambda: a[1].heard == [DIGEST, OTHER], RECOVERY_TIMEOUT, "a later notice")
    assert b[0].reconnects >= 1 and a[0].reconnects >= 1
