"""A player's notifications (issue #25): ``Me.notifications``. Each kind is
an object type made from its dataclass (domain/notifications.py), as the
event kinds are (api/graphql/types/event_kinds.py); a notification holds
one, in the union ``Notice``."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Union

import strawberry

from api.graphql.types.event_kinds import as_graphql, made
from domain.notifications import NOTICE_KINDS
from domain.notifications import Notification as DomainNotification
from domain.services.notifications import NotificationsPage

NOTICE_TYPES: dict[type, type] = {kind: made(kind) for kind in NOTICE_KINDS}
"""The GraphQL type of each kind of notice."""

if TYPE_CHECKING:
    Notice = Any
else:  # a union of the types made above, for Strawberry
    Notice = Annotated[
        Union[tuple(NOTICE_TYPES.values())],  # noqa: UP007
        strawberry.union(
            "Notice", description="What a notification tells: its kind is its `__typename`."
        ),
    ]


@strawberry.type(
    description="Something that happened in one of your games while you may have been "
    "away. No cache key: a value of its page (for one token, `seq` identifies it)."
)
class Notification:
    seq: int = strawberry.field(description="Its place in your notifications: 1, 2, 3...")
    at: datetime = strawberry.field(description="When it happened")
    read_at: datetime | None = strawberry.field(
        description="When you marked it read (`markNotificationsRead`); null: unread"
    )
    game_id: strawberry.ID = strawberry.field(description="The game it is about")
    notice: Notice = strawberry.field(description="What it tells")

    @classmethod
    def from_domain(cls, n: DomainNotification) -> Notification:
        return cls(
            seq=n.seq,
            at=n.at,
            read_at=n.read_at,
            game_id=strawberry.ID(n.notice.game_id),
            notice=as_graphql(n.notice),
        )


@strawberry.type(description="Your notifications after `afterSeq`, oldest first. No cache key.")
class NotificationPage:
    notifications: list[Notification] = strawberry.field(description="This page's")
    has_more: bool = strawberry.field(description="More after the last: ask again after it")
    last_seq: int = strawberry.field(
        description="The last one's seq (`afterSeq` as given when the page is empty): the next "
        "page's `afterSeq`"
    )

    @classmethod
    def from_domain(cls, page: NotificationsPage, after_seq: int) -> NotificationPage:
        items = [Notification.from_domain(n) for n in page.items]
        return cls(
            notifications=items,
            has_more=page.has_more,
            last_seq=page.items[-1].seq if page.items else after_seq,
        )


@strawberry.type(description="Your notifications marked read. No cache key: an answer.")
class NotificationsRead:
    up_to_seq: int = strawberry.field(description="Through this seq")
    marked: int = strawberry.field(description="How many were unread")
