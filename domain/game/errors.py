"""Typed refusals. Each carries a code from the API's error enum (docs/clients.md).

Messages never name a card the caller cannot see (R11).
"""

from __future__ import annotations

from domain.errors import DomainError, ErrorCode


class GameError(DomainError, ValueError):
    """A refused command or setup; the state is unchanged."""

    code = ErrorCode.ILLEGAL_ACTION


class IllegalAction(GameError):
    """The command breaks a rule (R5-R7)."""

    code = ErrorCode.ILLEGAL_ACTION


class NotYourTurn(GameError):
    """Another seat must act first (R6.5, R7.0b)."""

    code = ErrorCode.NOT_YOUR_TURN


class GameFinished(GameError):
    """R9.3: the game is over."""

    code = ErrorCode.GAME_FINISHED


class BadInput(GameError):
    """Malformed input (unknown seat, text too long, ...)."""

    code = ErrorCode.BAD_INPUT


class NotFound(GameError):
    """An id that does not exist in this game."""

    code = ErrorCode.NOT_FOUND


class DeckTooSmall(BadInput):
    """R3.4: not enough cards to deal 10 to every seat."""
