"""Event keys as the fields are named (issue #23): a field's JSON key is its
name in camelCase, in the log as on the wire. Stored events and the events
of kept results are rewritten: a message event's ``id``, ``from`` and
``to`` become ``messageId``, ``fromSeat`` and ``toSeat``; a gift's ``from``
and ``to`` ``fromSeat`` and ``toSeat``; ``GameStarted.rat`` ``ratSeat``;
``GameCreated.host`` and ``ratSeat`` ``hostId`` and ``chosenRatSeat``; a won
play's ``second`` ``secondCard``. The server still reads the keys of before
(infra/codec.py, ``WRITTEN_BEFORE``), so an instance of the version before
may write them during a rolling upgrade. Downgrading writes the old keys
back.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSON as PG_JSON

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Written out here (not imported from infra) so this revision never changes.
_MESSAGE = {"id": "messageId", "from": "fromSeat", "to": "toSeat"}
RENAMED: dict[str, dict[str, str]] = {
    "GameCreated": {"host": "hostId", "ratSeat": "chosenRatSeat"},
    "GameStarted": {"rat": "ratSeat"},
    "MessageSent": _MESSAGE,
    "MessageDelivered": _MESSAGE,
    "MessageDeclined": _MESSAGE,
    "MessageExpired": _MESSAGE,
    "CardGiven": {"from": "fromSeat", "to": "toSeat"},
}
PLAY = {"second": "secondCard"}
KINDS = (*RENAMED, "TrickWon")
BATCH = 500

Json = dict[str, Any]
Renames = Callable[[str], dict[str, str]]


def _json() -> sa.types.TypeEngine[Any]:
    return sa.JSON().with_variant(PG_JSON(), "postgresql")


EVENTS = sa.table(
    "game_events",
    sa.column("game_id", sa.String()),
    sa.column("seq", sa.Integer()),
    sa.column("type", sa.String()),
    sa.column("public", _json()),
    sa.column("private", _json()),
)
KEPT = sa.table(
    "idempotency_keys",
    sa.column("player_id", sa.String()),
    sa.column("key", sa.String()),
    sa.column("result", _json()),
)


def _renamed(data: Any, renames: Mapping[str, str]) -> Any:
    if not isinstance(data, dict):
        return data
    return {renames.get(k, k): v for k, v in data.items()}


def event_data(kind: str, data: Any, forward: bool = True) -> Any:
    """One event's JSON object with its keys renamed (``forward``: old to
    new; else back)."""

    def way(renames: Mapping[str, str]) -> Mapping[str, str]:
        return renames if forward else {new: old for old, new in renames.items()}

    if kind == "TrickWon" and isinstance(data, dict) and isinstance(data.get("plays"), list):
        return {**data, "plays": [_renamed(p, way(PLAY)) for p in data["plays"]]}
    return _renamed(data, way(RENAMED[kind])) if kind in RENAMED else data


def _events(forward: bool) -> None:
    conn = op.get_bind()
    last: tuple[str, int] = ("", -1)
    while True:
        rows = conn.execute(
            sa.select(EVENTS)
            .where(EVENTS.c.type.in_(KINDS))
            .where(sa.tuple_(EVENTS.c.game_id, EVENTS.c.seq) > sa.tuple_(*last))
            .order_by(EVENTS.c.game_id, EVENTS.c.seq)
            .limit(BATCH)
        ).all()
        if not rows:
            return
        for r in rows:
            private = r.private if isinstance(r.private, dict) else {}
            conn.execute(
                EVENTS.update()
                .where(EVENTS.c.game_id == r.game_id, EVENTS.c.seq == r.seq)
                .values(
                    public=event_data(r.type, r.public, forward),
                    private={s: event_data(r.type, d, forward) for s, d in private.items()},
                )
            )
        last = (rows[-1].game_id, rows[-1].seq)


def _kept_result(result: Any, forward: bool) -> Any:
    if not isinstance(result, dict) or not isinstance(result.get("events"), list):
        return result
    events = [
        {**e, "data": event_data(e["type"], e.get("data"), forward)}
        if isinstance(e, dict) and isinstance(e.get("type"), str)
        else e
        for e in result["events"]
    ]
    return {**result, "events": events}


def _kept(forward: bool) -> None:
    conn = op.get_bind()
    last: tuple[str, str] = ("", "")
    while True:
        rows = conn.execute(
            sa.select(KEPT)
            .where(sa.tuple_(KEPT.c.player_id, KEPT.c.key) > sa.tuple_(*last))
            .order_by(KEPT.c.player_id, KEPT.c.key)
            .limit(BATCH)
        ).all()
        if not rows:
            return
        for r in rows:
            result = _kept_result(r.result, forward)
            if result != r.result:
                conn.execute(
                    KEPT.update()
                    .where(KEPT.c.player_id == r.player_id, KEPT.c.key == r.key)
                    .values(result=result)
                )
        last = (rows[-1].player_id, rows[-1].key)


def upgrade() -> None:
    _events(forward=True)
    _kept(forward=True)


def downgrade() -> None:
    _events(forward=False)
    _kept(forward=False)
