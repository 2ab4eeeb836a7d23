"""Redis clients, for one node or for a Redis Cluster (docs/decisions/0068).

``REDIS_URL`` names a cluster with the scheme ``redis+cluster://`` (TLS:
``rediss+cluster://``) and any one of its nodes; then every Redis user gets
a :class:`~redis.asyncio.cluster.RedisCluster`, which finds the others.

:func:`fail_fast` serves what is best effort beside the database (rate
limits, persisted queries, presence): one command waits at most
``REDIS_TIMEOUT`` seconds and is not retried, so a Redis that is away or
hangs fails fast and the caller carries on without it. :func:`subscriber`
serves pub/sub readers, which reconnect by themselves (so redis-py's own
retries are off there too).
"""

from __future__ import annotations

from typing import Any, TypeAlias
from urllib.parse import urlsplit, urlunsplit

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import (
    AskError,
    ClusterDownError,
    RedisClusterException,
    RedisError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

REDIS_TIMEOUT = 0.5  # seconds for one command before Redis counts as away
HEALTH_CHECK = 10  # seconds of silence before a pub/sub connection is pinged
CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}
AWAY = (
    RedisConnectionError,
    RedisTimeoutError,
    RedisClusterException,  # no node reachable; SlotNotCoveredError during a failover
    ClusterDownError,
    TryAgainError,
    AskError,  # and MovedError: a slot on its way to another master
    ConnectionError,
    OSError,
    TimeoutError,
)
"""What Redis (one node or a cluster) raises while it is away or moving,
not for a bug of ours (a script's error is none of these)."""
DISCONNECTS = (RedisError, *AWAY)
"""Any failure of Redis (:data:`AWAY`, or an error reply): what a best
effort user of Redis (rate limits, persisted queries) survives."""


class ClusterClient(RedisCluster):
    """A ``RedisCluster`` that discovers the cluster before its first command
    goes. redis-py 8.1 discovers it inside the first commands, and of many
    sent together by a new client some fail ("Connection closed by server")."""

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        await self.initialize()  # once; then only after a lost connection
        return await super().execute_command(*args, **kwargs)


AnyRedis: TypeAlias = aioredis.Redis | RedisCluster


def cluster_url(url: str) -> str | None:
    """The plain URL of the cluster node ``url`` names (``redis+cluster://``);
    None for a single Redis."""
    parts = urlsplit(url)
    plain = CLUSTER_SCHEMES.get(parts.scheme.lower())
    return None if plain is None else urlunsplit(parts._replace(scheme=plain))


def node_url(url: str, host: str, port: int) -> str:
    """``url`` (plain) pointed at another node, its credentials and options kept."""
    parts = urlsplit(url)
    user = parts.netloc.rpartition("@")[0]
    netloc = f"{user}@{host}:{port}" if user else f"{host}:{port}"
    return urlunsplit(parts._replace(netloc=netloc))


def connect(url: str, **options: Any) -> AnyRedis:
    """A client of the Redis (or the cluster) ``url`` names; no I/O yet."""
    plain = cluster_url(url)
    if plain is None:
        return aioredis.from_url(url, **options)
    return ClusterClient.from_url(plain, **options)


def fail_fast(url: str, **options: Any) -> AnyRedis:
    """A command fails after ``REDIS_TIMEOUT`` seconds, unretried; on a
    cluster, one that meets a master lost to a failover fails too, and the
    next reads the slot map anew."""
    return connect(
        url,
        socket_timeout=REDIS_TIMEOUT,
        socket_connect_timeout=REDIS_TIMEOUT,
        retry=Retry(NoBackoff(), 0),
        **options,
    )


async def read_slot_map(cluster: RedisCluster) -> None:
    """Read the cluster's slot map anew (after a failover it names the new
    masters)."""
    await cluster.initialize()  # the first time; then only after a lost connection
    await cluster.nodes_manager.initialize()


async def close(client: AnyRedis) -> None:
    """Close a client and its connections. A ``RedisCluster`` that lost a
    connection skips its own ``aclose`` until its next command (redis-py
    8.1), so its nodes are closed here as well."""
    await client.aclose()
    if isinstance(client, RedisCluster):
        await client.nodes_manager.aclose()
        await client.nodes_manager.aclose("startup_nodes")


def subscriber(url: str) -> AnyRedis:
    """A client for a pub/sub reader: pinged when silent, never retried
    inside redis-py (its pub/sub would subscribe again by itself, silently,
    and nobody would resync; the readers do that)."""
    return connect(url, health_check_interval=HEALTH_CHECK, retry=Retry(NoBackoff(), 0))
