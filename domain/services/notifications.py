"""Use cases: a player's notifications (issue #25): the list since a seq,
the live stream, and marking them read (written by every change:
domain/notifications.py, domain/services/transaction.py)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import dataclass

from domain.channels import notice_channel
from domain.errors import BadRequest
from domain.notifications import Notification
from domain.ports import Resync
from domain.services.deps import Deps
from domain.services.paging import in_pages
from domain.services.queries import check_limit
from domain.services.transaction import Tx, no_load, transact, unkeyed


@dataclass(frozen=True, slots=True)
class NotificationsPage:
    """The player's notifications after a seq, oldest first; more to come."""

    items: list[Notification]
    has_more: bool


async def my_notifications(
    deps: Deps, player_id: str, after_seq: int, limit: int, unread_only: bool
) -> NotificationsPage:
    """The player's notifications after ``after_seq`` (0: from the first),
    oldest first; ``unread_only``: those not marked read."""
    check_limit(limit)
    if after_seq < 0:
        raise BadRequest("afterSeq is 0 or more")

    def tx() -> NotificationsPage:
        with deps.uow() as uow:
            check_after(uow.notifications.last_seq(player_id), after_seq)
            rows = uow.notifications.page(player_id, after_seq, limit + 1, unread_only)
        return NotificationsPage(rows[:limit], len(rows) > limit)

    return await deps.run(tx)


def check_after(last_seq: int, after_seq: int) -> None:
    """``BAD_INPUT`` for a seq past the player's last: its stream would wait
    for seqs already counted as seen (as ``gameEvents`` refuses it)."""
    if after_seq > last_seq:
        raise BadRequest(f"afterSeq {after_seq} is past your last notification's seq {last_seq}")


async def mark_read(deps: Deps, player_id: str, upto_seq: int) -> int:
    """Mark the player's notifications up to ``upto_seq`` read, now; how
    many were unread."""
    if upto_seq < 0:
        raise BadRequest("upToSeq is 0 or more")

    def mark(tx: Tx, _: None) -> int:
        return tx.uow.notifications.mark_read(player_id, upto_seq, tx.now())

    return await transact(deps, None, unkeyed(no_load, mark))


SWEEP_BATCH = 1000
"""Notifications one transaction of the expiry sweep deletes at most."""


async def expire_read(deps: Deps, batch: int = SWEEP_BATCH) -> int:
    """Delete the notifications read longer than ``deps.notice_retention``
    ago, a batch a transaction; how many (the unread are kept)."""
    total = 0
    while True:

        def sweep(tx: Tx, _: None) -> int:
            return tx.uow.notifications.delete_read(tx.now() - deps.notice_retention, batch)

        deleted = await transact(deps, None, unkeyed(no_load, sweep))
        total += deleted
        if deleted < batch:
            return total


async def notification_events(
    deps: Deps, player_id: str, after_seq: int
) -> AsyncGenerator[Notification, None]:
    """The player's notifications after ``after_seq``: the stored ones
    first, then each as its change commits, on any instance; none missed,
    none twice, in seq order (their channel is the player's alone). A gap
    (a message lost, or the bus reconnecting) is filled from the store."""
    if after_seq < 0:
        raise BadRequest("afterSeq is 0 or more")

    def last() -> int:
        with deps.uow() as uow:
            return uow.notifications.last_seq(player_id)

    check_after(await deps.run(last), after_seq)
    at = after_seq

    def read(after: int, size: int) -> list[Notification]:
        with deps.uow() as uow:
            return uow.notifications.page(player_id, after, size, False)

    async def stored(upto: int | None = None) -> AsyncGenerator[Notification, None]:
        nonlocal at
        async with aclosing(in_pages(deps, read, at, REPLAY_PAGE, upto)) as rows:
            async for n in rows:
                at = n.seq
                yield n

    async with deps.bus.subscribe(notice_channel(player_id)) as sub:
        async with aclosing(stored()) as backlog:
            async for n in backlog:
                yield n
        async for msg in sub:
            if isinstance(msg, Resync):
                async with aclosing(stored()) as backlog:
                    async for n in backlog:
                        yield n
                continue
            if not isinstance(msg, Notification) or msg.seq <= at:
                continue
            if msg.seq > at + 1:  # a gap: from the store
                async with aclosing(stored(msg.seq - 1)) as backlog:
                    async for n in backlog:
                        yield n
            at = msg.seq
            yield msg


REPLAY_PAGE = 50
"""Notifications a stream reads from the store at a time."""
