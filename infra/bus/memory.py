"""The in-process event bus (the embedded default): per-audience channels,
bounded per-subscriber queues. A subscriber that falls behind by more than
its queue is dropped with a clear reason instead of growing memory."""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager

from domain.ports import BusMessage, Resync, SubscriptionClosed

log = logging.getLogger("mmk.bus")

Message = BusMessage | Resync


class QueueSubscription:
    """One subscriber's bounded queue; or, while :meth:`hand_over` runs, a
    direct line from the publisher to its taker."""

    __slots__ = ("_handed", "_items", "_limit", "_take", "_waiter", "closed_reason")

    def __init__(self, limit: int) -> None:
        self._items: deque[Message] = deque()
        self._limit = limit
        self._waiter: asyncio.Future[None] | None = None  # the reader's, while it waits
        self._take: Callable[[Message], bool] | None = None
        self._handed: asyncio.Future[None] | None = None
        self.closed_reason: str | None = None

    def offer(self, message: Message) -> bool:
        """Queue a message (or hand it over); False (and closed) when the
        queue is full or the taker failed."""
        if self.closed_reason is not None:
            return False
        if self._take is not None and not self._items:
            taken = self._taken(self._take, message)
            if taken is not False:
                return taken is True  # None: the taker failed, this is closed
            self._stop_handing()
        if len(self._items) >= self._limit:
            self.close(f"slow subscriber: more than {self._limit} messages behind")
            return False
        self._items.append(message)
        self._wake()
        return True

    def close(self, reason: str) -> None:
        self.closed_reason = reason
        self._items.clear()
        self._wake()
        self._stop_handing()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def hand_over(self, take: Callable[[Message], bool]) -> None:
        """Give each message to ``take`` as it is published, in order,
        without a wake-up per message, until ``take`` returns False for one
        (it stays first in the queue) or the subscription closes; then
        return. A :class:`SubscriptionClosed` raised by ``take`` closes the
        subscription with its reason."""
        while self._items:
            if not self._taken(take, self._items[0]):
                return
            self._items.popleft()
        if self.closed_reason is not None:
            return
        self._take = take
        self._handed = asyncio.get_running_loop().create_future()
        try:
            await self._handed
        finally:
            self._take = self._handed = None

    def _taken(self, take: Callable[[Message], bool], message: Message) -> bool | None:
        """``take(message)``; None when it failed, which closes this
        subscription (never the publisher's loop over the others)."""
        try:
            return take(message)
        except SubscriptionClosed as e:
            self.close(e.reason)
        except Exception:
            log.exception("bus: a subscriber failed to take a message; dropped")
            self.close("internal error")
        return None

    def _stop_handing(self) -> None:
        self._take = None
        if self._handed is not None and not self._handed.done():
            self._handed.set_result(None)

    def __aiter__(self) -> AsyncIterator[Message]:
        return self

    async def __anext__(self) -> Message:
        while True:
            if self._items:
                return self._items.popleft()
            if self.closed_reason is not None:
                raise SubscriptionClosed(self.closed_reason)
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None


class LocalSubscribers:
    """This process's subscribers by channel, each with a bounded queue (both
    buses): a message is offered to every one; one that is too far behind is
    dropped (``dropped``)."""

    def __init__(self, queue_limit: int) -> None:
        self._queue_limit = queue_limit
        self._subs: dict[str, set[QueueSubscription]] = {}
        self.dropped = 0

    def _add(self, channel: str) -> tuple[QueueSubscription, set[QueueSubscription]]:
        sub = QueueSubscription(self._queue_limit)
        subs = self._subs.setdefault(channel, set())
        subs.add(sub)
        return sub, subs

    def _offer(self, channel: str, message: Message) -> None:
        for sub in tuple(self._subs.get(channel, ())):
            if not sub.offer(message):
                self._remove(channel, sub)
                self.dropped += 1

    def _remove(self, channel: str, sub: QueueSubscription) -> None:
        subs = self._subs.get(channel)
        if subs is None:
            return
        subs.discard(sub)
        if not subs:
            del self._subs[channel]
            self._emptied(channel)

    def _emptied(self, channel: str) -> None:
        """The channel's last local subscriber left."""

    def _close_all(self) -> None:
        for subs in self._subs.values():
            for sub in subs:
                sub.close("the server is shutting down")
        self._subs.clear()

    def channels(self) -> tuple[str, ...]:
        """The channels with a local subscriber now."""
        return tuple(self._subs)

    def subscriber_count(self, channel: str | None = None) -> int:
        if channel is not None:
            return len(self._subs.get(channel, ()))
        return sum(len(s) for s in self._subs.values())


class InProcessBus(LocalSubscribers):
    """Channels live in this process only (one server process)."""

    def __init__(self, queue_limit: int = 1000) -> None:
        super().__init__(queue_limit)
        self.published = 0
        self.reconnects = 0  # counted like the Redis bus's; never happens here
        self.publish_failures = 0

    async def publish(self, messages: Sequence[tuple[str, BusMessage]]) -> None:
        self.published += len(messages)
        for channel, message in messages:
            self._offer(channel, message)

    @asynccontextmanager
    async def subscribe(self, channel: str) -> AsyncIterator[QueueSubscription]:
        sub, _ = self._add(channel)
        try:
            yield sub
        finally:
            self._remove(channel, sub)

    async def ping(self) -> bool:
        """Always reachable (readiness asks every bus)."""
        return True

    async def aclose(self) -> None:
        self._close_all()
