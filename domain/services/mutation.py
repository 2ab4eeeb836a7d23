"""The one way a game changes: load, check, change, append the events and save
the game in one transaction; then publish each projection to its audience.

Optimistic concurrency: the save is conditional on the version read, and the
log's ``(game, seq)`` is unique, so of two racing writers one commits and the
other gets :class:`WriteConflict`. Without ``expectedVersion`` the loser runs
again on the fresh state (the command is checked anew, so that is safe); with
it, the caller gets ``CONFLICT``. A loser whose twin won (the same
idempotency key: a client's retry, maybe through another instance, racing
the first try) gets the twin's result instead, as a repeat after it would.

The first try reads the game optimistically (``games.get_known``: this
process's copy, with no read of the database when it has one). An acceptance
found on it is confirmed by the conditional save (a conflict there is a
conflict as above, and later tries read fresh); a refusal found on it is
confirmed by trying again on a fresh read, since the copy may be behind.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from domain.channels import LOBBY, game_channel
from domain.errors import Conflict, DomainError, IdempotencyKeyReused, NotFound, StaleState
from domain.lobby import Batch
from domain.ports import UnitOfWork, WriteConflict
from domain.records import GameRecord, GameStatus, IdempotencyRecord, StoredEvent
from domain.services.bot_turn import bot_to_act
from domain.services.deps import Deps
from domain.services.results import EventView, MutationResult

ATTEMPTS = 3
Change = Callable[[UnitOfWork, GameRecord], Batch]
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Request:
    """Who asks for what: the idempotency fingerprint covers ``op`` and ``args``."""

    player_id: str
    op: str
    args: dict[str, Any]
    idempotency_key: str | None = None
    expected_version: int | None = None

    def fingerprint(self) -> str:
        body = json.dumps({"op": self.op, "args": self.args}, sort_keys=True, default=str)
        return hashlib.sha256(body.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Committed:
    """A committed change, to publish: what the work after the commit needs,
    taken from the record before the commit (then the record is the
    repository's: ``GameRepository.save``)."""

    game_id: str
    seat_count: int
    events: list[StoredEvent]
    lobby: dict[str, Any] | None  # the lobby's message, if the listing changed
    bot_turn: bool  # a bot must act next

    @classmethod
    def of(cls, game: GameRecord, events: list[StoredEvent], lobby_changed: bool) -> Committed:
        """Call before ``uow.commit()``."""
        lobby = lobby_message(game) if lobby_changed else None
        return cls(game.id, game.seat_count, events, lobby, bot_to_act(game) is not None)


def replay(uow: UnitOfWork, req: Request) -> dict[str, Any] | None:
    """The stored first result for this key, or None; a reused key with other
    input is refused."""
    if req.idempotency_key is None:
        return None
    rec = uow.idempotency.get(req.player_id, req.idempotency_key)
    if rec is None:
        return None
    if rec.fingerprint != req.fingerprint():
        raise IdempotencyKeyReused("this idempotency key was used with other input")
    return rec.result


def _replayed(deps: Deps, req: Request) -> dict[str, Any] | None:
    with deps.uow() as uow:
        return replay(uow, req)


async def run_keyed(deps: Deps, req: Request, tx: Callable[[], T]) -> T:
    """Run ``tx``, a transaction that replays ``req``'s key first; once more
    if it lost a race on the key (a twin with the same key committed first),
    so that the second run replays the twin's result."""
    for attempt in range(2):
        try:
            return await deps.run(tx)
        except WriteConflict:
            if attempt or req.idempotency_key is None:
                raise
    raise AssertionError("unreachable")


def remember(
    uow: UnitOfWork, deps: Deps, req: Request, result: Callable[[], dict[str, Any]]
) -> None:
    """Store the first result under the request's key, if it has one
    (``result`` is only built then)."""
    if req.idempotency_key is not None:
        uow.idempotency.put(
            IdempotencyRecord(
                req.player_id, req.idempotency_key, req.fingerprint(), result(), deps.clock.now()
            )
        )


def record_events(deps: Deps, game: GameRecord, batch: Batch) -> list[StoredEvent]:
    """Give the drafts their seqs (the cause goes on the first); bump the
    game's version."""
    now = deps.clock.now()
    events = [
        StoredEvent(
            game.id, game.last_seq + i, kind, public, private, now, batch.cause if i == 1 else None
        )
        for i, (kind, public, private) in enumerate(batch.drafts, start=1)
    ]
    game.last_seq += len(events)
    game.version += 1
    game.updated_at = now
    if game.state is not None and game.state.outcome is not None:
        game.status = GameStatus.FINISHED
    return events


class _Unconfirmed(Exception):
    """A refusal found on an optimistic read: read fresh, try again."""


def _transaction(
    deps: Deps, req: Request, game_id: str, change: Change, fresh: bool
) -> tuple[MutationResult, Committed | None]:
    """``fresh``: read the game from the database, else optimistically."""
    with deps.uow() as uow:
        game, known = (uow.games.get(game_id), False) if fresh else uow.games.get_known(game_id)
        try:
            return _change(deps, uow, req, game_id, game, change)
        except DomainError as e:
            if known:
                raise _Unconfirmed from e
            raise


def _change(
    deps: Deps, uow: UnitOfWork, req: Request, game_id: str, game: GameRecord | None, change: Change
) -> tuple[MutationResult, Committed | None]:
    # The key is looked up after the game is read: a twin that committed
    # before that read is seen (each statement reads what is committed).
    stored = replay(uow, req)
    if stored is not None:
        return MutationResult.from_dict(stored), None
    if game is None:
        raise NotFound(f"no game {game_id}")
    if req.expected_version is not None and req.expected_version != game.version:
        raise StaleState(f"the game is at version {game.version}, not {req.expected_version}")
    read_version, status, taken = game.version, game.status, game.seats_taken
    events = record_events(deps, game, change(uow, game))
    uow.events.append(events)
    uow.games.save(game, read_version)
    seat = game.seat_of(req.player_id)
    result = MutationResult(game.id, game.version, tuple(EventView.of(e, seat) for e in events))
    remember(uow, deps, req, result.to_dict)
    done = Committed.of(game, events, status is not game.status or taken != game.seats_taken)
    uow.commit()
    return result, done


async def mutate(deps: Deps, req: Request, game_id: str, change: Change) -> MutationResult:
    """Run ``change`` on the game in a transaction, publish, wake the bots.
    ``expectedVersion`` is judged on a fresh read: on this process's copy, a
    copy behind the game would turn STALE_STATE into CONFLICT."""
    fresh, attempt = req.expected_version is not None, 0
    while True:
        try:
            result, done = await deps.run(partial(_transaction, deps, req, game_id, change, fresh))
        except _Unconfirmed:
            fresh = True  # the same try again, on a fresh read
            continue
        except WriteConflict as e:
            attempt += fresh  # a conflict on the copy may only mean it was behind
            fresh = True
            if req.expected_version is None and attempt < ATTEMPTS:
                continue  # the next try replays a twin's result first, if one won
            stored = None
            if req.idempotency_key is not None:  # did a twin with our key win?
                stored = await deps.run(lambda: _replayed(deps, req))
            if stored is not None:
                return MutationResult.from_dict(stored)
            raise Conflict("another change to this game came first; reload and retry") from e
        if done is not None:
            await after_commit(deps, done)
        return result


def lobby_message(game: GameRecord) -> dict[str, Any]:
    return {
        "gameId": game.id,
        "status": game.status.value,
        "seatCount": game.seat_count,
        "seatsTaken": game.seats_taken,
        "version": game.version,
    }


async def publish(deps: Deps, done: Committed) -> None:
    """Each audience gets its own projection on its own channel (R11)."""
    channels = [game_channel(done.game_id, seat) for seat in range(done.seat_count)]
    public_channel = game_channel(done.game_id, None)
    out: list[tuple[str, dict[str, Any]]] = []
    for e in done.events:
        public = EventView.of(e, None).to_message()
        out.append((public_channel, public))
        for seat, channel in enumerate(channels):
            own = e.private.get(seat)
            out.append((channel, public if own is None else {**public, "data": own}))
    if done.lobby is not None:
        out.append((LOBBY, done.lobby))
    await deps.bus.publish(out)


async def after_commit(deps: Deps, done: Committed) -> None:
    await publish(deps, done)
    if done.bot_turn:
        deps.schedule_bots(done.game_id)
