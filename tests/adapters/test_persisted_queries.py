"""The store of automatic persisted queries (infra/persisted_queries.py):
the process's LRU, Redis shared by every instance (prefixed keys, a TTL
renewed on read), a tampered key never served, and Redis failures served as
misses with one warning."""

from __future__ import annotations

import logging
import socket
import uuid

import pytest
import redis

from infra.persisted_queries import PersistedQueries, sha256_of

QUERY = "{ cardCatalog { id } }"


async def test_without_redis_the_process_remembers() -> None:
    store = PersistedQueries(size=2)
    sha = sha256_of(QUERY)
    assert await store.get(sha) is None
    assert store.register(sha, QUERY) is None  # nothing to write elsewhere
    assert await store.get(sha) == QUERY
    for text in ("{ a }", "{ b }"):  # the least recently used goes
        store.register(sha256_of(text), text)
    assert await store.get(sha) is None
    await store.aclose()


@pytest.mark.services
async def test_a_registration_reaches_every_instance_through_redis(redis_url: str) -> None:
    prefix = f"mmk-test-apq-{uuid.uuid4().hex[:8]}:"
    one = PersistedQueries(redis_url, prefix, ttl=120)
    two = PersistedQueries(redis_url, prefix, ttl=120)
    client = redis.Redis.from_url(redis_url)
    sha = sha256_of(QUERY)
    key = f"{prefix}apq:{sha}"
    forged = sha256_of("{ me { player { id } } }")
    try:
        assert await two.get(sha) is None
        write = one.register(sha, QUERY)
        assert write is not None
        await write
        assert client.get(key) == QUERY.encode()
        client.expire(key, 10)
        assert await two.get(sha) == QUERY
        assert 10 < client.ttl(key) <= 120  # a read renews the TTL
        # A text under a key that is not its hash is never served.
        client.set(f"{prefix}apq:{forged}", QUERY)
        assert await two.get(forged) is None
    finally:
        client.delete(key, f"{prefix}apq:{forged}")
        client.close()
        await one.aclose()
        await two.aclose()


async def test_redis_away_is_a_miss_and_one_warning(caplog: pytest.LogCaptureFixture) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    store = PersistedQueries(f"redis://127.0.0.1:{port}/0", "mmk-test:")
    caplog.set_level(logging.WARNING, logger="mmk.apq")
    sha = sha256_of(QUERY)
    assert await store.get(sha) is None
    write = store.register(sha, QUERY)
    assert write is not None
    await write  # failed quietly
    assert await store.get(sha) == QUERY  # this process still has it
    assert await store.get(sha256_of("{ x }")) is None
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, caplog.text
    await store.aclose()
