"""Use cases: a player's notifications (issue #25): the list since a seq,
and marking them read (written by every change: domain/notifications.py,
domain/services/transaction.py)."""

from __future__ import annotations

from dataclasses import dataclass

from domain.errors import BadRequest
from domain.notifications import Notification
from domain.services.deps import Deps
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
            rows = uow.notifications.page(player_id, after_seq, limit + 1, unread_only)
        return NotificationsPage(rows[:limit], len(rows) > limit)

    return await deps.run(tx)


async def mark_read(deps: Deps, player_id: str, upto_seq: int) -> int:
    """Mark the player's notifications up to ``upto_seq`` read, now; how
    many were unread."""
    if upto_seq < 0:
        raise BadRequest("upToSeq is 0 or more")

    def mark(tx: Tx, _: None) -> int:
        return tx.uow.notifications.mark_read(player_id, upto_seq, tx.now())

    return await transact(deps, None, unkeyed(no_load, mark))
