"""Error codes on GraphQL errors (docs/clients.md "Errors").

Style per kind: expected refusals of an operation are a typed ``Refusal``;
authentication, request limits and unexpected failures are GraphQL errors,
always with ``extensions.code``. Unexpected exceptions are masked (``INTERNAL``)
and logged with their detail on the server; parse and validation errors
(limits included) get ``BAD_INPUT``.
"""

from __future__ import annotations

import logging

from graphql import GraphQLError
from strawberry.extensions import MaskErrors

from domain.errors import DomainError, ErrorCode
from infra.db.errors import is_unavailable

log = logging.getLogger("mmk.api")
# [decision] A database outage is masked as ``INTERNAL`` too (docs/clients.md has no
# "unavailable" code), with this message and ``extensions.retryable``: the
# call may or may not have been applied, and a retry with the same
# ``idempotencyKey`` is safe either way.
UNAVAILABLE_MESSAGE = (
    "Service temporarily unavailable (database unreachable); retry shortly, "
    "with the same idempotencyKey."
)


def graphql_error(code: ErrorCode, message: str) -> GraphQLError:
    return GraphQLError(message, extensions={"code": code.value})


def from_domain(e: DomainError) -> GraphQLError:
    return graphql_error(e.code, e.message)


def _unexpected(error: GraphQLError) -> bool:
    original = error.original_error
    return original is not None and not isinstance(original, GraphQLError | DomainError)


class ErrorCodes(MaskErrors):
    """Masks unexpected errors as ``INTERNAL`` and gives every error a code."""

    def __init__(self) -> None:
        super().__init__(should_mask_error=_unexpected, error_message="Internal error.")

    def anonymise_error(self, error: GraphQLError) -> GraphQLError:
        original = error.original_error
        masked = super().anonymise_error(error)
        if original is not None and is_unavailable(original):
            # Expected while the database is away: one line, no traceback.
            log.warning(
                "database unavailable at %s: %s",
                error.path,
                str(original).splitlines()[0] if str(original) else type(original).__name__,
            )
            masked.message = UNAVAILABLE_MESSAGE
            masked.extensions = {"code": ErrorCode.INTERNAL.value, "retryable": True}
            return masked
        log.error("internal error at %s", error.path, exc_info=original)
        masked.extensions = {"code": ErrorCode.INTERNAL.value}
        return masked

    def _process_result(self, result: object) -> None:
        # A plain attribute test: the base class's isinstance() against a
        # runtime-checkable Protocol costs more than the rest of this hook.
        errors = getattr(result, "errors", None)
        if errors:
            result.errors = self._process_errors(errors)  # type: ignore[attr-defined]

    def _process_errors(self, errors: list[GraphQLError]) -> list[GraphQLError]:
        out = []
        for error in super()._process_errors(errors):
            original = error.original_error
            if isinstance(original, DomainError):
                error = GraphQLError(
                    original.message,
                    error.nodes,
                    error.source,
                    error.positions,
                    error.path,
                    extensions={"code": original.code.value},
                )
            elif not (error.extensions or {}).get("code"):
                error.extensions = {**(error.extensions or {}), "code": ErrorCode.BAD_INPUT.value}
            out.append(error)
        return out
