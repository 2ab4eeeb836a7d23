"""Ports: what the use cases need from the outside world, as small protocols.

Storage is a synchronous unit of work run off the event loop in one hop
(:class:`BlockingRunner`); the event bus is asynchronous. [decision] One
thread hop per transaction costs far less than one per statement.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from types import TracebackType
from typing import Protocol, TypeVar

from domain.bots.thinking import ThinkJob
from domain.featured import LiveGame
from domain.game.commands import Command
from domain.identity import VerifiedIdentity
from domain.log import ExportedEvent, LoggedEvent
from domain.my_games import SeatEntry, StatLine
from domain.notifications import Notice, Notification
from domain.presence import Mark, PresenceChange
from domain.rating_pools import RatingPool
from domain.ratings import Rating, Skill
from domain.records import (
    BoosterRecord,
    GameRecord,
    GameStatus,
    GameSummary,
    IdempotencyRecord,
    Invitation,
    LobbyUpdate,
    NewEvents,
    Occupant,
    PackPage,
    Page,
    Player,
    ServiceKey,
    SessionRecord,
)
from domain.webhooks import Attempt, Disabled, Endpoint, Message, Outcome, Secrets, Status

T = TypeVar("T")


class WriteConflict(Exception):
    """Raised by a repository when another writer got there first
    (a stale version or a duplicate ``(game, seq)`` / key)."""


class PresenceUnavailable(Exception):
    """The presence store cannot be read now (its Redis is away): presence
    is best effort, so callers carry on without it (docs/decisions/0047)."""


class SubscriptionClosed(Exception):
    """The bus ended a subscription (e.g. a subscriber too slow to keep up);
    ``reason`` says why. The client may resume with ``afterSeq``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class PlayerRepository(Protocol):
    """Players and their sessions: each session holds one live MMK token,
    stored as its hash (issue #24)."""

    def add(self, player: Player, key_digest: str | None = None) -> None:
        """A duplicate id or key digest raises :class:`WriteConflict`."""
        ...

    def get(self, player_id: str) -> Player | None: ...
    def add_session(self, session: SessionRecord, token_hash: str) -> None:
        """A duplicate session id or token hash raises :class:`WriteConflict`."""
        ...

    def by_token_hash(self, token_hash: str) -> tuple[Player, SessionRecord, str] | None:
        """The player, the session and the stored hash, for a constant-time
        comparison."""
        ...

    def sessions_of(self, player_id: str) -> list[SessionRecord]:
        """The player's sessions, the most recently used first."""
        ...

    def end_session(self, player_id: str, session_id: str) -> str | None:
        """Delete the player's session; its token hash, or None if the player
        has no such session."""
        ...

    def touch_sessions(self, session_ids: Collection[str], at: datetime) -> None:
        """The sessions were used at ``at`` (one ended meanwhile stays ended)."""
        ...

    def by_key_digest(self, key_digest: str) -> Player | None:
        """The player ``createPlayer`` made under this key's digest."""
        ...

    def by_identity(self, issuer: str, subject: str) -> Player | None:
        """The player of an identity at the app's identity provider."""
        ...

    def add_identity(self, player_id: str, issuer: str, subject: str, at: datetime) -> None:
        """Tie an identity to a player; one already tied raises
        :class:`WriteConflict`."""
        ...

    def rename(self, player_id: str, name: str) -> bool:
        """The player's display name; False if there is no such player."""
        ...

    def replace_token_hash(self, player_id: str, old: str, new: str) -> bool:
        """Give the player's session holding ``old`` the hash ``new``; False
        if the player holds no ``old``."""
        ...

    def names(self, player_ids: Collection[str]) -> dict[str, str]:
        """The names of those players that exist."""
        ...

    def live_token_hashes(self, hashes: Collection[str]) -> set[str]:
        """Those of ``hashes`` that are some session's token hash now."""

    def claim(self, player_id: str) -> None:
        """Claim the player until this transaction ends, before counting what
        they have open (docs/decisions/0051): another transaction's claim of
        the same player waits for this one to end (a row lock), or one of
        the two fails with :class:`WriteConflict`; never do both count what
        neither has yet created."""
        ...


class ServiceKeyRepository(Protocol):
    """The app's backend's keys (issue #24), stored as hashes."""

    def add(self, key: ServiceKey, key_hash: str) -> None:
        """A duplicate id or hash raises :class:`WriteConflict`."""
        ...

    def by_hash(self, key_hash: str) -> tuple[ServiceKey, str] | None:
        """The key and the stored hash, for a constant-time comparison."""
        ...

    def all(self) -> list[ServiceKey]:
        """Every key, revoked ones too, oldest first."""
        ...

    def revoke(self, key_id: str, at: datetime) -> bool:
        """Mark the key revoked; False if there is none live by that id."""
        ...


class IdentityVerifier(Protocol):
    """The app's identity provider, as far as the server trusts it (issue
    #24): its tokens, verified."""

    def recognises(self, token: str) -> bool:
        """The bearer token is one of the provider's (else an MMK token)."""
        ...

    async def verify(self, token: str) -> VerifiedIdentity:
        """Who the token names, or :class:`~domain.errors.Unauthenticated`
        with the reason."""
        ...


class CommittedReads(Protocol):
    """What is committed now, one read on its own, outside any unit of work:
    what a request that reads one game, or signs in with one token, and
    writes nothing needs. An adapter may serve it without a worker thread
    (issue #28, docs/decisions/0073)."""

    async def game(self, game_id: str) -> GameRecord | None:
        """The game as last committed (the caller's own copy), or None."""
        ...

    async def session(self, token_hash: str) -> tuple[Player, SessionRecord, str] | None:
        """As :meth:`PlayerRepository.by_token_hash`."""
        ...


class GameRepository(Protocol):
    """Games. A game stored by :meth:`add` or :meth:`save` is, once
    committed, what later reads start from: the caller may still read it,
    but changes only the copies :meth:`get` returns."""

    def add(self, game: GameRecord) -> None:
        """Store a new game; a duplicate id raises :class:`WriteConflict`."""
        ...

    def get(self, game_id: str) -> GameRecord | None:
        """The game as committed: the caller's own copy, to change at will."""
        ...

    def save(self, game: GameRecord, expected_version: int) -> None:
        """Store ``game`` if the stored version is still ``expected_version``,
        else raise :class:`WriteConflict`."""
        ...

    def player_games(
        self,
        player_id: str,
        status: GameStatus | None,
        your_turn: bool | None,
        after: tuple[str, str] | None,
        limit: int,
    ) -> list[tuple[SeatEntry, GameSummary, list[Occupant | None]]]:
        """The player's seats (domain/my_games.py), in ``rank`` order after
        ``after`` (a rank and a game id), each with its game's listing and
        occupants; at most ``limit``."""
        ...

    def player_stats(self, player_id: str) -> list[StatLine]:
        """The player's finished games by format and seat count."""
        ...

    def stalled_bot_games(self, before: datetime, limit: int) -> list[str]:
        """Running games where a bot must act, unchanged since ``before``."""
        ...

    def due_deadlines(self, now: datetime, limit: int) -> list[str]:
        """Games whose turn deadline is ``now`` or earlier, oldest first."""
        ...

    def next_deadline(self, after: datetime) -> datetime | None:
        """The earliest turn deadline later than ``after`` (None: none)."""
        ...

    def open_quick_play(self, key: str, limit: int) -> list[str]:
        """Lobby games of quick-play match ``key``, oldest first (0048)."""
        ...

    def due_bot_fills(self, now: datetime, limit: int) -> list[str]:
        """Lobby games whose empty seats are to be filled with bots by ``now``
        (their fill time, oldest first; 0048)."""
        ...

    def open_lobbies(self, host: str) -> int:
        """Lobby games ``host`` hosts, quick-play games aside (0051)."""
        ...

    def quick_play_waits(self, player_id: str) -> int:
        """Quick-play lobby games in which ``player_id`` holds a seat (0051)."""
        ...

    def due_abandonments(self, now: datetime, limit: int) -> list[str]:
        """Games whose ``abandon_at`` is ``now`` or earlier, oldest first (0051)."""
        ...

    def rated_games(self, after: str | None, limit: int) -> list[str]:
        """Finished rated games, by id, after ``after`` (issue #26's rebuild)."""
        ...

    def by_invite_code(self, code: str) -> str | None:
        """The id of the game whose invite code is ``code`` (0062)."""
        ...

    def invitations_of(
        self, player_id: str, before: tuple[datetime, str] | None, limit: int
    ) -> list[tuple[Invitation, GameSummary]]:
        """The player's pending invitations to lobby games, newest first,
        strictly older than the ``(at, game id)`` cursor, with each game's
        listing (0062)."""
        ...

    def invitations_sent(self, host: str) -> int:
        """Pending invitations ``host`` sent to lobby games (0062)."""
        ...

    def page(
        self, status: GameStatus | None, before: tuple[datetime, str] | None, limit: int
    ) -> Page:
        """Public games newest first, strictly older than the ``(created_at,
        id)`` cursor (unlisted and private games are never listed, 0062)."""
        ...

    def live(self, limit: int) -> list[LiveGame]:
        """The newest ``limit`` running public games, with their people and
        last change (domain/featured.py)."""
        ...


class EventLog(Protocol):
    def append(self, events: Sequence[LoggedEvent]) -> None:
        """Append; a duplicate ``(game, seq)`` raises :class:`WriteConflict`."""
        ...

    def read(
        self, game_id: str, after_seq: int, limit: int, seat: int | None, *, causes: bool = False
    ) -> list[LoggedEvent]:
        """Up to ``limit`` events after ``after_seq``, in order, as ``seat``
        (None: a spectator) may see them (R11); with ``causes``, each with its
        cause too (server-only: for replays, never for a client)."""
        ...

    def read_audiences(
        self, game_id: str, after_seq: int, limit: int, seat_count: int, *, causes: bool = False
    ) -> list[ExportedEvent]:
        """Up to ``limit`` events after ``after_seq``, in order, each as the
        public and every one of ``seat_count`` seats saw it, in one read: a
        finished game's replay and export (R11: never a running game's)."""
        ...


class IdempotencyStore(Protocol):
    def get(self, player_id: str, key: str) -> IdempotencyRecord | None: ...
    def put(self, record: IdempotencyRecord) -> None:
        """A duplicate ``(player, key)`` raises :class:`WriteConflict`."""
        ...

    def discard(self, player_id: str, key: str) -> None:
        """Forget the record of ``(player, key)``, if any."""
        ...

    def delete_expired(self, now: datetime, limit: int) -> int:
        """Delete at most ``limit`` of the records that expired at ``now`` or
        before; how many."""
        ...


class BoosterRepository(Protocol):
    def add(self, record: BoosterRecord) -> None: ...
    def of_player(self, player_id: str) -> list[BoosterRecord]: ...
    def page_of_player(
        self, player_id: str, after: tuple[datetime, str] | None, limit: int
    ) -> PackPage:
        """The player's packs after ``after`` (opened at, id), oldest first."""

    def opened_since(self, player_id: str, since: datetime, limit: int) -> list[datetime]:
        """When the player opened their last ``limit`` packs after ``since``
        with ``openBoosterPack`` (not a Sealed game's), newest first (0051)."""
        ...


class NotificationStore(Protocol):
    """Each player's notifications (issue #25), numbered 1, 2, 3... per
    player, gapless, in the order their transactions commit."""

    def add(self, at: datetime, notices: Sequence[tuple[str, Notice]]) -> None:
        """Store each notice for its player under the player's next seq, in
        the order given (taken at the commit, from the player's counter,
        held to it); once committed, the unit of work's
        ``collect_new_events`` hands them out with their game's."""
        ...

    def last_seq(self, player_id: str) -> int:
        """The seq of the player's last notification (0: none yet)."""
        ...

    def page(
        self, player_id: str, after_seq: int, limit: int, unread_only: bool
    ) -> list[Notification]:
        """The player's notifications after ``after_seq``, oldest first."""
        ...

    def mark_read(self, player_id: str, upto_seq: int, at: datetime) -> int:
        """Mark the player's unread notifications up to ``upto_seq`` read at
        ``at``; how many."""
        ...

    def delete_read(self, before: datetime, limit: int) -> int:
        """Delete up to ``limit`` notifications read before ``before``; how many."""
        ...


class WebhookStore(Protocol):
    """The app's webhook endpoints and their outbox (issue #25, 0064). A
    notification's messages are written with it, in its transaction (the
    notification store hands them here at its commit)."""

    def endpoints(self) -> list[Endpoint]:
        """Every endpoint, oldest first."""
        ...

    def secrets(self, endpoint_id: str) -> Secrets | None: ...

    def add_endpoint(self, endpoint: Endpoint, secrets: Secrets) -> None: ...

    def save_endpoint(self, endpoint: Endpoint) -> None:
        """Store its fields (kinds, description, disabled, previous_until)."""
        ...

    def save_secrets(self, endpoint_id: str, secrets: Secrets) -> None: ...

    def delete_endpoint(self, endpoint_id: str) -> bool:
        """Delete it with its messages; False if there was none."""
        ...

    def enqueue(self, messages: Sequence[Message]) -> None:
        """Write new messages (one per endpoint and notification)."""
        ...

    def lease(self, endpoint_id: str, now: datetime, until: datetime, limit: int) -> list[Message]:
        """Up to ``limit`` of the live endpoint's pending messages due at
        ``now``, oldest first, each with ``tries`` counted up and not due
        again before ``until``: no other deliverer takes them meanwhile
        (rows locked by another transaction are passed over)."""
        ...

    def finish(self, m: Message, attempt: Attempt, outcome: Outcome) -> bool:
        """Log the attempt and set the message's status, if it is still the
        ``m.tries``-th lease (False: another deliverer took it since)."""
        ...

    def disable(self, endpoint_id: str, at: datetime, reason: Disabled) -> bool:
        """Disable a live endpoint; False if it was not live."""
        ...

    def messages(
        self,
        endpoint_id: str,
        status: Status | None,
        before: tuple[datetime, str] | None,
        limit: int,
    ) -> list[Message]:
        """The endpoint's messages, newest first, with their attempts."""
        ...

    def message(self, message_id: str) -> Message | None: ...

    def replay(self, message_ids: Sequence[str], at: datetime) -> int:
        """Make these messages pending again, due at ``at`` (their retries
        start again from it); how many."""
        ...

    def failed_since(self, endpoint_id: str, since: datetime, limit: int) -> list[str]:
        """The ids of the endpoint's messages that failed, made since ``since``."""
        ...

    def delete_done(self, before: datetime, limit: int) -> int:
        """Delete up to ``limit`` messages no longer pending made before ``before``."""
        ...

    def push_kinds(self, player_ids: Collection[str]) -> dict[str, frozenset[str]]:
        """The players' chosen kinds to push (a player who chose none is absent)."""
        ...

    def set_push_kinds(self, player_id: str, kinds: frozenset[str]) -> None: ...

    def external_ids(self, player_ids: Collection[str]) -> dict[str, str]:
        """The app's ids of these players (those that have one)."""
        ...


class RatingModel(Protocol):
    """A multiplayer rating model (issue #26): OpenSkill's Plackett-Luce
    in infra; the domain writes no rating maths."""

    def initial(self) -> Skill:
        """A new subject's skill."""
        ...

    def rate(self, skills: Sequence[Skill], places: Sequence[int]) -> list[Skill]:
        """Each seat's new skill after a game it finished at ``places``
        (1 the best; equal places tie)."""
        ...


class RatingStore(Protocol):
    """Ratings per subject and pool (docs/decisions/0065)."""

    def get(
        self, pool: RatingPool, subjects: Collection[str], *, lock: bool = False
    ) -> dict[str, Rating]:
        """These subjects' ratings in ``pool`` (the unrated left out); with
        ``lock``, locked until the transaction ends where the database locks
        rows."""
        ...

    def put(self, ratings: Sequence[Rating]) -> None:
        """Store each rating if its subject's stored games count is still
        ``games - 1`` (none stored: a first game), else raise
        :class:`WriteConflict` (a game ended meanwhile that changed it)."""
        ...

    def of_subject(self, subject: str) -> list[Rating]:
        """A subject's ratings, one per pool it was rated in."""
        ...

    def leaderboard(
        self,
        pool: RatingPool,
        min_games: int,
        active_since: datetime,
        after: tuple[float, str] | None,
        limit: int,
    ) -> list[Rating]:
        """Ratings of ``min_games`` games or more, the last since
        ``active_since``, best first (mu down, then subject up), strictly
        after the ``(mu, subject)`` cursor; at most ``limit``."""
        ...

    def ahead_of(
        self, pool: RatingPool, rating: Rating, min_games: int, active_since: datetime
    ) -> int:
        """How many of the leaderboard's ratings come before ``rating``."""
        ...

    def listed(
        self, pool: RatingPool, min_games: int, active_since: datetime
    ) -> list[tuple[float, str]]:
        """The leaderboard's ``(mu, subject)`` keys, lowest first."""
        ...

    def all(self) -> list[Rating]:
        """Every rating (``mmk ratings rebuild``)."""
        ...

    def replace_all(self, ratings: Sequence[Rating]) -> None:
        """Every rating, replaced by ``ratings`` (a rebuild's)."""
        ...


class Standings(Protocol):
    """Each leaderboard as of a recent snapshot (infra/standings.py), for
    ranks in memory: counting the board in the database takes ~10 ms at
    100,000 players (docs/decisions/0065)."""

    def ahead_of(self, pool: RatingPool, subject: str, mu: float) -> int | None:
        """How many of the snapshot's other subjects rank before ``(mu,
        subject)``; None: no snapshot yet."""
        ...


class Thinker(Protocol):
    """Runs bots' decisions off the event loop (infra/bot_pool.py: worker
    processes), so a server full of EXPERT seats keeps serving."""

    async def think(self, job: ThinkJob) -> Command:
        """The move :func:`domain.bots.thinking.think` makes for ``job``."""
        ...


class UnitOfWork(Protocol):
    """One transaction over every repository; rolls back unless committed.
    Only :mod:`domain.services.transaction` writes through it."""

    players: PlayerRepository
    service_keys: ServiceKeyRepository
    games: GameRepository
    events: EventLog
    idempotency: IdempotencyStore
    boosters: BoosterRepository
    notifications: NotificationStore
    webhooks: WebhookStore
    ratings: RatingStore

    def __enter__(self) -> UnitOfWork: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...
    def commit(self) -> None: ...
    def rollback(self) -> None: ...
    def collect_new_events(self) -> list[NewEvents]:
        """The events appended by the committed transaction, by game, with the
        games as saved; each is handed out once."""
        ...


UnitOfWorkFactory = Callable[[], UnitOfWork]


class BlockingRunner(Protocol):
    """Runs blocking work (a transaction) without blocking the event loop."""

    def __call__(self, fn: Callable[[], T], /) -> Awaitable[T]: ...


class Resync:
    """Told to every subscriber when the bus may have lost messages (e.g. it
    reconnected): backfill from the log."""

    def __repr__(self) -> str:
        return "RESYNC"


RESYNC = Resync()
BusMessage = LoggedEvent | LobbyUpdate | PresenceChange | Notification
"""What a channel carries: a game's events (one audience's projections),
lobby updates, a game's presence changes, or a player's notifications."""


class Subscription(Protocol):
    """Messages of one channel, in publish order; raises
    :class:`SubscriptionClosed` when the bus drops it."""

    def __aiter__(self) -> AsyncIterator[BusMessage | Resync]: ...

    async def hand_over(self, take: Callable[[BusMessage | Resync], bool]) -> None:
        """Give ``take`` each message as it is published (queued ones first),
        until it returns False for one, which stays next in the queue, or the
        bus drops the subscription; then return. ``take`` raising
        :class:`SubscriptionClosed` drops the subscription with its reason."""
        ...


class EventBus(Protocol):
    """Per-audience channels: a subscriber only ever receives its channel."""

    async def publish(self, messages: Sequence[tuple[str, BusMessage]]) -> None:
        """Publish ``(channel, message)`` pairs, in order. Never raises: the
        event log is the source of truth and subscribers backfill from it."""
        ...

    def subscribe(self, channel: str) -> AbstractAsyncContextManager[Subscription]:
        """Subscribed when entered (so nothing published later is missed)."""
        ...


class PresenceStore(Protocol):
    """Who is connected to which game (docs/decisions/0047): live entries of
    ``(game, player)`` per server instance, kept alive by the adapter's
    heartbeats (an instance that dies without cleaning up loses its entries
    when they expire), and each player's last announced :class:`Mark`."""

    async def join(self, game_id: str, player_id: str) -> None:
        """A live subscription of the player to the game began here."""
        ...

    async def leave(self, game_id: str, player_id: str) -> None:
        """One such subscription ended."""
        ...

    async def online(self, game_id: str) -> frozenset[str]:
        """The players with a live subscription to the game, on any instance
        (reads raise :class:`PresenceUnavailable` while the store is away)."""
        ...

    async def seen(self, game_id: str) -> tuple[frozenset[str], dict[str, Mark]]:
        """:meth:`online`, and the last announced marks of the game's
        players, read together (one round trip where the store is remote)."""
        ...

    async def swap(self, game_id: str, player_id: str, old: Mark | None, new: Mark) -> bool:
        """Set the player's mark to ``new`` if it is still ``old`` (None: no
        mark); False if another instance changed it first."""
        ...


class SpectatorCounts(Protocol):
    """How many subscriptions watch a game's public stream (its spectators),
    on every instance (issue #28): approximate across instances, exact for
    this one's own; a read never fails for the store being away."""

    async def count(self, game_id: str) -> int: ...


class RevocationListener(Protocol):
    """Told of tokens that stopped working (docs/decisions/0053)."""

    def revoked(self, digest: str) -> None:
        """The token whose :func:`~domain.services.auth.token_hash` is
        ``digest`` was rotated or revoked."""
        ...

    def missed(self) -> None:
        """Notices may have been lost or delayed (the channel was away, or a
        periodic check is due): check every token in use again."""
        ...


class Revocations(Protocol):
    """Notices of rotated and revoked tokens, heard on every server instance
    (docs/decisions/0053). Delivery to other instances is best effort: the
    adapter calls its listeners' ``missed`` whenever a notice may have been
    lost, so that they check again."""

    async def announce(self, digest: str) -> None:
        """The token with this digest stopped working. This instance's
        listeners hear it before the first ``await`` (at once), the others
        through the adapter's channel. Never raises: a notice that cannot be
        sent now is sent later."""
        ...

    def listen(self, listener: RevocationListener) -> Callable[[], None]:
        """``listener`` hears every notice from now on, until the returned
        function is called."""
        ...


class Clock(Protocol):
    def now(self) -> datetime: ...


class Ids(Protocol):
    """Random identifiers, tokens and seeds."""

    def new_id(self) -> str: ...
    def new_token(self) -> str: ...
    def new_seed(self) -> str: ...
    def new_salt(self) -> str: ...
    def new_invite_code(self) -> str:
        """A game's invite code (domain/invitations.py: its alphabet, its length)."""
        ...


BotScheduler = Callable[[str], None]
"""Asks for the bots of a game to be driven soon (never inline)."""
