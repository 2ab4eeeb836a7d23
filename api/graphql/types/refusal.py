"""Expected refusals come back as a typed ``Refusal`` member of each
operation's result union, never as a GraphQL error."""

from __future__ import annotations

import strawberry

from domain.errors import DomainError, ErrorCode, RateLimited


@strawberry.type(
    description="Why the request was refused; nothing was changed. No cache key: an answer, "
    "not an object."
)
class Refusal:
    code: ErrorCode = strawberry.field(description="The machine-readable reason")
    message: str = strawberry.field(description="A human-readable explanation")
    retry_after: float | None = strawberry.field(
        default=None,
        description="RATE_LIMITED: the seconds until the request can succeed (an allowance "
        "refills); null otherwise",
    )

    @classmethod
    def of(cls, e: DomainError) -> Refusal:
        wait = e.retry_after if isinstance(e, RateLimited) else None
        return cls(code=e.code, message=e.message, retry_after=wait)
