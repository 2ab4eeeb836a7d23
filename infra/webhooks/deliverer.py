"""Every instance's webhook deliverer (docs/decisions/0064). It wakes when
a commit on this instance made notifications, and every ``poll`` seconds
for the others' and for retries that came due; each round leases each live
endpoint's due messages, up to its free delivery slots (``concurrency`` at
once an endpoint on this instance), and delivers each: signed, posted,
its attempt logged and its fate decided (domain/webhooks.RetryPolicy).

A lease lasts an attempt and a margin: a deliverer killed mid-delivery
leaves its messages due again when it runs out, to any instance. Receivers
drop repeats by ``webhook-id``.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from domain.ports import PresenceUnavailable
from domain.services.deps import Deps
from domain.services.webhooks import SecretUnreadable, signing_secrets
from domain.webhooks import (
    PUSHED_ONLY_WHEN_AWAY,
    Attempt,
    Disabled,
    Endpoint,
    Message,
    Outcome,
    Secrets,
    Status,
    headers,
)
from infra.db.errors import is_unavailable
from infra.webhooks.sender import DeliveryError
from infra.work_meter import detached

log = logging.getLogger(__name__)
AHEAD = 2
"""Each endpoint's slots are leased this many times over: a freed slot takes
the next message without asking the database (the lease lasts as long)."""
ONLINE = "not pushed: the player holds the game's stream"


_Finished = tuple[Endpoint, Message, Attempt, Outcome, "asyncio.Future[None]"]
"""An attempt's result waiting to be written, and who waits for it."""


@dataclass(frozen=True, slots=True)
class Queued:
    """A leased message waiting for a slot, with its endpoint as last read
    and the end of its lease."""

    endpoint: Endpoint
    secrets: Secrets
    message: Message
    until: datetime


class Sender(Protocol):
    async def post(self, url: str, headers: dict[str, str], body: bytes, timeout: float) -> int: ...


class Signal:
    """Set by a commit that made notifications (``Deps.wake_webhooks``)."""

    def __init__(self) -> None:
        self.event = asyncio.Event()

    def __call__(self) -> None:
        self.event.set()


@dataclass(frozen=True, slots=True)
class Tuning:
    concurrency: int = 4  # attempts at once per endpoint, on this instance
    timeout: float = 10.0  # seconds an attempt may take
    poll: float = 1.0  # seconds between rounds without a wake


class WebhookDeliverer:
    def __init__(
        self,
        deps: Deps,
        sender: Sender,
        signal: Signal,
        tuning: Tuning = Tuning(),
        jitter: Callable[[], float] = random.random,
        setup: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._setup = setup
        self._deps, self._sender, self._signal, self._t = deps, sender, signal, tuning
        self._jitter = jitter
        self._busy: dict[str, int] = {}  # endpoint id -> attempts in flight here
        # leased messages waiting for a slot, by endpoint (a batch ahead: AHEAD)
        self._queue: dict[str, deque[Queued]] = {}
        self._live: list[str] = []  # the live endpoints as last read,
        self._read_at = float("-inf")  # when (time.monotonic())
        # attempts ended, their results waiting for the next write
        self._finished: list[_Finished] = []
        self._writer: asyncio.Task[None] | None = None
        # what this instance's attempts came to (GET /metrics): status -> count
        self.outcomes: Counter[str] = Counter()
        self._tasks: set[asyncio.Task[None]] = set()
        self._loop_task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._loop_task is None:
            self._loop_task = detached(self._loop())

    async def _loop(self) -> None:
        while True:
            if self._setup is not None:  # the settings' endpoint, first (never in the way)
                try:
                    await self._setup()
                    self._setup = None
                except Exception:
                    log.exception("the webhook endpoint of the settings: not set up yet")
            if self._worth_a_round():
                try:
                    await self.round()
                except Exception as e:
                    if is_unavailable(e):
                        log.warning("webhook delivery: database unavailable; trying again later")
                    else:
                        log.exception("webhook delivery failed; trying again later")
            try:
                async with asyncio.timeout(self._until_next()):
                    await self._signal.event.wait()
            except TimeoutError:
                pass
            self._signal.event.clear()

    def _since_read(self) -> float:
        return time.monotonic() - self._read_at

    def _worth_a_round(self) -> bool:
        """With no endpoint live when last read, a commit's wake is not worth
        a read of them: they are read once a ``poll`` (a new endpoint, or one
        enabled, on any instance, is seen that late). Else every commit with
        notifications would cost a transaction for nothing (issue #28)."""
        return bool(self._live) or self._since_read() >= self._t.poll

    def _until_next(self) -> float:
        """How long to wait for a wake: a ``poll``, or, with no endpoint
        live, what is left of it since the last read."""
        left = self._t.poll - self._since_read()
        return left if not self._live and left > 0 else self._t.poll

    async def round(self) -> int:
        """Read the endpoints as they are now (a queued message goes to its
        endpoint's current URL with its current secrets; a deleted or
        disabled endpoint's queue is dropped, its leases left to run out),
        lease what is due, up to each endpoint's free slots and a batch
        ahead, and start what the slots take; how many attempts began. While
        every endpoint has work queued, the database is asked at most once
        a ``poll``: a change of an endpoint reaches its queue that late."""
        deps = self._deps
        now = deps.clock.now()
        per = self._t.concurrency
        until = now + timedelta(seconds=(2 * self._t.timeout + 5) * (1 + AHEAD))
        fresh = time.monotonic() - self._read_at < self._t.poll
        if fresh and self._live and all(self._queue.get(e) for e in self._live):
            return 0  # each endpoint has work queued, its state read under a poll ago
        room = {
            e: per * (1 + AHEAD) - self._busy.get(e, 0) - len(self._queue.get(e, ()))
            for e in {*self._busy, *self._queue}
        }

        def lease() -> list[tuple[Endpoint, Secrets, list[Message]]]:
            out = []
            with deps.uow() as uow:
                store = uow.webhooks
                for e in store.endpoints():
                    if e.disabled_at is not None:
                        continue
                    free = room.get(e.id, per * (1 + AHEAD))
                    taken = store.lease(e.id, now, until, free) if free > 0 else []
                    secrets = store.secrets(e.id)
                    if secrets is not None:
                        out.append((e, secrets, taken))
                uow.commit()
            return out

        found = await deps.run(lease)
        self._read_at = time.monotonic()
        live = {e.id for e, _, _ in found}
        self._live = sorted(live)
        for gone in [e for e in self._queue if e not in live]:
            del self._queue[gone]  # deleted or disabled since: not sent
        started = 0
        for e, secrets, taken in found:
            queue = self._queue.setdefault(e.id, deque())
            now_read = [Queued(e, secrets, q.message, q.until) for q in queue]
            queue.clear()
            queue.extend([*now_read, *(Queued(e, secrets, m, until) for m in taken)])
            started += self._pump(e.id)
        return started

    def _pump(self, endpoint_id: str) -> int:
        """Start queued attempts while the endpoint has free slots (a message
        whose lease ran out meanwhile is dropped: another may have it)."""
        queue, started = self._queue.get(endpoint_id), 0
        now = self._deps.clock.now()
        while queue and self._busy.get(endpoint_id, 0) < self._t.concurrency:
            q = queue.popleft()
            if q.until <= now:
                continue
            self._busy[endpoint_id] = self._busy.get(endpoint_id, 0) + 1
            task = asyncio.create_task(self._deliver(q.endpoint, q.secrets, q.message))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            started += 1
        return started

    async def _deliver(self, e: Endpoint, secrets: Secrets, m: Message) -> None:
        try:
            attempt = await self._attempt(e, secrets, m)
            if attempt is None:
                at = self._deps.clock.now()
                await self._finish(
                    e, m, Attempt(at, None, 0.0, ONLINE), Outcome(Status.SKIPPED, None)
                )
                return
            outcome = self._deps.webhooks.retry.after(m, attempt, self._jitter())
            await self._finish(e, m, attempt, outcome)
        except Exception:
            log.exception("webhook message %s: delivery failed; its lease runs out", m.id)
        finally:
            self._busy[e.id] -= 1
            if not self._pump(e.id):
                self._signal()  # a slot is free and none queued: more may be due

    async def _online(self, m: Message) -> bool:
        presence = self._deps.presence
        if presence is None or m.kind not in PUSHED_ONLY_WHEN_AWAY:
            return False
        try:
            return m.player_id in await presence.online(m.game_id)
        except PresenceUnavailable:
            return False  # when in doubt, push

    async def _attempt(self, e: Endpoint, secrets: Secrets, m: Message) -> Attempt | None:
        if m.tries == 1 and await self._online(m):
            return None
        at = self._deps.clock.now()
        try:
            signing = signing_secrets(self._deps, e.id, secrets, at)
        except SecretUnreadable as x:  # never sent unsigned: logged, retried, in the log
            log.error("webhook endpoint %s: %s", e.id, x)
            return Attempt(at, None, 0.0, str(x))
        sent = headers(signing, m.id, int(at.timestamp()), m.payload)
        began = time.perf_counter()
        try:
            code: int | None = await self._sender.post(
                e.url, sent, m.payload.encode(), self._t.timeout
            )
            error = None if code is not None and 200 <= code < 300 else f"HTTP {code}"
        except DeliveryError as x:
            code, error = None, str(x)
        except Exception as x:  # a bug, never a message stuck: logged, tried again later
            log.exception("webhook message %s: the attempt failed unexpectedly", m.id)
            code, error = None, f"{type(x).__name__}: {x}"[:300]
        return Attempt(at, code, round((time.perf_counter() - began) * 1000, 3), error)

    async def _finish(self, e: Endpoint, m: Message, attempt: Attempt, outcome: Outcome) -> None:
        """Write the attempt and the message's fate; the results of attempts
        that end while one write runs go together in the next."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._finished.append((e, m, attempt, outcome, done))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write_finished())
        await done

    async def _write_finished(self) -> None:
        deps = self._deps
        while self._finished:
            batch, self._finished = self._finished, []

            def write(batch: list[_Finished] = batch) -> list[bool]:
                with deps.uow() as uow:
                    off: list[bool] = []
                    gone: set[str] = set()  # endpoints this batch disabled
                    for e, m, attempt, outcome, _ in batch:
                        done = uow.webhooks.finish(m, attempt, outcome)
                        now_off = done and outcome.disable and e.id not in gone
                        now_off = now_off and uow.webhooks.disable(
                            e.id, attempt.at, Disabled.FAILING
                        )
                        gone |= {e.id} if now_off else set()
                        off.append(now_off)
                    uow.commit()
                    return off

            try:
                disabled = await deps.run(write)
            except Exception as x:
                for *_, fut in batch:
                    if not fut.done():
                        fut.set_exception(x)
                continue
            for (e, m, _, outcome, fut), off in zip(batch, disabled, strict=True):
                self.outcomes[outcome.status.value] += 1
                if off:
                    self.outcomes["ENDPOINT_DISABLED"] += 1
                    log.warning(
                        "webhook endpoint %s disabled: message %s failed every try since %s",
                        e.id,
                        m.id,
                        (m.retry_from or m.created_at).isoformat(),
                    )
                if not fut.done():
                    fut.set_result(None)

    @property
    def in_flight(self) -> int:
        return sum(self._busy.values())

    async def idle(self) -> None:
        """Wait for the attempts under way and queued (tests)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def aclose(self) -> None:
        if self._loop_task is not None:
            self._loop_task.cancel()
            await asyncio.gather(self._loop_task, return_exceptions=True)
            self._loop_task = None
        self._queue.clear()  # their leases run out: due again to any instance
        for t in list(self._tasks):
            t.cancel()
        await asyncio.gather(*list(self._tasks), return_exceptions=True)
        if self._writer is not None:
            self._writer.cancel()
            await asyncio.gather(self._writer, return_exceptions=True)
