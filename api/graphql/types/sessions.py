"""A player's sessions: their live MMK tokens (issue #24)."""

from __future__ import annotations

from datetime import datetime

import strawberry

from domain.records import SessionRecord
from domain.services.sessions import MAX_SESSIONS


@strawberry.type(
    description="One of your live tokens (a device, an app's backend sign-in): never the "
    "token itself. Cache key: `id`."
)
class Session:
    id: strawberry.ID = strawberry.field(description="Pass to `revokeSession` to end it")
    label: str | None = strawberry.field(
        description="The label given when it was created (`createSession`, "
        "`issuePlayerToken`); null: none"
    )
    created_at: datetime = strawberry.field(description="When its first token was issued")
    last_used_at: datetime = strawberry.field(
        description="When it last signed in, to within a minute or so "
        "(`MMK_SESSION_USE_INTERVAL`); its creation at first"
    )
    current: bool = strawberry.field(description="The token of this request")

    @classmethod
    def from_domain(cls, s: SessionRecord, current: str | None) -> Session:
        return cls(
            id=strawberry.ID(s.id),
            label=s.label,
            created_at=s.created_at,
            last_used_at=s.last_used_at,
            current=s.id == current,
        )


@strawberry.type(
    description=f"A new token for you on another device (`createSession`); your other "
    f"tokens go on (beyond {MAX_SESSIONS}, the least recently used ends). Keep the token: "
    f"it is shown only here. No cache key: an answer, not an object."
)
class NewSession:
    session: Session = strawberry.field(description="Its session")
    token: str = strawberry.field(
        description="Send as `Authorization: Bearer <token>`; only its hash is stored, so it "
        "cannot be shown again"
    )


@strawberry.type(
    description="A session ended (`revokeSession`): its token no longer works, on any "
    "instance. No cache key: an answer, not an object."
)
class SessionRevoked:
    session_id: strawberry.ID = strawberry.field(description="The session that ended")
