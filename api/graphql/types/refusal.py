"""Expected refusals come back as a typed ``Refusal`` member of each
operation's result union, never as a GraphQL error."""

from __future__ import annotations

import strawberry

from domain.errors import DomainError, ErrorCode


@strawberry.type(
    description="Why the request was refused; nothing was changed. No cache key: an answer, "
    "not an object."
)
class Refusal:
    code: ErrorCode = strawberry.field(description="The machine-readable reason")
    message: str = strawberry.field(description="A human-readable explanation")

    @classmethod
    def of(cls, e: DomainError) -> Refusal:
        return cls(code=e.code, message=e.message)
