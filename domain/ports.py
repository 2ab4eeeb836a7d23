"""Ports: what the use cases need from the outside world, as small protocols.

Storage is a synchronous unit of work run off the event loop in one hop
(:class:`BlockingRunner`); the event bus is asynchronous. [decision] One
thread hop per transaction costs far less than one per statement.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from types import TracebackType
from typing import Any, Protocol, TypeVar

from domain.records import (
    BoosterRecord,
    GameRecord,
    GameStatus,
    IdempotencyRecord,
    Page,
    Player,
    StoredEvent,
)

T = TypeVar("T")


class WriteConflict(Exception):
    """Raised by a repository when another writer got there first
    (a stale version or a duplicate ``(game, seq)`` / key)."""


class SubscriptionClosed(Exception):
    """The bus ended a subscription (e.g. a subscriber too slow to keep up);
    ``reason`` says why. The client may resume with ``afterSeq``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class PlayerRepository(Protocol):
    def add(self, player: Player, token_hash: str) -> None: ...
    def get(self, player_id: str) -> Player | None: ...
    def by_token_hash(self, token_hash: str) -> tuple[Player, str] | None:
        """The player and the stored hash, for a constant-time comparison."""
        ...


class GameRepository(Protocol):
    def add(self, game: GameRecord) -> None:
        """Store a new game; once committed, ``game`` is the repository's (as
        for :meth:`save`)."""
        ...

    def get(self, game_id: str) -> GameRecord | None: ...
    def get_known(self, game_id: str) -> tuple[GameRecord | None, bool]:
        """The game as this process last committed or read it, when it has
        it, else as :meth:`get`; and whether it came from this process's
        copy, which may be behind the stored game (another process moved
        it): a refusal or a conflict found on such a copy must be confirmed
        on :meth:`get` (an optimistic read)."""
        ...

    def save(self, game: GameRecord, expected_version: int) -> None:
        """Store ``game`` if the stored version is still ``expected_version``,
        else raise :class:`WriteConflict`. Once committed, ``game`` is the
        repository's: the caller neither reads nor changes it afterwards (an
        adapter may keep it, and hand it to a later change)."""
        ...

    def stalled_bot_games(self, before: datetime, limit: int) -> list[str]:
        """Running games where a bot must act, unchanged since ``before``."""
        ...

    def page(
        self, status: GameStatus | None, before: tuple[datetime, str] | None, limit: int
    ) -> Page:
        """Games newest first, strictly older than the ``(created_at, id)`` cursor."""
        ...


class EventLog(Protocol):
    def append(self, events: Sequence[StoredEvent]) -> None:
        """Append; a duplicate ``(game, seq)`` raises :class:`WriteConflict`."""
        ...

    def read(self, game_id: str, after_seq: int, limit: int) -> list[StoredEvent]: ...


class IdempotencyStore(Protocol):
    def get(self, player_id: str, key: str) -> IdempotencyRecord | None: ...
    def put(self, record: IdempotencyRecord) -> None:
        """A duplicate ``(player, key)`` raises :class:`WriteConflict`."""
        ...


class BoosterRepository(Protocol):
    def add(self, record: BoosterRecord) -> None: ...
    def of_player(self, player_id: str) -> list[BoosterRecord]: ...


class UnitOfWork(Protocol):
    """One transaction over every repository; rolls back unless committed."""

    players: PlayerRepository
    games: GameRepository
    events: EventLog
    idempotency: IdempotencyStore
    boosters: BoosterRepository

    def __enter__(self) -> UnitOfWork: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...
    def commit(self) -> None: ...
    def rollback(self) -> None: ...


UnitOfWorkFactory = Callable[[], UnitOfWork]


class BlockingRunner(Protocol):
    """Runs blocking work (a transaction) without blocking the event loop."""

    def __call__(self, fn: Callable[[], T], /) -> Awaitable[T]: ...


class Subscription(Protocol):
    """Messages of one channel, in publish order; raises
    :class:`SubscriptionClosed` when the bus drops it."""

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]: ...


class EventBus(Protocol):
    """Per-audience channels: a subscriber only ever receives its channel."""

    async def publish(self, messages: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Publish ``(channel, message)`` pairs, in order. Never raises: the
        event log is the source of truth and subscribers backfill from it."""
        ...

    def subscribe(self, channel: str) -> AbstractAsyncContextManager[Subscription]:
        """Subscribed when entered (so nothing published later is missed)."""
        ...


class Clock(Protocol):
    def now(self) -> datetime: ...


class Ids(Protocol):
    """Random identifiers, tokens and seeds."""

    def new_id(self) -> str: ...
    def new_token(self) -> str: ...
    def new_seed(self) -> str: ...


BotScheduler = Callable[[str], None]
"""Asks for the bots of a game to be driven soon (never inline)."""
