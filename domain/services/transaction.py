"""The one way anything changes, for people and bots alike (the unit of work
and message bus of cosmicpython's service layer):

    load -> look the idempotency key up -> check expectedVersion -> decide
    (the rules) -> save the game, conditional on the version loaded -> append
    its events -> remember the result under the key -> commit -> publish the
    new events (publisher.py)

A use case gives the ``load`` and ``decide`` steps; it reads through the
:class:`Tx` it is handed and writes only through it, so this module alone
writes to the unit of work, which collects the committed events for the
publisher. The key is looked up after the load: a twin (the same key) that
committed before the load is seen, and one that commits after it makes this
save conflict.

Optimistic concurrency: the save is conditional on the version loaded and
the log's ``(game, seq)`` is unique, so of two racing writers one commits
and the other gets :class:`WriteConflict`. Without ``expectedVersion`` the
loser runs again on the fresh state (the decision is made anew, so that is
safe); with it, the caller gets ``CONFLICT``. A loser whose twin won gets
the twin's result instead, as a repeat after it would.

A refusal is a first result too (docs/clients.md "Playing from the stream", decision
0042): under a key, the refused transaction is rolled back and the refusal
alone is kept in a transaction of its own, which a twin's kept result beats
as in a lost race. Every repeat is refused again alike. Not kept:
``RATE_LIMITED`` and ``INTERNAL`` (transient), ``IDEMPOTENCY_KEY_REUSED``
(about the key, not the request), ``UNAUTHENTICATED`` (no player to keep it
under).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any, Generic, NoReturn, TypeVar

from domain.abandonment import abandon_at
from domain.errors import (
    Conflict,
    DomainError,
    ErrorCode,
    IdempotencyKeyReused,
    NotFound,
    ReplayedRefusal,
    StaleState,
)
from domain.game.events import Event
from domain.invitations import check_may_see
from domain.log import Cause
from domain.notifications import notices, waiting_person
from domain.ports import UnitOfWork, WriteConflict
from domain.ratings import Rating
from domain.records import (
    BoosterRecord,
    GameRecord,
    IdempotencyRecord,
    MutationResult,
    NewEvents,
    Player,
    Refused,
    Remembered,
    ServiceKey,
    SessionRecord,
)
from domain.services.auth import session_id
from domain.services.clocked import clocked
from domain.services.deps import Deps
from domain.services.publisher import after_commit
from domain.services.ratings import rated_end

ATTEMPTS = 3
NOT_KEPT = frozenset(
    {
        ErrorCode.RATE_LIMITED,
        ErrorCode.INTERNAL,
        ErrorCode.IDEMPOTENCY_KEY_REUSED,
        ErrorCode.UNAUTHENTICATED,
    }
)
"""Refusals never kept under a key (decision 0042): a repeat is decided anew."""
T = TypeVar("T")
R = TypeVar("R")


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
class Change:
    """What a decision did to a game: its events, and what caused them when
    the engine made them (so the log replays)."""

    events: Sequence[Event]
    cause: Cause | None = None
    cause_at: int = 0  # the index of the first event the cause made


class Tx:
    """One transaction as a use case sees it: ``uow`` to read; the methods
    here to load and to write."""

    def __init__(self, deps: Deps, uow: UnitOfWork, req: Request | None) -> None:
        self.uow = uow
        self._deps = deps
        self._req = req
        self._loaded: dict[str, int] = {}  # each game's version as loaded
        # the person each game waited for as loaded (notices, issue #25)
        self._waited: dict[str, str | None] = {}

    def now(self) -> datetime:
        return self._deps.clock.now()

    def new_id(self) -> str:
        return self._deps.ids.new_id()

    def player(self, player_id: str) -> Player:
        player = self.uow.players.get(player_id)
        if player is None:
            raise NotFound("no such player")
        return player

    def game(self, game_id: str, *, unseen: bool = False) -> GameRecord:
        """The game as committed: this transaction's own copy. A private game
        the requester may not see is ``NOT_FOUND``, as a game that never was
        (domain/invitations.py), unless ``unseen`` (an invite code's holder)."""
        game = self.uow.games.get(game_id)
        if game is None:
            raise NotFound(f"no game {game_id}")
        if not unseen and self._req is not None:
            check_may_see(game, self._req.player_id)
        self._loaded[game.id] = game.version
        self._waited[game.id] = waiting_person(game)
        return game

    def check_expected_version(self) -> None:
        """``STALE_STATE`` unless the game loaded is at the request's
        ``expectedVersion`` (checked after the key: a repeat of a change that
        moved the game on gets the first result)."""
        want = None if self._req is None else self._req.expected_version
        for version in self._loaded.values():
            if want is not None and want != version:
                raise StaleState(f"the game is at version {version}, not {want}")

    def record(self, game: GameRecord, change: Change) -> MutationResult:
        """Log ``change`` as the game's next version and store the game (a
        new game is added, a loaded one saved if still at the version loaded),
        then its events, which refer to it; a running game's clock settles
        first, and a change that leaves it waiting ends with the wait's
        ``ActionRequired`` (domain/services/clocked.py); the time it is
        abandoned unless it changes again is set (domain/abandonment.py). The
        result shows the events as the caller sees them (R11)."""
        now = self.now()
        events = clocked(game, change.events, change.cause, now, self._deps.warn)  # the wait last
        deps = self._deps
        events = rated_end(self.uow.ratings, deps.rating_model, deps.ratings, game, events, now)
        logged = game.record(events, change.cause, now, change.cause_at)
        game.abandon_at = abandon_at(game, self._deps.abandon)
        if game.id in self._loaded:
            self.uow.games.save(game, self._loaded[game.id])
        else:
            self.uow.games.add(game)
        self.uow.events.append(logged)
        actor = None if self._req is None else self._req.player_id
        told = notices(game, events, self._waited.get(game.id), actor)
        self._waited[game.id] = waiting_person(game)  # a second change of it starts here
        if told:
            self.uow.notifications.add(now, told)
        seat = game.seat_of(None if self._req is None else self._req.player_id)
        return MutationResult(game.id, game.version, tuple(e.seen_by(seat) for e in logged))

    def claim(self, player_id: str) -> None:
        """Before counting what the player has open (docs/decisions/0051):
        the player's capped creations queue one behind the other."""
        self.uow.players.claim(player_id)

    def add_player(
        self,
        player: Player,
        token_hash: str | None,
        key_digest: str | None = None,
        label: str | None = None,
    ) -> None:
        """A new player and its first session, holding the token of
        ``token_hash`` (None: no session, a provider's player)."""
        self.uow.players.add(player, key_digest)
        if token_hash is None:
            return
        now = self.now()
        self.uow.players.add_session(
            SessionRecord(session_id(token_hash), player.id, label, now, now), token_hash
        )

    def add_service_key(self, key: ServiceKey, key_hash: str) -> None:
        """A new key of the app's backend (issue #24), stored as its hash."""
        self.uow.service_keys.add(key, key_hash)

    def replace_token_hash(self, player_id: str, old: str, new: str) -> bool:
        """Rotate: only while the player still holds ``old``."""
        return self.uow.players.replace_token_hash(player_id, old, new)

    def keep(self, record: IdempotencyRecord, *, over_expired: bool = False) -> None:
        """Store a record a use case built itself (``createPlayer``'s,
        ``issuePlayerToken``'s); ``over_expired``: in place of the key's
        expired one, not swept yet."""
        if over_expired:
            self.uow.idempotency.discard(record.player_id, record.key)
        self.uow.idempotency.put(record)

    def expire_records(self, limit: int) -> int:
        """Delete up to ``limit`` idempotency records expired now (the sweep)."""
        return self.uow.idempotency.delete_expired(self.now(), limit)

    def replace_ratings(self, ratings: Sequence[Rating]) -> None:
        """Every rating, replaced by ``ratings`` (``mmk ratings rebuild``)."""
        self.uow.ratings.replace_all(ratings)

    def add_booster(self, record: BoosterRecord) -> None:
        self.uow.boosters.add(record)

    def remember(self, result: Callable[[], Remembered]) -> None:
        """The first result, kept under the request's key (if it has one: only
        then is ``result`` called) for its repeats, for the retention
        (docs/decisions/0041)."""
        req = self._req
        if req is not None and req.idempotency_key is not None:
            now = self.now()
            self.uow.idempotency.put(
                IdempotencyRecord(
                    req.player_id,
                    req.idempotency_key,
                    req.fingerprint(),
                    result(),
                    now,
                    now + self._deps.keys.retention,
                )
            )

    def remembered(self) -> Remembered | None:
        """The first result of this request's key, if any; a reused key with
        other input is refused, and a kept refusal is raised again. An
        expired record (not swept yet) is discarded: a repeat after expiry is
        a new request (0041)."""
        req = self._req
        if req is None or req.idempotency_key is None:
            return None
        rec = self.uow.idempotency.get(req.player_id, req.idempotency_key)
        if rec is None:
            return None
        if rec.expires_at <= self.now():
            self.uow.idempotency.discard(req.player_id, req.idempotency_key)
            return None
        if rec.fingerprint != req.fingerprint():
            raise IdempotencyKeyReused("this idempotency key was used with other input")
        if isinstance(rec.result, Refused):
            raise rec.result.again()
        return rec.result

    def commit(self) -> list[NewEvents]:
        self.uow.commit()
        return self.uow.collect_new_events()


@dataclass(frozen=True, slots=True)
class Steps(Generic[T, R]):
    """A use case's part of a transaction: ``load`` what the decision reads,
    ``decide`` (the rules; writes through the :class:`Tx`), and how its
    result is kept under an idempotency key and given back to a repeat."""

    load: Callable[[Tx], T]
    decide: Callable[[Tx, T], R]
    keep: Callable[[R], Remembered]
    repeat: Callable[[Tx, Remembered], R]
    wakes_bots: bool = True
    attempts: int = ATTEMPTS  # tries before CONFLICT (quick play: one per racer, 0048)


def _keeps_none(result: object) -> NoReturn:
    raise AssertionError("a use case without a request keeps no record through its steps")


def _repeats_none(tx: Tx, first: Remembered) -> NoReturn:
    raise AssertionError("a use case without a request is never a repeat")


def unkeyed(load: Callable[[Tx], T], decide: Callable[[Tx, T], R]) -> Steps[T, R]:
    """The steps of a use case run without a request (no idempotency key:
    ``transact(deps, None, ...)``), which keeps no record through them."""
    return Steps(load, decide, _keeps_none, _repeats_none)


def _once(deps: Deps, req: Request | None, steps: Steps[T, R]) -> tuple[R, list[NewEvents]]:
    with deps.uow() as uow:
        tx = Tx(deps, uow, req)
        loaded = steps.load(tx)
        first = tx.remembered()
        if first is not None:
            return steps.repeat(tx, first), []
        tx.check_expected_version()
        result = steps.decide(tx, loaded)
        tx.remember(partial(steps.keep, result))
        return result, tx.commit()


def _repeat(deps: Deps, req: Request, steps: Steps[T, R]) -> R | None:
    with deps.uow() as uow:
        tx = Tx(deps, uow, req)
        first = tx.remembered()
        return None if first is None else steps.repeat(tx, first)


def _keeps(req: Request, refusal: DomainError) -> bool:
    """Whether ``refusal`` becomes the first result of the request's key: it
    has one, the refusal is not one of :data:`NOT_KEPT`, and it is not the
    key's first result already."""
    return (
        req.idempotency_key is not None
        and refusal.code not in NOT_KEPT
        and not isinstance(refusal, ReplayedRefusal)
    )


def _refuse(deps: Deps, req: Request, steps: Steps[T, R], refusal: DomainError) -> R:
    """Keep ``refusal`` as the key's first result, in a transaction that
    writes nothing else (the refused one was rolled back), then raise it. A
    twin that kept a result first wins, as in a lost race: its result (or
    refusal) is the answer."""
    try:
        with deps.uow() as uow:
            tx = Tx(deps, uow, req)
            tx.remember(partial(Refused.of, refusal))
            tx.commit()
    except WriteConflict:
        twin = _repeat(deps, req, steps)
        if twin is not None:
            return twin
    raise refusal


async def transact(deps: Deps, req: Request | None, steps: Steps[T, R]) -> R:
    """Run ``steps`` in a transaction (again after a lost race, see the
    module docstring); after the commit, publish what it logged. Under a
    key, a refusal is kept as the first result (decision 0042)."""
    lost: WriteConflict | None = None
    for _ in range(steps.attempts):
        try:
            result, news = await deps.run(partial(_once, deps, req, steps))
        except WriteConflict as e:
            lost = e
            if req is not None and req.expected_version is not None:
                break
            continue  # the next try replays a twin's result first, if one won
        except DomainError as e:
            if req is None or not _keeps(req, e):
                raise
            return await deps.run(partial(_refuse, deps, req, steps, e))
        await after_commit(deps, news, wake_bots=steps.wakes_bots)
        return result
    conflict = Conflict("another change to this game came first; reload and retry")
    conflict.__cause__ = lost
    if req is not None and _keeps(req, conflict):  # kept, unless a twin with our key won
        return await deps.run(partial(_refuse, deps, req, steps, conflict))
    raise conflict


def _kept(result: MutationResult) -> Remembered:
    return result


def _repeated(tx: Tx, first: Remembered) -> MutationResult:
    assert isinstance(first, MutationResult)  # the fingerprint names the operation
    return first


async def change_game(
    deps: Deps,
    req: Request | None,
    game_id: str | Callable[[Tx], str],
    decide: Callable[[Tx, GameRecord], Change],
    *,
    wakes_bots: bool = True,
    unseen: bool = False,
) -> MutationResult:
    """Load the game, ``decide`` (the rules change the game and say what
    happened), record it. A decision with no events (a bot with nothing to
    do) logs and saves nothing. ``game_id`` may be found in the transaction
    (a function of it: a repeat under the request's key then still gets its
    first result). ``unseen``: even a private game the requester may not
    see (:meth:`Tx.game`)."""

    def record(tx: Tx, game: GameRecord) -> MutationResult:
        change = decide(tx, game)
        if not change.events:
            return MutationResult(game.id, game.version, ())
        return tx.record(game, change)

    def load(tx: Tx) -> GameRecord:
        return tx.game(game_id if isinstance(game_id, str) else game_id(tx), unseen=unseen)

    steps = Steps(load, record, _kept, _repeated, wakes_bots)
    return await transact(deps, req, steps)


async def change_each(
    deps: Deps, game_ids: list[str], decide: Callable[[Tx, GameRecord], Change]
) -> int:
    """A sweep's changes: :func:`change_game` for each game, one versioned
    transaction each (every instance may sweep: each change commits once). A
    game that cannot change now (lost its races, or a rule refuses) is left
    for the next sweep and holds up none of the others. The games changed."""
    changed = 0
    for game_id in game_ids:
        try:
            done = await change_game(deps, None, game_id, decide)
        except DomainError:
            continue
        changed += bool(done.events)
    return changed


async def add_game(
    deps: Deps, req: Request, make: Callable[[Tx], tuple[GameRecord, Change]]
) -> MutationResult:
    """Add the game ``make`` builds, with its first events."""

    def add(tx: Tx, _: None) -> MutationResult:
        game, change = make(tx)
        return tx.record(game, change)

    return await transact(deps, req, Steps(no_load, add, _kept, _repeated))


def steps(
    load: Callable[[Tx], T],
    decide: Callable[[Tx, T], MutationResult],
    *,
    attempts: int = ATTEMPTS,
) -> Steps[T, MutationResult]:
    """The steps of a change whose result is a :class:`MutationResult`."""
    return Steps(load, decide, _kept, _repeated, attempts=attempts)


def no_load(tx: Tx) -> None:
    """The load step of a change that reads nothing first."""
    return None
