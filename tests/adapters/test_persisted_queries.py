"""The store of automatic persisted queries (infra/persisted_queries.py):
the process's store, Redis shared by every instance (prefixed keys, a TTL
renewed on read), a tampered key never served, Redis failures served as
misses with one warning, and a share per client, in each process and across
the instances (docs/decisions/0052); the shared store on one Redis and on a
Redis Cluster (tests/redis_cluster.py: one hash tag, docs/decisions/0068)."""

from __future__ import annotations

import asyncio
import logging
import socket
import uuid
from collections.abc import Iterator
from typing import NamedTuple

import pytest
import redis

from infra.persisted_queries import PER_CLIENT, PersistedQueries, sha256_of
from infra.redis_client import cluster_url
from tests.redis_cluster import redis_cluster

__all__ = ["redis_cluster"]  # the fixture

QUERY = "{ cardCatalog { id } }"


async def test_without_redis_the_process_remembers() -> None:
    store = PersistedQueries(size=2, per_client=2)
    sha = sha256_of(QUERY)
    assert await store.get(sha) is None
    assert store.register(sha, QUERY) is None  # nothing to write elsewhere
    assert await store.get(sha) == QUERY
    for text in ("{ a }", "{ b }"):  # the least recently used goes
        store.register(sha256_of(text), text)
    assert await store.get(sha) is None
    await store.aclose()


class Shared(NamedTuple):
    """Where the shared store is, its key prefix, a client to look at it."""

    url: str
    prefix: str
    client: redis.Redis | redis.RedisCluster

    def key(self, name: str) -> str:
        """A key of the store: ``:<sha>``, ``-total``, ``-owner``, ..."""
        return f"{{{self.prefix}apq}}{name}"


@pytest.fixture(params=["redis", "cluster"])
def shared(request: pytest.FixtureRequest) -> Iterator[Shared]:
    """A fresh prefix on the test Redis (or a local Redis Cluster), and a
    client to look at it; every key of the prefix is deleted afterwards."""
    prefix = f"mmk-test-apq-{uuid.uuid4().hex[:8]}:"
    client: redis.Redis | redis.RedisCluster
    if request.param == "cluster":
        url: str = request.getfixturevalue("redis_cluster").url
        client = redis.RedisCluster.from_url(cluster_url(url) or url)
    else:
        url = request.getfixturevalue("redis_url")
        client = redis.Redis.from_url(url)
    store = Shared(url, prefix, client)
    try:
        yield store
    finally:
        keys = list(client.scan_iter(store.key("*")))
        if keys:
            client.delete(*keys)  # one hash tag: one slot, also on a cluster
        client.close()


@pytest.mark.services
async def test_a_registration_reaches_every_instance_through_redis(shared: Shared) -> None:
    one = PersistedQueries(shared.url, shared.prefix, ttl=120)
    two = PersistedQueries(shared.url, shared.prefix, ttl=120)
    client = shared.client
    sha = sha256_of(QUERY)
    key = shared.key(f":{sha}")
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
        client.set(shared.key(f":{forged}"), QUERY)
        assert await two.get(forged) is None
    finally:
        await one.aclose()
        await two.aclose()


@pytest.mark.parametrize("scheme", ["redis", "redis+cluster"])
async def test_redis_away_is_a_miss_and_one_warning(
    caplog: pytest.LogCaptureFixture, scheme: str
) -> None:
    """Also on a cluster, whose client raises ``RedisClusterException`` (no
    ``RedisError``) when it reaches no node."""
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    store = PersistedQueries(f"{scheme}://127.0.0.1:{port}/0", "mmk-test:")
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


def texts(n: int, tag: str) -> list[tuple[str, str]]:
    """``n`` distinct query texts and their hashes."""
    out = []
    for i in range(n):
        text = f"{{ cardCatalog {{ id }} }} # {tag} {i}"
        out.append((sha256_of(text), text))
    return out


async def test_one_client_cannot_flush_the_others_texts() -> None:
    """The trial's: 700 registrations pushed the first one out of the 512."""
    store = PersistedQueries()
    theirs = texts(40, "app")
    for n, (sha, text) in enumerate(theirs):
        store.register(sha, text, f"10.0.0.{n % 4}")
    for sha, text in texts(700, "flood"):
        store.register(sha, text, "203.0.113.9")
    for sha, text in theirs:
        assert await store.get(sha) == text
    flood = texts(700, "flood")
    kept = [await store.get(sha) for sha, _ in flood]
    assert kept[-PER_CLIENT:] == [text for _, text in flood[-PER_CLIENT:]]
    assert kept.count(None) == 700 - PER_CLIENT  # its own oldest went
    await store.aclose()


@pytest.mark.services
async def test_with_redis_a_clients_share_holds_across_instances(shared: Shared) -> None:
    """A client registering through two instances still holds its share of
    the shared store; another client's text stays, whichever instance asks."""
    url, prefix, client = shared
    one = PersistedQueries(url, prefix, ttl=120, per_client=4, shared_size=100)
    two = PersistedQueries(url, prefix, ttl=120, per_client=4, shared_size=100)
    try:
        (theirs_sha, theirs), *_ = texts(1, "theirs")
        await _written(one.register(theirs_sha, theirs, "10.0.0.1"))
        flood = texts(10, "flood")
        for n, (sha, text) in enumerate(flood):
            await _written((one if n % 2 else two).register(sha, text, "203.0.113.9"))
        fresh = PersistedQueries(url, prefix, ttl=120)  # nothing in its process
        assert await fresh.get(theirs_sha) == theirs
        found = [await fresh.get(sha) for sha, _ in flood]
        assert found == [None] * 6 + [text for _, text in flood[6:]]  # its last 4
        assert client.zcard(shared.key("-by:203.0.113.9")) == 4
        assert int(client.get(shared.key("-total")) or 0) == 5
        await fresh.aclose()
    finally:
        await one.aclose()
        await two.aclose()


@pytest.mark.services
async def test_with_redis_a_full_store_evicts_from_the_client_holding_most(
    shared: Shared,
) -> None:
    url, prefix, client = shared
    store = PersistedQueries(url, prefix, ttl=120, per_client=3, shared_size=5)
    try:
        ann, bob, cid = texts(3, "ann"), texts(1, "bob"), texts(2, "cid")
        for sha, text in ann:
            await _written(store.register(sha, text, "ann"))
        await _written(store.register(*bob[0], "bob"))
        for sha, text in cid:  # the store is full at the second: ann gives way
            await _written(store.register(sha, text, "cid"))
        assert client.exists(shared.key(f":{ann[0][0]}")) == 0
        alive = [s for s, _ in ann[1:] + bob + cid]
        assert client.exists(*[shared.key(f":{s}") for s in alive]) == 5
        assert int(client.get(shared.key("-total")) or 0) == 5
        # Registered again by another client: renewed, still ann's.
        await _written(store.register(*ann[1], "bob"))
        assert client.hget(shared.key("-owner"), ann[1][0]) == b"ann"
    finally:
        await store.aclose()


async def _written(task: asyncio.Task[None] | None) -> None:
    assert task is not None  # a write to Redis
    await task
