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
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
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
ONLINE = "not pushed: the player holds the game's stream"


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
            try:
                await self.round()
            except Exception as e:
                if is_unavailable(e):
                    log.warning("webhook delivery: database unavailable; trying again later")
                else:
                    log.exception("webhook delivery failed; trying again later")
            try:
                async with asyncio.timeout(self._t.poll):
                    await self._signal.event.wait()
            except TimeoutError:
                pass
            self._signal.event.clear()

    async def round(self) -> int:
        """Lease and start what is due now; how many attempts began."""
        deps = self._deps
        now = deps.clock.now()
        until = now + timedelta(seconds=2 * self._t.timeout + 5)
        busy = dict(self._busy)

        def lease() -> list[tuple[Endpoint, Secrets, list[Message]]]:
            out = []
            with deps.uow() as uow:
                store = uow.webhooks
                for e in store.endpoints():
                    free = self._t.concurrency - busy.get(e.id, 0)
                    if e.disabled_at is not None or free <= 0:
                        continue
                    taken = store.lease(e.id, now, until, free)
                    secrets = store.secrets(e.id)
                    if taken and secrets is not None:
                        out.append((e, secrets, taken))
                uow.commit()
            return out

        started = 0
        for e, secrets, taken in await deps.run(lease):
            for m in taken:
                self._busy[e.id] = self._busy.get(e.id, 0) + 1
                task = asyncio.create_task(self._deliver(e, secrets, m))
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
            self._signal()  # a slot is free: its endpoint may have more due

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
        return Attempt(at, code, round((time.perf_counter() - began) * 1000, 3), error)

    async def _finish(self, e: Endpoint, m: Message, attempt: Attempt, outcome: Outcome) -> None:
        deps = self._deps

        def write() -> bool:
            with deps.uow() as uow:
                done = uow.webhooks.finish(m, attempt, outcome)
                off = done and outcome.disable
                off = off and uow.webhooks.disable(e.id, attempt.at, Disabled.FAILING)
                uow.commit()
                return off

        self.outcomes[outcome.status.value] += 1
        if await deps.run(write):
            self.outcomes["ENDPOINT_DISABLED"] += 1
            log.warning(
                "webhook endpoint %s disabled: message %s failed every try since %s",
                e.id,
                m.id,
                (m.retry_from or m.created_at).isoformat(),
            )

    @property
    def in_flight(self) -> int:
        return sum(self._busy.values())

    async def idle(self) -> None:
        """Wait for the attempts under way (tests)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def aclose(self) -> None:
        if self._loop_task is not None:
            self._loop_task.cancel()
            await asyncio.gather(self._loop_task, return_exceptions=True)
            self._loop_task = None
        for t in list(self._tasks):
            t.cancel()
        await asyncio.gather(*list(self._tasks), return_exceptions=True)
