"""Refusals with a machine-readable code (docs/clients.md "Errors").

Every refusal the domain raises is a :class:`DomainError` whose ``code`` is one
:class:`ErrorCode`; adapters turn it into the client's error shape.
"""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    """The one enum of refusal codes (docs/clients.md)."""

    UNAUTHENTICATED = "UNAUTHENTICATED"
    FORBIDDEN = "FORBIDDEN"
    NOT_FOUND = "NOT_FOUND"
    BAD_INPUT = "BAD_INPUT"
    ILLEGAL_ACTION = "ILLEGAL_ACTION"
    NOT_YOUR_TURN = "NOT_YOUR_TURN"
    GAME_NOT_STARTED = "GAME_NOT_STARTED"
    GAME_FINISHED = "GAME_FINISHED"
    STALE_STATE = "STALE_STATE"
    CONFLICT = "CONFLICT"
    IDEMPOTENCY_KEY_REUSED = "IDEMPOTENCY_KEY_REUSED"
    RATE_LIMITED = "RATE_LIMITED"
    INTERNAL = "INTERNAL"


class DomainError(Exception):
    """A refused request; nothing was changed."""

    code: ErrorCode = ErrorCode.INTERNAL

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Unauthenticated(DomainError):
    code = ErrorCode.UNAUTHENTICATED


class Forbidden(DomainError):
    code = ErrorCode.FORBIDDEN


class NotFound(DomainError):
    code = ErrorCode.NOT_FOUND


class BadRequest(DomainError):
    code = ErrorCode.BAD_INPUT


class GameNotStarted(DomainError):
    code = ErrorCode.GAME_NOT_STARTED


class StaleState(DomainError):
    """The client's ``expectedVersion`` is not the game's version."""

    code = ErrorCode.STALE_STATE


class Conflict(DomainError):
    """Another writer changed the same game first."""

    code = ErrorCode.CONFLICT


class IdempotencyKeyReused(DomainError):
    """The key's first use had other input (never kept under the key)."""

    code = ErrorCode.IDEMPOTENCY_KEY_REUSED


class ReplayedRefusal(DomainError):
    """A refusal kept as an idempotency key's first result, raised again for
    a repeat: the first refusal's code and message (docs/clients.md "Playing from
    the stream")."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code


class CapReached(DomainError):
    """A per-player cap on what is open at once (lobby games hosted,
    quick-play waits) is reached: close one first (docs/decisions/0051).
    ``ILLEGAL_ACTION``: not allowed now, and no wait alone makes it so."""

    code = ErrorCode.ILLEGAL_ACTION


class RateLimited(DomainError):
    """An allowance over time (booster packs a day) is spent: it refills in
    ``retry_after`` seconds (docs/decisions/0051). Never kept under an
    idempotency key: a repeat after the wait is decided anew."""

    code = ErrorCode.RATE_LIMITED

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after
