"""The in-process event bus (the embedded default): per-audience channels,
bounded per-subscriber queues. A subscriber that falls behind by more than
its queue is dropped with a clear reason instead of growing memory."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from domain.ports import SubscriptionClosed

Message = dict[str, Any]


class QueueSubscription:
    """One subscriber's bounded queue."""

    def __init__(self, limit: int) -> None:
        self._items: deque[Message] = deque()
        self._limit = limit
        self._wake = asyncio.Event()
        self.closed_reason: str | None = None

    def offer(self, message: Message) -> bool:
        """Queue a message; False (and closed) when the queue is full."""
        if self.closed_reason is not None:
            return False
        if len(self._items) >= self._limit:
            self.close(f"slow subscriber: more than {self._limit} messages behind")
            return False
        self._items.append(message)
        self._wake.set()
        return True

    def close(self, reason: str) -> None:
        self.closed_reason = reason
        self._items.clear()
        self._wake.set()

    def __aiter__(self) -> AsyncIterator[Message]:
        return self

    async def __anext__(self) -> Message:
        while True:
            if self._items:
                return self._items.popleft()
            if self.closed_reason is not None:
                raise SubscriptionClosed(self.closed_reason)
            self._wake.clear()
            await self._wake.wait()


class InProcessBus:
    """Channels live in this process only (one server process)."""

    def __init__(self, queue_limit: int = 1000) -> None:
        self._queue_limit = queue_limit
        self._channels: dict[str, set[QueueSubscription]] = {}
        self.published = 0
        self.dropped = 0
        self.reconnects = 0  # counted like the Redis bus's; never happens here
        self.publish_failures = 0

    async def publish(self, messages: Sequence[tuple[str, Message]]) -> None:
        self.published += len(messages)
        for channel, message in messages:
            for sub in tuple(self._channels.get(channel, ())):
                if not sub.offer(message):
                    self._remove(channel, sub)
                    self.dropped += 1

    @asynccontextmanager
    async def subscribe(self, channel: str) -> AsyncIterator[QueueSubscription]:
        sub = QueueSubscription(self._queue_limit)
        self._channels.setdefault(channel, set()).add(sub)
        try:
            yield sub
        finally:
            self._remove(channel, sub)

    def _remove(self, channel: str, sub: QueueSubscription) -> None:
        subs = self._channels.get(channel)
        if subs is not None:
            subs.discard(sub)
            if not subs:
                del self._channels[channel]

    def subscriber_count(self, channel: str | None = None) -> int:
        if channel is not None:
            return len(self._channels.get(channel, ()))
        return sum(len(s) for s in self._channels.values())

    async def aclose(self) -> None:
        for subs in self._channels.values():
            for sub in subs:
                sub.close("the server is shutting down")
        self._channels.clear()
