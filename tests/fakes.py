"""In-memory fakes of the ports (no mocks): they keep the contracts of
domain/ports.py, including rollback and write conflicts, and store copies so
an uncommitted change never leaks."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Any, TypeVar

from domain.bots.expert import Budget
from domain.featured import LiveGame, people
from domain.log import ExportedEvent, LoggedEvent
from domain.my_games import SeatEntry, StatLine, changed_entries, entries_of
from domain.notifications import Notice, Notification
from domain.ports import (
    BoosterRepository,
    EventLog,
    GameRepository,
    IdempotencyStore,
    Ids,
    NotificationStore,
    PlayerRepository,
    RatingStore,
    ServiceKeyRepository,
    WebhookStore,
    WriteConflict,
)
from domain.rating_pools import RatingPool
from domain.ratings import Rating
from domain.records import (
    BoosterRecord,
    GameRecord,
    GameStatus,
    GameSummary,
    IdempotencyRecord,
    Invitation,
    NewEvents,
    Occupant,
    PackPage,
    Page,
    Player,
    ServiceKey,
    SessionRecord,
    Visibility,
)
from domain.services.deps import Deps, KeyPolicy
from domain.services.service_keys import EXTERNAL
from domain.webhooks import Attempt, Disabled, Endpoint, Message, Outcome, Secrets, Status, outbox
from infra.bus.memory import InProcessBus
from infra.rating_model import OpenSkillModel
from infra.revocations.memory import InProcessRevocations
from infra.webhooks.sender import DeliveryError

T = TypeVar("T")


TEST_BUDGET = Budget(iterations=8)
"""EXPERT's budget on the fakes: a few iterations, no CPU cap (deterministic)."""


@dataclass
class Store:
    """What the fake database holds."""

    players: dict[str, Player] = field(default_factory=dict)
    sessions: dict[str, tuple[SessionRecord, str]] = field(default_factory=dict)  # id -> hash
    service_keys: dict[str, tuple[ServiceKey, str]] = field(default_factory=dict)  # id -> hash
    key_digests: dict[str, str] = field(default_factory=dict)  # digest -> player id
    identities: dict[tuple[str, str], str] = field(default_factory=dict)  # (iss, sub) -> id
    games: dict[str, GameRecord] = field(default_factory=dict)
    # "my games" (domain/my_games.py): (player id, game id) -> entry
    entries: dict[tuple[str, str], SeatEntry] = field(default_factory=dict)
    events: dict[tuple[str, int], LoggedEvent] = field(default_factory=dict)
    keys: dict[tuple[str, str], IdempotencyRecord] = field(default_factory=dict)
    boosters: list[BoosterRecord] = field(default_factory=list)
    claims: dict[str, int] = field(default_factory=dict)  # player id -> claims committed
    # each player's notifications, in seq order (issue #25)
    notifications: dict[str, list[Notification]] = field(default_factory=dict)
    notice_seqs: dict[str, int] = field(default_factory=dict)  # the last seq (players' column)
    # webhooks (0064): endpoints with their secrets, the outbox in order, push settings
    endpoints: dict[str, tuple[Endpoint, Secrets]] = field(default_factory=dict)
    messages: dict[str, Message] = field(default_factory=dict)
    push_kinds: dict[str, frozenset[str]] = field(default_factory=dict)
    # ratings (0065): (pool, subject) -> rating
    ratings: dict[tuple[RatingPool, str], Rating] = field(default_factory=dict)
    fail_before_commit: Callable[[], None] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)  # commits are atomic

    def hashes_of(self, player_id: str) -> list[str]:
        """The token hashes of the player's live sessions."""
        return [h for s, h in self.sessions.values() if s.player_id == player_id]

    def log(self, game_id: str) -> list[LoggedEvent]:
        """A game's whole log (every event as it happened), in order."""
        return sorted((e for (g, _), e in self.events.items() if g == game_id), key=lambda e: e.seq)


class FakeUnitOfWork:
    """Stages writes; applies them all at commit, none on rollback."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._ops: list[Callable[[], None]] = []
        self._checks: list[Callable[[], None]] = []
        self._written: list[GameRecord] = []
        self._appended: list[LoggedEvent] = []
        self._news: list[NewEvents] = []
        self._told: list[Notification] = []  # notifications made by the commit
        self.players: PlayerRepository = self
        self.service_keys: ServiceKeyRepository = _ServiceKeys(self)
        self.games: GameRepository = _Games(self)
        self.events: EventLog = _Events(self)
        self.idempotency: IdempotencyStore = _Keys(self)
        self.boosters: BoosterRepository = _Boosters(self)
        self.notifications: NotificationStore = _Notifications(self)
        self.webhooks: WebhookStore = _Webhooks(self)
        self.ratings: RatingStore = _Ratings(self)

    def __enter__(self) -> FakeUnitOfWork:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.rollback()

    def stage(self, op: Callable[[], None], check: Callable[[], None] | None = None) -> None:
        self._ops.append(op)
        if check is not None:
            self._checks.append(check)

    def commit(self) -> None:
        """All checks first, then all writes: all or nothing (atomic, should
        transactions run in threads)."""
        try:
            if self.store.fail_before_commit is not None:
                self.store.fail_before_commit()
            with self.store.lock:
                for check in self._checks:
                    check()
                for op in self._ops:
                    op()
            self._news += [
                NewEvents(
                    g,
                    tuple(e for e in self._appended if e.game_id == g.id),
                    tuple(n for n in self._told if n.notice.game_id == g.id),
                )
                for g in self._written
            ]
        finally:
            self.rollback()

    def rollback(self) -> None:
        self._ops.clear()
        self._checks.clear()
        self._written.clear()
        self._appended.clear()
        self._told.clear()

    def collect_new_events(self) -> list[NewEvents]:
        news, self._news = self._news, []
        return news

    # players
    def add(self, player: Player, key_digest: str | None = None) -> None:
        store = self.store

        def check() -> None:
            if player.id in store.players:
                raise WriteConflict(player.id)
            if key_digest is not None and key_digest in store.key_digests:
                raise WriteConflict("duplicate key digest")

        def write() -> None:
            store.players[player.id] = player
            if key_digest is not None:
                store.key_digests[key_digest] = player.id

        self.stage(write, check)

    def add_session(self, session: SessionRecord, token_hash: str) -> None:
        store = self.store

        def check() -> None:
            if session.id in store.sessions or token_hash in self._hashes():
                raise WriteConflict(session.id)

        self.stage(lambda: store.sessions.__setitem__(session.id, (session, token_hash)), check)

    def _hashes(self) -> set[str]:
        return {h for _, h in self.store.sessions.values()}

    def by_key_digest(self, key_digest: str) -> Player | None:
        player_id = self.store.key_digests.get(key_digest)
        return None if player_id is None else self.store.players[player_id]

    def by_identity(self, issuer: str, subject: str) -> Player | None:
        player_id = self.store.identities.get((issuer, subject))
        return None if player_id is None else self.store.players[player_id]

    def add_identity(self, player_id: str, issuer: str, subject: str, at: datetime) -> None:
        store, key = self.store, (issuer, subject)

        def check() -> None:
            if key in store.identities:
                raise WriteConflict(f"identity {issuer} {subject}")

        self.stage(lambda: store.identities.__setitem__(key, player_id), check)

    def rename(self, player_id: str, name: str) -> bool:
        found = self.store.players.get(player_id)
        if found is None:
            return False
        renamed = Player(found.id, name, found.created_at)
        self.stage(lambda: self.store.players.__setitem__(player_id, renamed))
        return True

    def replace_token_hash(self, player_id: str, old: str, new: str) -> bool:
        sessions = self.store.sessions
        held = [s for s, h in sessions.values() if s.player_id == player_id and h == old]
        if not held:
            return False
        swapped = (held[0], new)
        self.stage(lambda: sessions.__setitem__(swapped[0].id, swapped))
        return True

    def sessions_of(self, player_id: str) -> list[SessionRecord]:
        held = [s for s, _ in self.store.sessions.values() if s.player_id == player_id]
        held.sort(key=lambda s: s.id)
        held.sort(key=lambda s: (s.last_used_at, s.created_at), reverse=True)
        return held

    def end_session(self, player_id: str, session_id: str) -> str | None:
        found = self.store.sessions.get(session_id)
        if found is None or found[0].player_id != player_id:
            return None
        sessions = self.store.sessions

        def write() -> None:
            sessions.pop(session_id, None)

        self.stage(write)
        return found[1]

    def touch_sessions(self, session_ids: Collection[str], at: datetime) -> None:
        sessions = self.store.sessions

        def write() -> None:
            for session_id in session_ids:
                found = sessions.get(session_id)
                if found is not None:
                    sessions[session_id] = (replace(found[0], last_used_at=at), found[1])

        self.stage(write)

    def claim(self, player_id: str) -> None:
        """Optimistic: of two transactions that claimed a player, the second
        to commit conflicts (the SQL adapter makes it wait instead)."""
        claims = self.store.claims
        seen = claims.get(player_id, 0)

        def check() -> None:
            if claims.get(player_id, 0) != seen:
                raise WriteConflict(f"player {player_id} claimed by another transaction")

        self.stage(lambda: claims.__setitem__(player_id, seen + 1), check)

    def get(self, player_id: str) -> Player | None:
        return self.store.players.get(player_id)

    def by_token_hash(self, token_hash: str) -> tuple[Player, SessionRecord, str] | None:
        for session, h in self.store.sessions.values():
            if h == token_hash:
                return self.store.players[session.player_id], session, h
        return None

    def names(self, player_ids: Collection[str]) -> dict[str, str]:
        players = self.store.players
        return {i: players[i].name for i in player_ids if i in players}

    def live_token_hashes(self, hashes: Collection[str]) -> set[str]:
        held = self._hashes()
        return {h for h in hashes if h in held}


class _Games:
    def __init__(self, uow: FakeUnitOfWork) -> None:
        self.uow = uow

    def add(self, game: GameRecord) -> None:
        g = game.clone()
        games = self.uow.store.games

        def check() -> None:
            if g.id in games:
                raise WriteConflict(g.id)
            _unique_code(games, g)

        self.uow.stage(lambda: games.__setitem__(g.id, g), check)
        self.uow.stage(lambda: self._list(None, g))
        self.uow._written.append(game)

    def _list(self, before: GameRecord | None, game: GameRecord) -> None:
        """The game's entries, as the SQL adapter writes them: only those a
        change changed (their time and rank kept otherwise)."""
        entries = self.uow.store.entries
        now = entries_of(game)
        changed = changed_entries(None if before is None else entries_of(before), now)
        if changed is None:
            for key in [k for k in entries if k[1] == game.id]:
                del entries[key]
            changed = now
        for e in changed:
            entries[e.player_id, e.game_id] = e

    def get(self, game_id: str) -> GameRecord | None:
        g = self.uow.store.games.get(game_id)
        return None if g is None else g.clone()

    def save(self, game: GameRecord, expected_version: int) -> None:
        g = game.clone()
        games = self.uow.store.games

        def check() -> None:
            if games[g.id].version != expected_version:
                raise WriteConflict(g.id)
            _unique_code(games, g)

        self.uow.stage(lambda: self._list(games[g.id], g), check)
        self.uow.stage(lambda: games.__setitem__(g.id, g))
        self.uow._written.append(game)

    def _entries(self, player_id: str) -> list[tuple[SeatEntry, GameRecord]]:
        store = self.uow.store
        return sorted(
            ((e, store.games[g]) for (p, g), e in store.entries.items() if p == player_id),
            key=lambda eg: (eg[0].rank, eg[0].game_id),
        )

    def player_games(
        self,
        player_id: str,
        status: GameStatus | None,
        your_turn: bool | None,
        after: tuple[str, str] | None,
        limit: int,
    ) -> list[tuple[SeatEntry, GameSummary, list[Occupant | None]]]:
        found = [
            (e, GameSummary.of(g), list(g.seats))
            for e, g in self._entries(player_id)
            if (status is None or e.status is status)
            and (your_turn is None or e.your_turn is your_turn)
            and (after is None or (e.rank, e.game_id) > after)
        ]
        return found[:limit]

    def player_stats(self, player_id: str) -> list[StatLine]:
        lines: dict[tuple[str, int], list[int]] = {}
        for e, _ in self._entries(player_id):
            if e.status is GameStatus.FINISHED:
                line = lines.setdefault((e.format, e.seat_count), [0, 0])
                line[0] += 1
                line[1] += bool(e.won)
        return [StatLine(f, n, p, w) for (f, n), (p, w) in sorted(lines.items())]

    def stalled_bot_games(self, before: datetime, limit: int) -> list[str]:
        from domain.services.bot_turn import bot_to_act

        stalled = sorted(
            (
                g
                for g in self.uow.store.games.values()
                if g.updated_at < before and bot_to_act(g) is not None
            ),
            key=lambda g: g.updated_at,
        )
        return [g.id for g in stalled[:limit]]

    def due_deadlines(self, now: datetime, limit: int) -> list[str]:
        due = sorted(
            (g for g in self.uow.store.games.values() if g.due_at and g.due_at <= now),
            key=lambda g: (g.due_at, g.id),
        )
        return [g.id for g in due[:limit]]

    def next_deadline(self, after: datetime) -> datetime | None:
        later = [g.due_at for g in self.uow.store.games.values() if g.due_at and g.due_at > after]
        return min(later, default=None)

    def open_quick_play(self, key: str, limit: int) -> list[str]:
        found = sorted(
            (
                g
                for g in self.uow.store.games.values()
                if g.status is GameStatus.LOBBY and g.quick_play == key
            ),
            key=lambda g: (g.created_at, g.id),
        )
        return [g.id for g in found[:limit]]

    def due_bot_fills(self, now: datetime, limit: int) -> list[str]:
        due = sorted(
            (
                g
                for g in self.uow.store.games.values()
                if g.status is GameStatus.LOBBY
                and g.fill_bots_at is not None
                and g.fill_bots_at <= now
            ),
            key=lambda g: (g.fill_bots_at, g.id),
        )
        return [g.id for g in due[:limit]]

    def open_lobbies(self, host: str) -> int:
        return sum(
            g.host == host and g.status is GameStatus.LOBBY and g.quick_play is None
            for g in self.uow.store.games.values()
        )

    def quick_play_waits(self, player_id: str) -> int:
        return sum(
            g.status is GameStatus.LOBBY
            and g.quick_play is not None
            and g.seat_of(player_id) is not None
            for g in self.uow.store.games.values()
        )

    def due_abandonments(self, now: datetime, limit: int) -> list[str]:
        due = sorted(
            (g for g in self.uow.store.games.values() if g.abandon_at and g.abandon_at <= now),
            key=lambda g: (g.abandon_at, g.id),
        )
        return [g.id for g in due[:limit]]

    def rated_games(self, after: str | None, limit: int) -> list[str]:
        done = GameStatus.FINISHED
        found = sorted(
            g.id
            for g in self.uow.store.games.values()
            if g.rated and g.status is done and (after is None or g.id > after)
        )
        return found[:limit]

    def by_invite_code(self, code: str) -> str | None:
        for g in self.uow.store.games.values():
            if g.invite_code == code:
                return g.id
        return None

    def invitations_of(
        self, player_id: str, before: tuple[datetime, str] | None, limit: int
    ) -> list[tuple[Invitation, GameSummary]]:
        found = sorted(
            (
                (i, GameSummary.of(g))
                for g in self.uow.store.games.values()
                if g.status is GameStatus.LOBBY
                for i in g.invitations
                if i.player_id == player_id
            ),
            key=lambda ig: (ig[0].at, ig[1].id),
            reverse=True,
        )
        if before is not None:
            found = [(i, g) for i, g in found if (i.at, g.id) < before]
        return found[:limit]

    def invitations_sent(self, host: str) -> int:
        return sum(
            i.invited_by == host
            for g in self.uow.store.games.values()
            if g.status is GameStatus.LOBBY
            for i in g.invitations
        )

    def page(
        self, status: GameStatus | None, before: tuple[datetime, str] | None, limit: int
    ) -> Page:
        games = sorted(
            self.uow.store.games.values(), key=lambda g: (g.created_at, g.id), reverse=True
        )
        games = [
            g
            for g in games
            if (status is None or g.status is status) and g.visibility is Visibility.PUBLIC
        ]
        if before is not None:
            games = [g for g in games if (g.created_at, g.id) < before]
        return Page([GameSummary.of(g) for g in games[:limit]], len(games) > limit)

    def live(self, limit: int) -> list[LiveGame]:
        games = sorted(
            self.uow.store.games.values(), key=lambda g: (g.created_at, g.id), reverse=True
        )
        running = [
            g for g in games if g.status is GameStatus.RUNNING and g.visibility is Visibility.PUBLIC
        ]
        return [
            LiveGame(
                GameSummary.of(g),
                people(g.seats),
                g.updated_at,
            )
            for g in running[:limit]
        ]


class _Notifications:
    def __init__(self, uow: FakeUnitOfWork) -> None:
        self.uow = uow

    def add(self, at: datetime, notices: Sequence[tuple[str, Notice]]) -> None:
        told = list(notices)

        def apply() -> None:  # seqs taken at the commit, under the store's lock
            for player_id, notice in told:
                if player_id not in self.uow.store.players:  # SQL's foreign key
                    raise ValueError(f"a notification for no player: {player_id}")
                mine = self.uow.store.notifications.setdefault(player_id, [])
                seqs = self.uow.store.notice_seqs
                seqs[player_id] = seq = seqs.get(player_id, 0) + 1
                mine.append(Notification(player_id, seq, at, notice))
                self.uow._told.append(mine[-1])
            store = self.uow.store
            made = self.uow._told[-len(told) :] if told else []
            endpoints = [e for e, _ in store.endpoints.values()]
            external = {p: i for (iss, i), p in store.identities.items() if iss == EXTERNAL}
            for m in outbox(endpoints, made, store.push_kinds, external):
                store.messages[m.id] = m

        self.uow.stage(apply)

    def last_seq(self, player_id: str) -> int:
        return self.uow.store.notice_seqs.get(player_id, 0)

    def page(
        self, player_id: str, after_seq: int, limit: int, unread_only: bool
    ) -> list[Notification]:
        found = [
            n
            for n in self.uow.store.notifications.get(player_id, [])
            if n.seq > after_seq and (n.read_at is None or not unread_only)
        ]
        return found[:limit]

    def mark_read(self, player_id: str, upto_seq: int, at: datetime) -> int:
        mine = self.uow.store.notifications.get(player_id, [])
        todo = [i for i, n in enumerate(mine) if n.seq <= upto_seq and n.read_at is None]

        def apply() -> None:
            for i in todo:
                mine[i] = replace(mine[i], read_at=at)

        self.uow.stage(apply)
        return len(todo)

    def delete_read(self, before: datetime, limit: int) -> int:
        old = [
            (p, n.seq)
            for p, mine in self.uow.store.notifications.items()
            for n in mine
            if n.read_at is not None and n.read_at < before
        ][:limit]

        def apply() -> None:
            gone = set(old)
            for p, mine in self.uow.store.notifications.items():
                mine[:] = [n for n in mine if (p, n.seq) not in gone]

        self.uow.stage(apply)
        return len(old)


class _Webhooks:
    """The outbox as a dict in insertion order; a lease is one step under
    the store's lock (as SKIP LOCKED leaves a leased row to its deliverer)."""

    def __init__(self, uow: FakeUnitOfWork) -> None:
        self.uow = uow
        self.store = uow.store

    def endpoints(self) -> list[Endpoint]:
        return sorted(
            (e for e, _ in self.store.endpoints.values()), key=lambda e: (e.created_at, e.id)
        )

    def secrets(self, endpoint_id: str) -> Secrets | None:
        found = self.store.endpoints.get(endpoint_id)
        return None if found is None else found[1]

    def add_endpoint(self, endpoint: Endpoint, secrets: Secrets) -> None:
        def check() -> None:
            if endpoint.id in self.store.endpoints:
                raise WriteConflict(endpoint.id)

        self.uow.stage(
            lambda: self.store.endpoints.__setitem__(endpoint.id, (endpoint, secrets)), check
        )

    def save_endpoint(self, endpoint: Endpoint) -> None:
        def apply() -> None:
            if endpoint.id in self.store.endpoints:
                self.store.endpoints[endpoint.id] = (endpoint, self.store.endpoints[endpoint.id][1])

        self.uow.stage(apply)

    def save_secrets(self, endpoint_id: str, secrets: Secrets) -> None:
        def apply() -> None:
            e, _ = self.store.endpoints[endpoint_id]
            self.store.endpoints[endpoint_id] = (
                replace(e, previous_until=secrets.previous_until),
                secrets,
            )

        self.uow.stage(apply)

    def delete_endpoint(self, endpoint_id: str) -> bool:
        if endpoint_id not in self.store.endpoints:
            return False

        def apply() -> None:
            self.store.endpoints.pop(endpoint_id, None)
            for k in [k for k, m in self.store.messages.items() if m.endpoint_id == endpoint_id]:
                del self.store.messages[k]

        self.uow.stage(apply)
        return True

    def enqueue(self, messages: Sequence[Message]) -> None:
        self.uow.stage(lambda: self.store.messages.update({m.id: m for m in messages}))

    def lease(self, endpoint_id: str, now: datetime, until: datetime, limit: int) -> list[Message]:
        with self.store.lock:
            found = self.store.endpoints.get(endpoint_id)
            if found is None or found[0].disabled_at is not None:
                return []
            due = sorted(
                (
                    m
                    for m in self.store.messages.values()
                    if m.endpoint_id == endpoint_id
                    and m.status == Status.PENDING
                    and m.next_at is not None
                    and m.next_at <= now
                ),
                key=lambda m: (m.next_at or now, m.id),
            )[:limit]
            leased = [replace(m, tries=m.tries + 1, next_at=until) for m in due]
            self.store.messages.update({m.id: m for m in leased})
        return sorted(leased, key=lambda m: (m.created_at, m.id))

    def finish(self, m: Message, attempt: Attempt, outcome: Outcome) -> bool:
        with self.store.lock:
            now = self.store.messages.get(m.id)
            if now is None or now.tries != m.tries or now.status != Status.PENDING:
                return False
            self.store.messages[m.id] = replace(
                now,
                status=outcome.status,
                next_at=outcome.next_at,
                attempts=(*now.attempts, attempt),
            )
        return True

    def disable(self, endpoint_id: str, at: datetime, reason: Disabled) -> bool:
        found = self.store.endpoints.get(endpoint_id)
        if found is None or found[0].disabled_at is not None:
            return False

        def apply() -> None:
            found = self.store.endpoints.get(endpoint_id)
            if found is not None and found[0].disabled_at is None:
                e = replace(found[0], disabled_at=at, disabled_reason=reason)
                self.store.endpoints[endpoint_id] = (e, found[1])

        self.uow.stage(apply)
        return True

    def messages(
        self,
        endpoint_id: str,
        status: Status | None,
        before: tuple[datetime, str] | None,
        limit: int,
    ) -> list[Message]:
        mine = sorted(
            (
                m
                for m in self.store.messages.values()
                if m.endpoint_id == endpoint_id
                and (status is None or m.status == status)
                and (before is None or (m.created_at, m.id) < before)
            ),
            key=lambda m: (m.created_at, m.id),
            reverse=True,
        )
        return mine[:limit]

    def message(self, message_id: str) -> Message | None:
        return self.store.messages.get(message_id)

    def replay(self, message_ids: Sequence[str], at: datetime) -> int:
        found = [i for i in message_ids if i in self.store.messages]

        def apply() -> None:
            for i in found:
                m = self.store.messages[i]
                self.store.messages[i] = replace(
                    m, status=Status.PENDING, next_at=at, retry_from=at, retry_tries=m.tries
                )

        self.uow.stage(apply)
        return len(found)

    def failed_since(self, endpoint_id: str, since: datetime, limit: int) -> list[str]:
        return [
            m.id
            for m in sorted(self.store.messages.values(), key=lambda m: (m.created_at, m.id))
            if m.endpoint_id == endpoint_id and m.status == Status.FAILED and m.created_at >= since
        ][:limit]

    def delete_done(self, before: datetime, limit: int) -> int:
        old = [
            m.id
            for m in sorted(self.store.messages.values(), key=lambda m: m.created_at)
            if m.status != Status.PENDING and m.created_at < before
        ][:limit]

        def apply() -> None:
            for i in old:
                self.store.messages.pop(i, None)

        self.uow.stage(apply)
        return len(old)

    def push_kinds(self, player_ids: Collection[str]) -> dict[str, frozenset[str]]:
        return {p: k for p, k in self.store.push_kinds.items() if p in player_ids}

    def set_push_kinds(self, player_id: str, kinds: frozenset[str]) -> None:
        self.uow.stage(lambda: self.store.push_kinds.__setitem__(player_id, kinds))

    def external_ids(self, player_ids: Collection[str]) -> dict[str, str]:
        return {
            p: sub
            for (iss, sub), p in self.store.identities.items()
            if iss == EXTERNAL and p in player_ids
        }


def _unique_code(games: dict[str, GameRecord], game: GameRecord) -> None:
    """Invite codes are unique, as the SQL adapter's index keeps them."""
    code = game.invite_code
    if code is not None and any(g.invite_code == code and g.id != game.id for g in games.values()):
        raise WriteConflict(f"invite code of {game.id}")


class _Events:
    def __init__(self, uow: FakeUnitOfWork) -> None:
        self.uow = uow

    def append(self, events: Sequence[LoggedEvent]) -> None:
        batch = list(events)
        log = self.uow.store.events

        def check() -> None:
            if any((e.game_id, e.seq) in log for e in batch):
                raise WriteConflict("duplicate seq")

        self.uow.stage(lambda: log.update({(e.game_id, e.seq): e for e in batch}), check)
        self.uow._appended += batch

    def read(
        self, game_id: str, after_seq: int, limit: int, seat: int | None, *, causes: bool = False
    ) -> list[LoggedEvent]:
        rows = [e for e in self.uow.store.log(game_id) if e.seq > after_seq][:limit]
        return [
            replace(e, event=e.event.seen_by(seat), cause=e.cause if causes else None) for e in rows
        ]

    def read_audiences(
        self, game_id: str, after_seq: int, limit: int, seat_count: int, *, causes: bool = False
    ) -> list[ExportedEvent]:
        rows = [e for e in self.uow.store.log(game_id) if e.seq > after_seq][:limit]
        return [ExportedEvent.of(e if causes else replace(e, cause=None), seat_count) for e in rows]


class _Keys:
    def __init__(self, uow: FakeUnitOfWork) -> None:
        self.uow = uow
        self.discarded: set[tuple[str, str]] = set()  # by this transaction, before a put

    def get(self, player_id: str, key: str) -> IdempotencyRecord | None:
        return self.uow.store.keys.get((player_id, key))

    def put(self, record: IdempotencyRecord) -> None:
        keys = self.uow.store.keys

        def check() -> None:
            at = (record.player_id, record.key)
            if at in keys and at not in self.discarded:
                raise WriteConflict("duplicate key")

        self.uow.stage(lambda: keys.__setitem__((record.player_id, record.key), record), check)

    def discard(self, player_id: str, key: str) -> None:
        self.discarded.add((player_id, key))

        def drop() -> None:
            self.uow.store.keys.pop((player_id, key), None)

        self.uow.stage(drop)

    def delete_expired(self, now: datetime, limit: int) -> int:
        keys = self.uow.store.keys
        expired = [k for k, r in keys.items() if r.expires_at <= now][:limit]

        def delete() -> None:
            for k in expired:
                keys.pop(k, None)

        self.uow.stage(delete)
        return len(expired)


class _ServiceKeys:
    def __init__(self, uow: FakeUnitOfWork) -> None:
        self.uow = uow

    def add(self, key: ServiceKey, key_hash: str) -> None:
        keys = self.uow.store.service_keys

        def check() -> None:
            if key.id in keys or any(h == key_hash for _, h in keys.values()):
                raise WriteConflict(key.id)

        self.uow.stage(lambda: keys.__setitem__(key.id, (key, key_hash)), check)

    def by_hash(self, key_hash: str) -> tuple[ServiceKey, str] | None:
        return next((f for f in self.uow.store.service_keys.values() if f[1] == key_hash), None)

    def all(self) -> list[ServiceKey]:
        return sorted(
            (k for k, _ in self.uow.store.service_keys.values()), key=lambda k: (k.created_at, k.id)
        )

    def revoke(self, key_id: str, at: datetime) -> bool:
        keys = self.uow.store.service_keys
        found = keys.get(key_id)
        if found is None or found[0].revoked_at is not None:
            return False
        revoked = (replace(found[0], revoked_at=at), found[1])
        self.uow.stage(lambda: keys.__setitem__(key_id, revoked))
        return True


class _Boosters:
    def __init__(self, uow: FakeUnitOfWork) -> None:
        self.uow = uow

    def add(self, record: BoosterRecord) -> None:
        self.uow.stage(lambda: self.uow.store.boosters.append(record))

    def of_player(self, player_id: str) -> list[BoosterRecord]:
        return [r for r in self.uow.store.boosters if r.player_id == player_id]

    def page_of_player(
        self, player_id: str, after: tuple[datetime, str] | None, limit: int
    ) -> PackPage:
        mine = sorted(self.of_player(player_id), key=lambda r: (r.opened_at, r.id))
        later = [r for r in mine if after is None or (r.opened_at, r.id) > after]
        return PackPage(later[:limit], len(later) > limit, len(mine))

    def opened_since(self, player_id: str, since: datetime, limit: int) -> list[datetime]:
        opened = sorted(
            (
                r.opened_at
                for r in self.uow.store.boosters
                if r.player_id == player_id and r.game_id is None and r.opened_at > since
            ),
            reverse=True,
        )
        return opened[:limit]


class FakeClock:
    """Advances one millisecond per reading, so order is visible."""

    def __init__(self) -> None:
        self._t = datetime(2026, 1, 1, tzinfo=UTC)

    def now(self) -> datetime:
        self._t += timedelta(milliseconds=1)
        return self._t

    def advance(self, delta: timedelta) -> None:
        """Time passes (expiry tests)."""
        self._t += delta

    def set(self, t: datetime) -> None:
        """Read ``t`` next (webhooks' signatures are checked against real time)."""
        self._t = t


@dataclass
class FakeSender:
    """A receiver that answers ``codes`` in turn (None: no answer), then 200."""

    codes: list[int | None] = field(default_factory=list)
    got: list[tuple[str, dict[str, str], bytes]] = field(default_factory=list)

    async def post(self, url: str, headers: dict[str, str], body: bytes, timeout: float) -> int:
        self.got.append((url, headers, body))
        code = self.codes.pop(0) if self.codes else 200
        if code is None:
            raise DeliveryError("no answer within 10 s")
        return code


class FakeIds:
    """Deterministic ids, tokens, seeds and salts (salts count apart, so
    that the ids a test expects do not depend on them)."""

    def __init__(self) -> None:
        self._n = itertools.count(1)
        self._salts = itertools.count(1)
        self._codes = itertools.count(1)

    def new_id(self) -> str:
        return f"id{next(self._n)}"

    def new_token(self) -> str:
        return f"token-{next(self._n)}"

    def new_seed(self) -> str:
        return f"seed{next(self._n)}"

    def new_salt(self) -> str:
        return f"salt{next(self._salts)}"

    def new_invite_code(self) -> str:
        """Counted apart too; digits, so valid codes (domain/invitations.py)."""
        return f"{next(self._codes):010d}"


async def run_inline(fn: Callable[[], T]) -> T:
    """Runs the transaction in the loop's thread (fakes need no thread)."""
    return fn()


TEST_SECRET = b"test-secret-0123456789abcdef0123"
TEST_KEYS = KeyPolicy(TEST_SECRET)


@dataclass
class Harness:
    """Use cases wired to fakes; bots are driven when ``drain()`` is awaited."""

    store: Store
    bus: InProcessBus
    deps: Deps
    scheduled: list[str]

    @property
    def clock(self) -> FakeClock:
        assert isinstance(self.deps.clock, FakeClock)
        return self.deps.clock

    async def drain(self) -> int:
        from domain.services.bots import drive_bots

        moves = 0
        while self.scheduled:
            moves += await drive_bots(self.deps, self.scheduled.pop(0))
        return moves


def harness(
    run: Callable[[Callable[[], Any]], Any] | None = None,
    *,
    keys: KeyPolicy = TEST_KEYS,
    ids: Ids | None = None,
) -> Harness:
    """Use cases on fakes; ``keys`` the idempotency policy (its secret), ``ids``
    another :class:`~domain.ports.Ids` than :class:`FakeIds`."""
    store = Store()
    bus = InProcessBus(queue_limit=100_000)
    scheduled: list[str] = []

    def schedule(game_id: str) -> None:
        if game_id not in scheduled:
            scheduled.append(game_id)

    deps = Deps(
        uow=lambda: FakeUnitOfWork(store),
        run=run or run_inline,
        bus=bus,
        clock=FakeClock(),
        ids=ids or FakeIds(),
        schedule_bots=schedule,
        keys=keys,
        revocations=InProcessRevocations(),
        rating_model=OpenSkillModel(),
        expert_budget=TEST_BUDGET,
    )
    return Harness(store, bus, deps, scheduled)


class _Ratings:
    """``RatingStore``: a rating is written only over the one read (its
    games count), as the SQL store's conditional update."""

    def __init__(self, uow: FakeUnitOfWork) -> None:
        self.uow = uow

    def get(
        self, pool: RatingPool, subjects: Collection[str], *, lock: bool = False
    ) -> dict[str, Rating]:
        kept = self.uow.store.ratings
        return {s: kept[(pool, s)] for s in subjects if (pool, s) in kept}

    def put(self, ratings: Sequence[Rating]) -> None:
        kept = self.uow.store.ratings

        def check() -> None:
            for r in ratings:
                old = kept.get((r.pool, r.subject))
                if (0 if old is None else old.games) != r.games - 1:
                    raise WriteConflict(f"the rating of {r.subject} changed meanwhile")

        def write() -> None:
            for r in ratings:
                kept[(r.pool, r.subject)] = r

        self.uow.stage(write, check)

    def of_subject(self, subject: str) -> list[Rating]:
        kept = self.uow.store.ratings.values()
        return sorted((r for r in kept if r.subject == subject), key=lambda r: r.pool.value)

    def _listed(self, pool: RatingPool, min_games: int, since: datetime) -> list[Rating]:
        return sorted(
            (
                r
                for r in self.uow.store.ratings.values()
                if r.pool is pool and r.games >= min_games and r.last_at >= since
            ),
            key=lambda r: (r.skill.mu, r.subject),
            reverse=True,
        )

    def leaderboard(
        self,
        pool: RatingPool,
        min_games: int,
        active_since: datetime,
        after: tuple[float, str] | None,
        limit: int,
    ) -> list[Rating]:
        listed = self._listed(pool, min_games, active_since)
        if after is not None:
            listed = [r for r in listed if (r.skill.mu, r.subject) < after]
        return listed[:limit]

    def ahead_of(
        self, pool: RatingPool, rating: Rating, min_games: int, active_since: datetime
    ) -> int:
        me = (rating.skill.mu, rating.subject)
        return sum(
            (r.skill.mu, r.subject) > me for r in self._listed(pool, min_games, active_since)
        )

    def listed(
        self, pool: RatingPool, min_games: int, active_since: datetime
    ) -> list[tuple[float, str]]:
        return [(r.skill.mu, r.subject) for r in self._listed(pool, min_games, active_since)][::-1]

    def all(self) -> list[Rating]:
        kept = self.uow.store.ratings.values()
        return sorted(kept, key=lambda r: (r.pool.value, r.subject))

    def replace_all(self, ratings: Sequence[Rating]) -> None:
        def write() -> None:
            self.uow.store.ratings.clear()
            for r in ratings:
                self.uow.store.ratings[(r.pool, r.subject)] = r

        self.uow.stage(write)
