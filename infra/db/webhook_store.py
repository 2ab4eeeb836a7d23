"""``WebhookStore`` on SQL (issue #25, docs/decisions/0064): the endpoints,
the outbox of their messages and its delivery log, and the players' push
settings.

A deliverer leases due messages: on PostgreSQL ``FOR UPDATE SKIP LOCKED``
passes over rows another deliverer is leasing, and the lease moves the
message's ``next_at`` on, so it is due again (to anyone) only if its
deliverer never reports back; SQLite has one writer at a time (one process).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from domain.services.service_keys import EXTERNAL
from domain.webhooks import Attempt, Disabled, Endpoint, Message, Outcome, Secrets, Status
from infra.db.direct import DirectStatement
from infra.db.errors import conflicts_as_write_conflict, gone_as_write_conflict
from infra.db.tables import (
    identities,
    push_settings,
    webhook_attempts,
    webhook_endpoints,
    webhook_messages,
)

_E, _M, _A = webhook_endpoints.c, webhook_messages.c, webhook_attempts.c
_PENDING = Status.PENDING.value

_INSERT_MESSAGES = DirectStatement(
    sa.insert(webhook_messages), [c.key for c in webhook_messages.columns]
)
_INSERT_ATTEMPT = DirectStatement(
    sa.insert(webhook_attempts), [c.key for c in webhook_attempts.columns]
)
# Read by every commit that notifies someone, so run straight on the cursor
# (infra/db/direct.py): a live endpoint's kinds; a player's push settings
# and external id in one statement.
_LIVE_ENDPOINTS = DirectStatement(
    sa.select(_E.id, _E.url, _E.kinds, _E.description, _E.created_at).where(
        _E.disabled_at.is_(None)
    )
)
_PUSHED_AND_EXTERNAL = DirectStatement(
    sa.select(
        sa.select(push_settings.c.kinds)
        .where(push_settings.c.player_id == sa.bindparam("p"))
        .scalar_subquery()
        .label("kinds"),
        sa.select(identities.c.subject)
        .where(identities.c.issuer == EXTERNAL, identities.c.player_id == sa.bindparam("p"))
        .limit(1)
        .scalar_subquery()
        .label("subject"),
    ),
    ["p"],
)
_DUE = (
    sa.select(_M.id)
    .where(
        _M.endpoint_id == sa.bindparam("e"),
        _M.status == _PENDING,
        _M.next_at <= sa.bindparam("now"),
        # the endpoint as it is now, not as a list read earlier said
        sa.exists().where(_E.id == _M.endpoint_id, _E.disabled_at.is_(None)),
    )
    .order_by(_M.next_at, _M.id)
    .limit(sa.bindparam("n"))
)
_MESSAGE_COLUMNS = [c for c in webhook_messages.columns]


def _endpoint(r: Any) -> Endpoint:
    reason = r.get("disabled_reason")
    return Endpoint(
        r["id"],
        r["url"],
        frozenset(r["kinds"]),
        r["description"],
        r["created_at"],
        r.get("disabled_at"),
        None if reason is None else Disabled(reason),
        r.get("previous_until"),
    )


def _message(r: Any, attempts: Sequence[Attempt] = ()) -> Message:
    return Message(
        r["id"],
        r["endpoint_id"],
        r["player_id"],
        r["seq"],
        r["kind"],
        r["game_id"],
        r["created_at"],
        r["payload"],
        Status(r["status"]),
        r["next_at"],
        r["tries"],
        r["retry_from"],
        tuple(attempts),
        r["retry_tries"],
    )


def _message_row(m: Message) -> dict[str, Any]:
    return {
        "id": m.id,
        "endpoint_id": m.endpoint_id,
        "player_id": m.player_id,
        "seq": m.seq,
        "kind": m.kind,
        "game_id": m.game_id,
        "created_at": m.created_at,
        "payload": m.payload,
        "status": m.status.value,
        "next_at": m.next_at,
        "tries": m.tries,
        "retry_from": m.retry_from,
        "retry_tries": m.retry_tries,
    }


class SqlWebhookStore:
    def __init__(self, conn: sa.Connection) -> None:
        self._c = conn

    # ------------------------------------------------------------ endpoints
    def live_endpoints(self) -> list[Endpoint]:
        """The live ones only (read by every commit that notifies)."""
        return [_endpoint(r) for r in _LIVE_ENDPOINTS.all(self._c, {})]

    def pushed_and_external(
        self, player_ids: Collection[str]
    ) -> tuple[dict[str, frozenset[str]], dict[str, str]]:
        """:meth:`push_kinds` and :meth:`external_ids` of a commit's notified
        players (one or two, mostly), one statement each."""
        pushed: dict[str, frozenset[str]] = {}
        external: dict[str, str] = {}
        for p in player_ids:
            row = _PUSHED_AND_EXTERNAL.first(self._c, {"p": p})
            if row is not None and row["kinds"] is not None:
                pushed[p] = frozenset(row["kinds"])
            if row is not None and row["subject"] is not None:
                external[p] = row["subject"]
        return pushed, external

    def endpoints(self) -> list[Endpoint]:
        rows = self._c.execute(sa.select(webhook_endpoints).order_by(_E.created_at, _E.id))
        return [_endpoint(r._mapping) for r in rows]

    def secrets(self, endpoint_id: str) -> Secrets | None:
        row = self._c.execute(
            sa.select(_E.secret, _E.previous_secret, _E.previous_until).where(_E.id == endpoint_id)
        ).first()
        return None if row is None else Secrets(row[0], row[1], row[2])

    def add_endpoint(self, endpoint: Endpoint, secrets: Secrets) -> None:
        with conflicts_as_write_conflict(f"webhook endpoint {endpoint.id}"):
            self._c.execute(
                sa.insert(webhook_endpoints).values(
                    id=endpoint.id,
                    created_at=endpoint.created_at,
                    **self._fields(endpoint),
                    secret=secrets.current,
                    previous_secret=secrets.previous,
                )
            )

    @staticmethod
    def _fields(e: Endpoint) -> dict[str, Any]:
        return {
            "url": e.url,
            "kinds": sorted(e.kinds),
            "description": e.description,
            "disabled_at": e.disabled_at,
            "disabled_reason": None if e.disabled_reason is None else e.disabled_reason.value,
            "previous_until": e.previous_until,
        }

    def save_endpoint(self, endpoint: Endpoint) -> None:
        self._c.execute(
            sa.update(webhook_endpoints)
            .where(_E.id == endpoint.id)
            .values(**self._fields(endpoint))
        )

    def save_secrets(self, endpoint_id: str, secrets: Secrets) -> None:
        self._c.execute(
            sa.update(webhook_endpoints)
            .where(_E.id == endpoint_id)
            .values(
                secret=secrets.current,
                previous_secret=secrets.previous,
                previous_until=secrets.previous_until,
            )
        )

    def _lock(self, q: sa.Select[Any]) -> list[Any]:
        """The rows' ids, locked to the end of the transaction on PostgreSQL
        (a commit writing to them meanwhile waits, then finds them gone)."""
        if self._c.dialect.name == "postgresql":
            q = q.with_for_update()
        return list(self._c.execute(q).scalars())

    def delete_endpoint(self, endpoint_id: str) -> bool:
        self._lock(sa.select(_E.id).where(_E.id == endpoint_id))
        self._lock(sa.select(_M.id).where(_M.endpoint_id == endpoint_id))
        mine = sa.select(_M.id).where(_M.endpoint_id == endpoint_id)
        self._c.execute(sa.delete(webhook_attempts).where(_A.message_id.in_(mine)))
        self._c.execute(sa.delete(webhook_messages).where(_M.endpoint_id == endpoint_id))
        done = self._c.execute(sa.delete(webhook_endpoints).where(_E.id == endpoint_id))
        return done.rowcount == 1

    def disable(self, endpoint_id: str, at: datetime, reason: Disabled) -> bool:
        return (
            self._c.execute(
                sa.update(webhook_endpoints)
                .where(_E.id == endpoint_id, _E.disabled_at.is_(None))
                .values(disabled_at=at, disabled_reason=reason.value)
            ).rowcount
            == 1
        )

    # ------------------------------------------------------------ outbox
    def enqueue(self, messages: Sequence[Message]) -> None:
        if messages:
            # an endpoint deleted since it was read: the change is tried again
            with (
                conflicts_as_write_conflict("webhook messages"),
                gone_as_write_conflict("a webhook endpoint deleted meanwhile"),
            ):
                _INSERT_MESSAGES.run(self._c, [_message_row(m) for m in messages])

    def lease(self, endpoint_id: str, now: datetime, until: datetime, limit: int) -> list[Message]:
        due = _DUE
        if self._c.dialect.name == "postgresql":
            due = due.with_for_update(skip_locked=True)
        ids = self._c.execute(due, {"e": endpoint_id, "now": now, "n": limit}).scalars().all()
        if not ids:
            return []
        rows = self._c.execute(
            sa.update(webhook_messages)
            .where(_M.id.in_(ids))
            .values(tries=_M.tries + 1, next_at=until)
            .returning(*_MESSAGE_COLUMNS)
        )
        found = [_message(r._mapping) for r in rows]
        return sorted(found, key=lambda m: (m.created_at, m.id))

    def finish(self, m: Message, attempt: Attempt, outcome: Outcome) -> bool:
        done = self._c.execute(
            sa.update(webhook_messages)
            .where(_M.id == m.id, _M.tries == m.tries, _M.status == _PENDING)
            .values(status=outcome.status.value, next_at=outcome.next_at)
        )
        if done.rowcount != 1:
            return False
        row = {
            "message_id": m.id,
            "n": m.tries,
            "at": attempt.at,
            "status_code": attempt.status_code,
            "latency_ms": attempt.latency_ms,
            "error": attempt.error,
        }
        _INSERT_ATTEMPT.run(self._c, [row])
        return True

    def messages(
        self,
        endpoint_id: str,
        status: Status | None,
        before: tuple[datetime, str] | None,
        limit: int,
    ) -> list[Message]:
        q = sa.select(webhook_messages).where(_M.endpoint_id == endpoint_id)
        if status is not None:
            q = q.where(_M.status == status.value)
        if before is not None:
            at = sa.bindparam("b_at", before[0], type_=_M.created_at.type)  # stored as UTC
            q = q.where(
                sa.tuple_(_M.created_at, _M.id) < sa.tuple_(at, sa.bindparam("b_id", before[1]))
            )
        rows = self._c.execute(q.order_by(_M.created_at.desc(), _M.id.desc()).limit(limit))
        found = [r._mapping for r in rows]
        return self._with_attempts(found)

    def _with_attempts(self, rows: Sequence[Any]) -> list[Message]:
        ids = [r["id"] for r in rows]
        tries: dict[str, list[Attempt]] = {i: [] for i in ids}
        if ids:
            q = sa.select(webhook_attempts).where(_A.message_id.in_(ids)).order_by(_A.n)
            for a in self._c.execute(q):
                tries[a.message_id].append(Attempt(a.at, a.status_code, a.latency_ms, a.error))
        return [_message(r, tries[r["id"]]) for r in rows]

    def message(self, message_id: str) -> Message | None:
        row = self._c.execute(sa.select(webhook_messages).where(_M.id == message_id)).first()
        return None if row is None else self._with_attempts([row._mapping])[0]

    def replay(self, message_ids: Sequence[str], at: datetime) -> int:
        if not message_ids:
            return 0
        done = self._c.execute(
            sa.update(webhook_messages)
            .where(_M.id.in_(list(message_ids)))
            .values(status=_PENDING, next_at=at, retry_from=at, retry_tries=_M.tries)
        )
        return done.rowcount

    def failed_since(self, endpoint_id: str, since: datetime, limit: int) -> list[str]:
        q = (
            sa.select(_M.id)
            .where(
                _M.endpoint_id == endpoint_id,
                _M.status == Status.FAILED.value,
                _M.created_at >= since,
            )
            .order_by(_M.created_at, _M.id)
            .limit(limit)
        )
        return list(self._c.execute(q).scalars())

    def delete_done(self, before: datetime, limit: int) -> int:
        old = (
            sa.select(_M.id)
            .where(_M.status != _PENDING, _M.created_at < before)
            .order_by(_M.created_at)
            .limit(limit)
        )
        ids = self._lock(old)  # a replay meanwhile waits, then finds them gone
        if not ids:
            return 0
        self._c.execute(sa.delete(webhook_attempts).where(_A.message_id.in_(ids)))
        return self._c.execute(sa.delete(webhook_messages).where(_M.id.in_(ids))).rowcount

    # ------------------------------------------------------------ players
    def push_kinds(self, player_ids: Collection[str]) -> dict[str, frozenset[str]]:
        return self.pushed_and_external(player_ids)[0]

    def set_push_kinds(self, player_id: str, kinds: frozenset[str]) -> None:
        self._c.execute(sa.delete(push_settings).where(push_settings.c.player_id == player_id))
        with conflicts_as_write_conflict(f"push settings of {player_id}"):
            self._c.execute(
                sa.insert(push_settings).values(player_id=player_id, kinds=sorted(kinds))
            )

    def external_ids(self, player_ids: Collection[str]) -> dict[str, str]:
        return self.pushed_and_external(player_ids)[1]
