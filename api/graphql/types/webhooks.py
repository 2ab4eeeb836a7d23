"""The app's webhook endpoints, their delivery log, and a player's push
settings (issue #25, docs/decisions/0064)."""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Annotated

import strawberry

from api.graphql.types.enums import described
from domain import webhooks as w
from domain.errors import BadRequest

_KINDS: type[Enum] = Enum("NoticeKind", {k: k for k in w.KINDS})  # type: ignore[misc]
NoticeKind = described(
    _KINDS,
    "NoticeKind",
    "A kind of notification: `YOUR_TURN` is a `YourTurn` notice, and so on",
    {k: (w.KINDS[k.value].__doc__ or "").split("\n\n")[0].replace("\n    ", " ") for k in _KINDS},
)
WebhookStatus = described(
    w.Status,
    "WebhookStatus",
    "Where a webhook message stands",
    {
        w.Status.PENDING: "Its next try is due at `nextAttemptAt`",
        w.Status.DELIVERED: "Its endpoint answered 2xx",
        w.Status.FAILED: "No 2xx for a day (`MMK_WEBHOOK_RETRY_FOR`): its endpoint was "
        "disabled; `replayWebhookMessage` sends it again",
        w.Status.SKIPPED: "Not sent: the player held the game's stream (they saw it there)",
    },
)
EndpointDisabled = described(
    w.Disabled,
    "WebhookEndpointDisabled",
    "Why an endpoint is disabled",
    {
        w.Disabled.BY_APP: "`setWebhookEndpointEnabled(enabled: false)`",
        w.Disabled.FAILING: "A message failed every try for a day: mend the receiver, enable "
        "the endpoint, then `replayFailedWebhookMessages`",
    },
)


def kinds_of(found: frozenset[str]) -> list[Enum]:
    return [NoticeKind[k] for k in sorted(found)]


@strawberry.type(
    description="An endpoint of your app's backend that takes notifications. Cache key: `id`."
)
class WebhookEndpoint:
    id: strawberry.ID = strawberry.field(description="Its id (`whk_...`)")
    url: str = strawberry.field(description="Where messages are posted")
    kinds: list[NoticeKind] = strawberry.field(description="The kinds of notification it takes")  # type: ignore[valid-type]
    description: str = strawberry.field(description="Your note")
    created_at: datetime = strawberry.field(description="When it was made")
    disabled_at: datetime | None = strawberry.field(description="Disabled since; null: live")
    disabled_reason: EndpointDisabled | None = strawberry.field(  # type: ignore[valid-type]
        description="Why it is disabled"
    )
    previous_secret_until: datetime | None = strawberry.field(
        description="After a rotation: the old secret also signs until then"
    )

    @classmethod
    def from_domain(cls, e: w.Endpoint) -> WebhookEndpoint:
        return cls(
            id=strawberry.ID(e.id),
            url=e.url,
            kinds=kinds_of(e.kinds),
            description=e.description,
            created_at=e.created_at,
            disabled_at=e.disabled_at,
            disabled_reason=e.disabled_reason,
            previous_secret_until=e.previous_until,
        )


@strawberry.type(
    description="An endpoint and its signing secret, shown only here. No cache key: an answer."
)
class WebhookEndpointSecret:
    endpoint: WebhookEndpoint = strawberry.field(description="The endpoint")
    secret: str = strawberry.field(
        description="`whsec_...`: verify each delivery with it (Standard Webhooks); shown once"
    )


@strawberry.type(description="One try of a webhook message. No cache key.")
class WebhookAttempt:
    at: datetime = strawberry.field(description="When it was sent")
    status_code: int | None = strawberry.field(description="The answer's HTTP status; null: none")
    latency_ms: float = strawberry.field(description="Milliseconds to the answer (or the failure)")
    error: str | None = strawberry.field(description="What went wrong; null: a 2xx")


@strawberry.type(
    description="A notification on its way to an endpoint. Cache key: `id` (its status "
    "changes: read it again)."
)
class WebhookMessage:
    id: strawberry.ID = strawberry.field(description="Its `webhook-id`, the same on every try")
    player_id: strawberry.ID = strawberry.field(description="The notified player")
    seq: int = strawberry.field(description="The notification's seq for its player")
    kind: NoticeKind = strawberry.field(description="The notification's kind")  # type: ignore[valid-type]
    game_id: strawberry.ID = strawberry.field(description="The game it is about")
    created_at: datetime = strawberry.field(description="When the notification was made")
    status: WebhookStatus = strawberry.field(description="Where it stands")  # type: ignore[valid-type]
    next_attempt_at: datetime | None = strawberry.field(description="A pending one's next try")
    payload: str = strawberry.field(description="The exact body posted")
    tries: strawberry.Private[list[WebhookAttempt]]

    @strawberry.field(description="Its last tries, oldest first")
    def attempts(
        self,
        last: Annotated[
            int,
            strawberry.argument(description=f"How many, 1 to {w.MAX_ATTEMPTS_SHOWN}"),
        ] = 10,
    ) -> list[WebhookAttempt]:
        if not 1 <= last <= w.MAX_ATTEMPTS_SHOWN:
            raise BadRequest(f"last is 1 to {w.MAX_ATTEMPTS_SHOWN}")
        return self.tries[-last:]

    @classmethod
    def from_domain(cls, m: w.Message) -> WebhookMessage:
        return cls(
            id=strawberry.ID(m.id),
            player_id=strawberry.ID(m.player_id),
            seq=m.seq,
            kind=NoticeKind[m.kind],
            game_id=strawberry.ID(m.game_id),
            created_at=m.created_at,
            status=m.status,
            next_attempt_at=m.next_at if m.status is w.Status.PENDING else None,
            payload=m.payload,
            tries=[
                WebhookAttempt(
                    at=a.at, status_code=a.status_code, latency_ms=a.latency_ms, error=a.error
                )
                for a in m.attempts[-w.MAX_ATTEMPTS_SHOWN :]
            ],
        )


@strawberry.type(description="A page of an endpoint's messages, newest first. No cache key.")
class WebhookMessagePage:
    messages: list[WebhookMessage] = strawberry.field(description="This page")
    has_more: bool = strawberry.field(description="Older ones follow")
    end_cursor: str | None = strawberry.field(description="Pass as `after` for the next page")


@strawberry.type(description="Your push settings. No cache key: an answer.")
class NotificationSettings:
    push: list[NoticeKind] = strawberry.field(  # type: ignore[valid-type]
        description="The kinds your app's backend is sent for you (all until you choose); "
        "every notification is still kept in `me.notifications` and streamed"
    )
