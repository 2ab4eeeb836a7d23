"""Use cases: the app's webhook endpoints (issue #25, docs/decisions/0064),
managed with a service key (scope ``webhooks``): made with a secret shown
once, listed, disabled and enabled, their secret rotated with an overlap,
deleted; their delivery log read and a message sent again. And each
player's choice of the kinds pushed to them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from domain.errors import BadRequest, NotFound
from domain.ports import WebhookStore
from domain.services.deps import Deps
from domain.services.sealing import seal, unseal
from domain.services.transaction import Tx, no_load, transact, unkeyed
from domain.webhooks import (
    ALL_KINDS,
    MAX_ENDPOINTS,
    SECRET_BYTES,
    Disabled,
    Endpoint,
    Message,
    Secrets,
    Status,
    check_description,
    check_kinds,
    check_secret,
    check_url,
    new_secret,
)

SEAL = "mmk-webhook-secret"
MAX_OVERLAP = timedelta(days=7)
MAX_REPLAY = 1000
MAX_WAITING = 10_000
"""Pending messages given a fresh day when their endpoint is enabled again."""


@dataclass(frozen=True, slots=True)
class NewSecret:
    """An endpoint and its new secret (shown once)."""

    endpoint: Endpoint
    secret: str


def _sealed(deps: Deps, endpoint_id: str, secret: str) -> str:
    if not deps.keys.secret:
        raise RuntimeError("no server secret (KeyPolicy.secret): webhooks need one")
    return seal(deps.keys.secret, SEAL, endpoint_id, secret)


class SecretUnreadable(Exception):
    """An endpoint's secret was sealed with another server key
    (``MMK_SECRET_KEY`` changed): nothing can be signed until the app
    rotates it."""


def signing_secrets(deps: Deps, endpoint_id: str, s: Secrets, now: datetime) -> list[str]:
    """The secrets that sign an attempt now: the current one, and the
    previous one until its overlap ends (dropped if unreadable)."""
    current = unseal(deps.keys.secret, SEAL, endpoint_id, s.current)
    if current is None:
        raise SecretUnreadable(
            "the endpoint's secret cannot be read (the server's MMK_SECRET_KEY changed?): "
            "rotateWebhookSecret"
        )
    out = [current]
    if s.previous is not None and s.previous_until is not None and now < s.previous_until:
        previous = unseal(deps.keys.secret, SEAL, endpoint_id, s.previous)
        out += [] if previous is None else [previous]
    return out


def _fresh_secret(deps: Deps) -> str:
    raw = hashlib.sha256(deps.ids.new_token().encode()).digest()[:SECRET_BYTES]
    return new_secret(raw)


async def create_endpoint(
    deps: Deps, url: str, kinds: list[str], description: str, secret: str | None = None
) -> NewSecret:
    """A live endpoint for these kinds; its secret (``whsec_...``) is
    returned this once. At most 20."""
    target = check_url(url, deps.webhooks.allowed)
    allowed, text = check_kinds(kinds), check_description(description)
    chosen = secret if secret is not None else _fresh_secret(deps)
    check_secret(chosen)

    def add(tx: Tx, _: None) -> Endpoint:
        if len(tx.uow.webhooks.endpoints()) >= MAX_ENDPOINTS:
            raise BadRequest(f"at most {MAX_ENDPOINTS} webhook endpoints: delete one first")
        e = Endpoint("whk_" + tx.new_id(), target, allowed, text, tx.now())
        tx.uow.webhooks.add_endpoint(e, Secrets(_sealed(deps, e.id, chosen)))
        return e

    endpoint = await transact(deps, None, unkeyed(no_load, add))
    return NewSecret(endpoint, chosen)


async def ensure_settings_endpoint(
    deps: Deps, endpoint_id: str, url: str, kinds: list[str], secret: str
) -> Endpoint:
    """The endpoint the settings name (``MMK_WEBHOOK_URL``), made or brought
    up to date at start; the secret is the operator's."""
    target = check_url(url, deps.webhooks.allowed)
    allowed = check_kinds(kinds)
    check_secret(secret)

    def put(tx: Tx, _: None) -> Endpoint:
        found = _find(tx.uow.webhooks, endpoint_id)
        sealed = Secrets(_sealed(deps, endpoint_id, secret))
        if found is None:
            e = Endpoint(endpoint_id, target, allowed, "from the settings", tx.now())
            tx.uow.webhooks.add_endpoint(e, sealed)
            return e
        e = replace(found, url=target, kinds=allowed)
        tx.uow.webhooks.save_endpoint(e)
        tx.uow.webhooks.save_secrets(endpoint_id, sealed)
        return e

    return await transact(deps, None, unkeyed(no_load, put))


async def list_endpoints(deps: Deps) -> list[Endpoint]:
    def read() -> list[Endpoint]:
        with deps.uow() as uow:
            return uow.webhooks.endpoints()

    return await deps.run(read)


def _find(store: WebhookStore, endpoint_id: str) -> Endpoint | None:
    return next((e for e in store.endpoints() if e.id == endpoint_id), None)


def _get(store: WebhookStore, endpoint_id: str) -> Endpoint:
    found = _find(store, endpoint_id)
    if found is None:
        raise NotFound(f"no webhook endpoint {endpoint_id!r}")
    return found


async def set_enabled(deps: Deps, endpoint_id: str, enabled: bool) -> Endpoint:
    """Disable (its messages wait) or enable (they go on, with a fresh day
    of retries from now; failed ones stay failed until replayed) an endpoint."""

    def change(tx: Tx, _: None) -> Endpoint:
        e = _get(tx.uow.webhooks, endpoint_id)
        if enabled and e.disabled_at is not None:
            e = replace(e, disabled_at=None, disabled_reason=None)
            # its waiting messages get a fresh day from now, not what is left of theirs
            waiting = tx.uow.webhooks.messages(endpoint_id, Status.PENDING, None, MAX_WAITING)
            tx.uow.webhooks.replay([m.id for m in waiting], tx.now())
        elif e.disabled_at is None:
            e = replace(e, disabled_at=tx.now(), disabled_reason=Disabled.BY_APP)
        tx.uow.webhooks.save_endpoint(e)
        return e

    return await transact(deps, None, unkeyed(no_load, change))


async def update_endpoint(
    deps: Deps, endpoint_id: str, url: str | None, kinds: list[str] | None, description: str | None
) -> Endpoint:
    """Change what is given; new messages follow it at once."""
    target = None if url is None else check_url(url, deps.webhooks.allowed)
    allowed = None if kinds is None else check_kinds(kinds)
    text = None if description is None else check_description(description)

    def change(tx: Tx, _: None) -> Endpoint:
        e = _get(tx.uow.webhooks, endpoint_id)
        e = replace(
            e,
            url=target or e.url,
            kinds=allowed or e.kinds,
            description=e.description if text is None else text,
        )
        tx.uow.webhooks.save_endpoint(e)
        return e

    return await transact(deps, None, unkeyed(no_load, change))


async def rotate_secret(deps: Deps, endpoint_id: str, overlap: timedelta | None) -> NewSecret:
    """A new secret, shown once; the old one also signs for ``overlap``
    (the settings' 24 h by default, at most 7 days, 0: ends now), so the
    app can switch its receivers over without a failed check."""
    keep = deps.webhooks.overlap if overlap is None else overlap
    if not timedelta(0) <= keep <= MAX_OVERLAP:
        raise BadRequest("overlapSeconds is 0 to 604800 (7 days)")
    secret = _fresh_secret(deps)

    def change(tx: Tx, _: None) -> Endpoint:
        e = _get(tx.uow.webhooks, endpoint_id)
        old = tx.uow.webhooks.secrets(endpoint_id)
        assert old is not None
        until = tx.now() + keep if keep else None
        sealed = Secrets(_sealed(deps, endpoint_id, secret), old.current if until else None, until)
        tx.uow.webhooks.save_secrets(endpoint_id, sealed)
        e = replace(e, previous_until=until)
        tx.uow.webhooks.save_endpoint(e)
        return e

    endpoint = await transact(deps, None, unkeyed(no_load, change))
    return NewSecret(endpoint, secret)


async def delete_endpoint(deps: Deps, endpoint_id: str) -> None:
    """The endpoint goes with its messages and their log."""

    def change(tx: Tx, _: None) -> None:
        if not tx.uow.webhooks.delete_endpoint(endpoint_id):
            raise NotFound(f"no webhook endpoint {endpoint_id!r}")

    await transact(deps, None, unkeyed(no_load, change))


async def deliveries(
    deps: Deps,
    endpoint_id: str,
    status: Status | None,
    before: tuple[datetime, str] | None,
    limit: int,
) -> list[Message]:
    """The endpoint's messages, newest first, each with its attempts (one
    more than ``limit`` tells that a next page exists)."""

    def read() -> list[Message]:
        with deps.uow() as uow:
            _get(uow.webhooks, endpoint_id)
            return uow.webhooks.messages(endpoint_id, status, before, limit)

    return await deps.run(read)


async def replay(deps: Deps, message_id: str) -> Message:
    """Send a message again (same ``webhook-id`` and body), now, with a
    fresh day of retries: after its endpoint recovered, say."""

    def change(tx: Tx, _: None) -> Message:
        found = tx.uow.webhooks.message(message_id)
        if found is None:
            raise NotFound(f"no webhook message {message_id!r}")
        if found.status == Status.PENDING:
            raise BadRequest("this message is still being delivered")
        tx.uow.webhooks.replay([message_id], tx.now())
        return replace(found, status=Status.PENDING)

    return await transact(deps, None, unkeyed(no_load, change))


async def replay_failed(deps: Deps, endpoint_id: str, since: datetime) -> int:
    """Send again every message of the endpoint that failed, made since
    ``since`` (at most 1,000 a call); how many."""

    def change(tx: Tx, _: None) -> int:
        _get(tx.uow.webhooks, endpoint_id)
        ids = tx.uow.webhooks.failed_since(endpoint_id, since, MAX_REPLAY)
        return tx.uow.webhooks.replay(ids, tx.now())

    return await transact(deps, None, unkeyed(no_load, change))


async def expire_done(deps: Deps, limit: int = 1000) -> int:
    """Delete messages done (delivered, failed, skipped) longer than the
    retention ago, with their log (the record sweep)."""

    def change(tx: Tx, _: None) -> int:
        return tx.uow.webhooks.delete_done(tx.now() - deps.webhooks.retention, limit)

    return await transact(deps, None, unkeyed(no_load, change))


# ---------------------------------------------------------------- players
async def push_kinds(deps: Deps, player_id: str) -> frozenset[str]:
    """The kinds the player wants pushed (all, until they choose)."""

    def read() -> frozenset[str]:
        with deps.uow() as uow:
            return uow.webhooks.push_kinds([player_id]).get(player_id, ALL_KINDS)

    return await deps.run(read)


async def set_push_kinds(deps: Deps, player_id: str, kinds: list[str]) -> frozenset[str]:
    """Push only these kinds to the player's phone from now on (none: an
    empty list); every notification is still kept and streamed."""
    chosen = frozenset(kinds)
    if kinds:
        check_kinds(kinds)

    def change(tx: Tx, _: None) -> frozenset[str]:
        tx.uow.webhooks.set_push_kinds(player_id, chosen)
        return chosen

    return await transact(deps, None, unkeyed(no_load, change))
