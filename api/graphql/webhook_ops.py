"""The app's backend manages its webhook endpoints (issue #25, 0064), with
a service key of scope ``webhooks``; and a player chooses which kinds are
pushed to them (``updateNotificationSettings``)."""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import Enum
from typing import Annotated

import strawberry

from api.graphql.context import Info
from api.graphql.cursors import cursor_of, decode_cursor
from api.graphql.types.refusal import Refusal
from api.graphql.types.webhooks import (
    NoticeKind,
    NotificationSettings,
    WebhookEndpoint,
    WebhookEndpointSecret,
    WebhookMessage,
    WebhookMessagePage,
    WebhookStatus,
    kinds_of,
)
from domain.errors import BadRequest, DomainError
from domain.services import webhooks as hooks
from domain.services.queries import MAX_PAGE

SCOPE = "webhooks"
Kinds = Annotated[
    list[NoticeKind],  # type: ignore[valid-type]
    strawberry.argument(description="The kinds of notification it takes (one or more)"),
]
EndpointId = Annotated[strawberry.ID, strawberry.argument(description="The endpoint's id")]

SecretResult = Annotated[
    WebhookEndpointSecret | Refusal,
    strawberry.union("WebhookEndpointSecretResult", description="The endpoint, or why not."),
]
EndpointResult = Annotated[
    WebhookEndpoint | Refusal,
    strawberry.union("WebhookEndpointResult", description="The endpoint, or why not."),
]
MessageResult = Annotated[
    WebhookMessage | Refusal,
    strawberry.union("WebhookMessageResult", description="The message, or why not."),
]
PageResult = Annotated[
    WebhookMessagePage | Refusal,
    strawberry.union("WebhookMessagesResult", description="A page, or why not."),
]
SettingsResult = Annotated[
    NotificationSettings | Refusal,
    strawberry.union("NotificationSettingsResult", description="Your settings, or why not."),
]


@strawberry.type(description="An endpoint deleted. No cache key: an answer.")
class WebhookEndpointDeleted:
    endpoint_id: strawberry.ID = strawberry.field(description="The endpoint that is gone")


@strawberry.type(description="Messages sent again. No cache key: an answer.")
class WebhookMessagesReplayed:
    count: int = strawberry.field(description="How many are pending again")


DeletedResult = Annotated[
    WebhookEndpointDeleted | Refusal,
    strawberry.union("DeleteWebhookEndpointResult", description="Done, or why not."),
]
ReplayedResult = Annotated[
    WebhookMessagesReplayed | Refusal,
    strawberry.union("ReplayFailedWebhookMessagesResult", description="Done, or why not."),
]


def _names(kinds: list[Enum]) -> list[str]:
    return [k.value for k in kinds]


def _secret(made: hooks.NewSecret) -> WebhookEndpointSecret:
    return WebhookEndpointSecret(
        endpoint=WebhookEndpoint.from_domain(made.endpoint), secret=made.secret
    )


async def create_webhook_endpoint(
    info: Info,
    url: Annotated[
        str,
        strawberry.argument(
            description="https:// (or http://) URL of your backend; no private, loopback or "
            "link-local address unless the server's settings allow its network"
        ),
    ],
    kinds: Kinds,
    description: Annotated[
        str, strawberry.argument(description="Your note (up to 200 characters)")
    ] = "",
) -> SecretResult:
    await info.context.service(SCOPE)
    try:
        made = await hooks.create_endpoint(info.context.deps, url, _names(kinds), description)
    except DomainError as e:
        return Refusal.of(e)
    return _secret(made)


async def update_webhook_endpoint(
    info: Info,
    id: EndpointId,
    url: Annotated[str | None, strawberry.argument(description="A new URL; null: kept")] = None,
    kinds: Annotated[
        list[NoticeKind] | None,  # type: ignore[valid-type]
        strawberry.argument(description="New kinds; null: kept"),
    ] = None,
    description: Annotated[
        str | None, strawberry.argument(description="A new note; null: kept")
    ] = None,
) -> EndpointResult:
    await info.context.service(SCOPE)
    try:
        changed = await hooks.update_endpoint(
            info.context.deps, str(id), url, None if kinds is None else _names(kinds), description
        )
    except DomainError as e:
        return Refusal.of(e)
    return WebhookEndpoint.from_domain(changed)


async def set_webhook_endpoint_enabled(
    info: Info,
    id: EndpointId,
    enabled: Annotated[bool, strawberry.argument(description="true: live; false: disabled")],
) -> EndpointResult:
    await info.context.service(SCOPE)
    try:
        changed = await hooks.set_enabled(info.context.deps, str(id), enabled)
    except DomainError as e:
        return Refusal.of(e)
    return WebhookEndpoint.from_domain(changed)


async def rotate_webhook_secret(
    info: Info,
    id: EndpointId,
    overlap_seconds: Annotated[
        int | None,
        strawberry.argument(
            description="How long the old secret also signs (0 to 604800; null: 86400)"
        ),
    ] = None,
) -> SecretResult:
    await info.context.service(SCOPE)
    try:
        overlap = None if overlap_seconds is None else timedelta(seconds=overlap_seconds)
        made = await hooks.rotate_secret(info.context.deps, str(id), overlap)
    except DomainError as e:
        return Refusal.of(e)
    return _secret(made)


async def delete_webhook_endpoint(info: Info, id: EndpointId) -> DeletedResult:
    await info.context.service(SCOPE)
    try:
        await hooks.delete_endpoint(info.context.deps, str(id))
    except DomainError as e:
        return Refusal.of(e)
    return WebhookEndpointDeleted(endpoint_id=id)


async def replay_webhook_message(
    info: Info,
    id: Annotated[strawberry.ID, strawberry.argument(description="The message's id (`msg_...`)")],
) -> MessageResult:
    await info.context.service(SCOPE)
    try:
        again = await hooks.replay(info.context.deps, str(id))
    except DomainError as e:
        return Refusal.of(e)
    return WebhookMessage.from_domain(again)


async def replay_failed_webhook_messages(
    info: Info,
    id: EndpointId,
    since: Annotated[datetime, strawberry.argument(description="Those made at or after this time")],
) -> ReplayedResult:
    await info.context.service(SCOPE)
    try:
        count = await hooks.replay_failed(info.context.deps, str(id), since)
    except DomainError as e:
        return Refusal.of(e)
    return WebhookMessagesReplayed(count=count)


async def webhook_endpoints(info: Info) -> list[WebhookEndpoint]:
    await info.context.service(SCOPE)
    return [WebhookEndpoint.from_domain(e) for e in await hooks.list_endpoints(info.context.deps)]


async def webhook_messages(
    info: Info,
    id: EndpointId,
    status: Annotated[
        WebhookStatus | None,  # type: ignore[valid-type]
        strawberry.argument(description="Only these; null: all"),
    ] = None,
    first: Annotated[int, strawberry.argument(description=f"Page size, 1 to {MAX_PAGE}")] = 20,
    after: Annotated[
        str | None, strawberry.argument(description="A cursor (`endCursor`): older ones")
    ] = None,
) -> PageResult:
    await info.context.service(SCOPE)
    try:
        if not 1 <= first <= MAX_PAGE:
            raise BadRequest(f"first is 1 to {MAX_PAGE}")
        before = None if after is None else decode_cursor(after)
        found = await hooks.deliveries(info.context.deps, str(id), status, before, first + 1)
    except DomainError as e:
        return Refusal.of(e)
    page = found[:first]
    last = page[-1] if page else None
    return WebhookMessagePage(
        messages=[WebhookMessage.from_domain(m) for m in page],
        has_more=len(found) > first,
        end_cursor=None if last is None else cursor_of(last.created_at, last.id),
    )


async def update_notification_settings(
    info: Info,
    push: Annotated[
        list[NoticeKind],  # type: ignore[valid-type]
        strawberry.argument(
            description="The kinds your app's backend is sent for you from now on ([]: none)"
        ),
    ],
) -> SettingsResult:
    player = await info.context.require_player()
    try:
        chosen = await hooks.set_push_kinds(info.context.deps, player.id, _names(push))
    except DomainError as e:
        return Refusal.of(e)
    return NotificationSettings(push=kinds_of(chosen))


SERVICE = "Service key, scope `webhooks` (docs/decisions/0064): "
CREATE_WEBHOOK_ENDPOINT = strawberry.mutation(
    resolver=create_webhook_endpoint,
    description=SERVICE + "a live endpoint; each notification of its kinds is posted to it "
    "(Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature`), retried for "
    "a day. Its secret is shown only in this answer. At most 20 endpoints.",
)
UPDATE_WEBHOOK_ENDPOINT = strawberry.mutation(
    resolver=update_webhook_endpoint,
    description=SERVICE + "change an endpoint's URL, kinds or note.",
)
SET_WEBHOOK_ENDPOINT_ENABLED = strawberry.mutation(
    resolver=set_webhook_endpoint_enabled,
    description=SERVICE + "disable an endpoint (its messages wait) or enable it again.",
)
ROTATE_WEBHOOK_SECRET = strawberry.mutation(
    resolver=rotate_webhook_secret,
    description=SERVICE + "a new secret, shown once; deliveries carry a signature by each "
    "secret until the overlap ends, so receivers can switch over.",
)
DELETE_WEBHOOK_ENDPOINT = strawberry.mutation(
    resolver=delete_webhook_endpoint,
    description=SERVICE + "delete an endpoint with its messages and their log.",
)
REPLAY_WEBHOOK_MESSAGE = strawberry.mutation(
    resolver=replay_webhook_message,
    description=SERVICE + "send a delivered, failed or skipped message again (same "
    "`webhook-id` and body), with a fresh day of retries.",
)
REPLAY_FAILED_WEBHOOK_MESSAGES = strawberry.mutation(
    resolver=replay_failed_webhook_messages,
    description=SERVICE + "send again every failed message of an endpoint made since a time "
    "(at most 1,000 a call): after its receiver recovered.",
)
WEBHOOK_ENDPOINTS = strawberry.field(
    resolver=webhook_endpoints, description=SERVICE + "your endpoints, oldest first."
)
WEBHOOK_MESSAGES = strawberry.field(
    resolver=webhook_messages,
    description=SERVICE + "an endpoint's delivery log: its messages, newest first, each with "
    "its attempts (status codes, latency). Done ones are kept 7 days (`MMK_WEBHOOK_RETENTION`).",
)
UPDATE_NOTIFICATION_SETTINGS = strawberry.mutation(
    resolver=update_notification_settings,
    description="Which kinds of your notifications your app's backend is sent (for your "
    "phone's pushes); every notification is still kept and streamed to you.",
)
