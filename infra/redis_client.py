"""Redis clients for what is best effort beside the database (rate limits,
persisted queries, presence): one command waits at most ``REDIS_TIMEOUT``
seconds and is not retried, so a Redis that is away or hangs fails fast and
the caller carries on without it."""

from __future__ import annotations

from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

REDIS_TIMEOUT = 0.5  # seconds for one command before Redis counts as away


def fail_fast(url: str, **options: Any) -> aioredis.Redis:
    return aioredis.from_url(
        url,
        socket_timeout=REDIS_TIMEOUT,
        socket_connect_timeout=REDIS_TIMEOUT,
        retry=Retry(NoBackoff(), 0),
        **options,
    )
