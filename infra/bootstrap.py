"""The composition root: settings in, wired use-case dependencies out."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TypeVar

from sqlalchemy import Engine

from domain.abandonment import AbandonPolicy
from domain.bots.expert import Budget
from domain.bots.strategy import Strategy
from domain.caps import Caps
from domain.clocks import WarnPolicy
from domain.ports import BlockingRunner
from domain.ratings import RatingPolicy
from domain.services.abandonment import abandon_round
from domain.services.bots import drive_bots, resume_stalled_bots
from domain.services.deps import Deps, KeyPolicy
from domain.services.idempotency import expire_idempotency_records
from domain.services.leaderboards import listed_keys
from domain.services.notifications import expire_read
from domain.services.quick_play import fill_due_games
from domain.services.seat_presence import review
from domain.services.sessions import record_use
from domain.services.timeouts import deadline_round
from domain.services.webhooks import ensure_settings_endpoint, expire_done
from domain.webhooks import SETTINGS_ENDPOINT, RetryPolicy, parse_networks
from domain.webhooks import Policy as WebhookPolicy
from infra.abandon_sweeper import AbandonSweeper
from infra.bot_pool import ProcessThinker
from infra.bot_scheduler import BotScheduler, StalledBotSweeper
from infra.bus.memory import InProcessBus
from infra.bus.redis import RedisBus
from infra.clock import SystemClock
from infra.db.async_reads import AsyncReads
from infra.db.checkpoint import Checkpointer
from infra.db.committed_reads import AsyncCommittedReads
from infra.db.engine import in_memory, make_engine
from infra.db.game_cache import GameCache
from infra.db.migrate import upgrade
from infra.db.uow import SqlUnitOfWorkFactory
from infra.deadline_sweeper import DeadlineSweeper
from infra.identity.keys import FileKeys, JwksKeys, KeySource
from infra.identity.verifier import JwtVerifier
from infra.ids import RandomIds
from infra.persisted_queries import PersistedQueries
from infra.presence.keeper import PresenceKeeper
from infra.presence.memory import InProcessPresence
from infra.presence.redis import RedisPresence
from infra.rate_limit import Limits, RateLimiter, build_limiter
from infra.rating_model import OpenSkillModel
from infra.record_sweeper import RecordSweeper
from infra.revocations.memory import InProcessRevocations
from infra.revocations.redis import RedisRevocations
from infra.secret_key import server_secret
from infra.session_use import SessionUseWriter
from infra.settings import Settings, SettingsError, WebhookSettings
from infra.settlement import Settler
from infra.spectators.local import LocalSpectators, bus_channels
from infra.spectators.memory import InProcessSpectators
from infra.spectators.redis import RedisSpectators
from infra.standings import RankSnapshot
from infra.webhooks.deliverer import Signal, Tuning, WebhookDeliverer
from infra.webhooks.sender import HttpSender
from infra.work_meter import in_thread

T = TypeVar("T")


async def run_in_thread(fn: Callable[[], T]) -> T:
    """One hop to a worker thread per transaction (domain.ports.BlockingRunner)."""
    return await asyncio.to_thread(in_thread(fn))


async def run_inline(fn: Callable[[], T]) -> T:
    """The transaction on the event loop's own thread, for the embedded
    SQLite default in one process: writers serialise on the file anyway and a
    transaction never waits on a network, so thread hops and SQLite's
    busy-wait retries cost more than they give (docs/decisions/0012)."""
    return fn()


def runner_for(engine: Engine, workers: int) -> BlockingRunner:
    """Inline for single-process SQLite; a worker thread otherwise (PostgreSQL
    waits on the network, and SQLite across processes waits on locks)."""
    if engine.dialect.name == "sqlite" and workers == 1:
        return run_inline
    return run_in_thread


@dataclass
class Container:
    """Everything a running server holds; ``aclose`` releases it."""

    settings: Settings
    deps: Deps
    engine: Engine
    bus: InProcessBus | RedisBus
    bots: BotScheduler
    sweeper: StalledBotSweeper
    checkpointer: Checkpointer | None = None
    limiter: RateLimiter | None = None
    persisted: PersistedQueries = field(default_factory=PersistedQueries)
    records: RecordSweeper | None = None  # idempotency records' expiry
    presence: InProcessPresence | RedisPresence | None = None
    keeper: PresenceKeeper | None = None  # presence heartbeats
    deadlines: DeadlineSweeper | None = None  # turn clocks' timeouts
    # notices of rotated and revoked tokens (docs/decisions/0053)
    revocations: InProcessRevocations | RedisRevocations = field(
        default_factory=InProcessRevocations
    )
    settler: Settler | None = None  # measured costs, charged after the fact
    abandoned: AbandonSweeper | None = None  # games nobody plays any more
    uses: SessionUseWriter | None = None  # the sessions' lastUsedAt (issue #24)
    webhooks: WebhookDeliverer | None = None  # the outbox's deliverer (issue #25)
    sender: HttpSender | None = None
    standings: RankSnapshot | None = None  # the leaderboards for ranks (issue #26)
    thinker: ProcessThinker | None = None  # EXPERT's worker processes (issue #26)
    spectators: InProcessSpectators | RedisSpectators | None = None  # counts (issue #28)
    reads: AsyncReads | None = None  # PostgreSQL's reads without a thread (issue #28)

    def start(self) -> None:
        """Background work of a running server (call inside its event loop)."""
        self.sweeper.start()
        self.revocations.start()
        if self.keeper is not None:
            self.keeper.start()
        if self.deadlines is not None:
            self.deadlines.start()
        if self.records is not None:
            self.records.start()
        if self.abandoned is not None:
            self.abandoned.start()
        if self.uses is not None:
            self.uses.start()
        if self.webhooks is not None:
            self.webhooks.start()
        if self.standings is not None:
            self.standings.start()
        if self.spectators is not None:
            self.spectators.start()

    async def aclose(self) -> None:
        await self.sweeper.aclose()
        if self.keeper is not None:
            await self.keeper.aclose()
        if self.presence is not None:
            await self.presence.aclose()
        if self.deadlines is not None:
            await self.deadlines.aclose()
        if self.records is not None:
            await self.records.aclose()
        await self.revocations.aclose()
        if self.abandoned is not None:
            await self.abandoned.aclose()
        if self.uses is not None:
            await self.uses.aclose()
        if self.webhooks is not None:
            await self.webhooks.aclose()
        if self.sender is not None:
            await self.sender.aclose()
        if self.standings is not None:
            await self.standings.aclose()
        if self.thinker is not None:
            await self.thinker.aclose()
        if self.spectators is not None:
            await self.spectators.aclose()
        await self.bots.aclose()
        if self.settler is not None:
            await self.settler.aclose()
        if self.limiter is not None:
            await self.limiter.aclose()
        await self.persisted.aclose()
        if self.checkpointer is not None:
            await asyncio.to_thread(self.checkpointer.stop)
        await self.bus.aclose()
        if self.reads is not None:
            await self.reads.aclose()
        self.engine.dispose()


def build(settings: Settings, *, migrate: bool = True) -> Container:
    """Wire the adapters the settings name; apply migrations first."""
    engine = make_engine(settings.database_url)
    if migrate:
        upgrade(engine)
    bus: InProcessBus | RedisBus
    if settings.redis_url:
        bus = RedisBus(settings.redis_url, settings.channel_prefix, settings.bus_queue_limit)
    else:
        bus = InProcessBus(settings.bus_queue_limit)
    presence: InProcessPresence | RedisPresence
    if settings.redis_url:
        ttl = 3 * settings.presence_heartbeat
        presence = RedisPresence(settings.redis_url, settings.channel_prefix, ttl)
    else:
        presence = InProcessPresence()
    local_spectators = LocalSpectators(bus, bus_channels(bus))
    spectators: InProcessSpectators | RedisSpectators
    if settings.redis_url:
        spectators = RedisSpectators(
            settings.redis_url,
            local_spectators,
            settings.channel_prefix,
            settings.presence_heartbeat,
        )
    else:
        spectators = InProcessSpectators(local_spectators)
    revocations: InProcessRevocations | RedisRevocations
    if settings.redis_url:
        revocations = RedisRevocations(
            settings.redis_url, settings.channel_prefix, settings.token_recheck_interval
        )
    else:
        revocations = InProcessRevocations()
    bots = BotScheduler()
    signal = Signal()
    standings = RankSnapshot(lambda: listed_keys(deps), settings.rating_rank_refresh)
    thinker = ProcessThinker(settings.bot_workers) if settings.bot_workers else None
    cache = GameCache()
    # PostgreSQL: a game's lone read in the event loop, no thread (0073)
    reads = AsyncReads(engine) if engine.dialect.name == "postgresql" else None
    deps = Deps(
        uow=SqlUnitOfWorkFactory(engine, cache),
        committed=None if reads is None else AsyncCommittedReads(reads, cache),
        run=runner_for(engine, settings.workers),
        bus=bus,
        clock=SystemClock(),
        ids=RandomIds(),
        schedule_bots=bots,
        keys=key_policy(settings, engine),
        presence=presence,
        presence_grace=timedelta(seconds=settings.presence_grace),
        spectators=spectators,
        rematch_wait=timedelta(seconds=settings.rematch_wait),
        revocations=revocations,
        caps=caps_of(settings),
        identity=identity_of(settings),
        abandon=AbandonPolicy(
            timedelta(seconds=settings.abandon_idle), timedelta(seconds=settings.abandon_empty)
        ),
        notice_retention=timedelta(seconds=settings.notification_retention),
        warn=WarnPolicy(
            settings.deadline_soon_percent / 100, timedelta(seconds=settings.deadline_soon_lead)
        ),
        webhooks=webhook_policy(settings.webhooks),
        wake_webhooks=signal,
        rating_model=OpenSkillModel(),
        ratings=RatingPolicy(
            settings.rating_provisional_games, timedelta(days=settings.rating_active_days)
        ),
        standings=standings,
        thinker=thinker,
        expert_budget=Budget(settings.expert_iterations, settings.expert_cpu_ms / 1000),
        takeover_bot=Strategy[settings.takeover_bot],
        quick_play_bot=Strategy[settings.quick_play_bot],
    )
    bots.bind(lambda game_id: drive_bots(deps, game_id))
    sweeper = StalledBotSweeper(lambda idle: due_work(deps, idle))
    checkpointer = None
    if engine.dialect.name == "sqlite" and not in_memory(engine.url):
        checkpointer = Checkpointer(str(engine.url.database))
        checkpointer.start()
    limiter = build_limiter(limits_of(settings), settings.redis_url, settings.channel_prefix)
    persisted = PersistedQueries(
        settings.redis_url, settings.channel_prefix, settings.persisted_query_ttl
    )
    records = RecordSweeper(lambda: expire_old_records(deps))
    keeper = PresenceKeeper(
        presence,
        lambda game_id: review(deps, game_id),
        settings.presence_heartbeat,
        settings.presence_grace,
    )
    deadlines = DeadlineSweeper(
        lambda: deadline_round(deps), deps.clock, settings.deadline_sweep_interval
    )
    abandoned = AbandonSweeper(lambda: abandon_round(deps), settings.abandon_sweep_interval)
    hooks = settings.webhooks
    sender = HttpSender(deps.webhooks.allowed)
    tuning = Tuning(hooks.concurrency, hooks.timeout, hooks.poll_interval)
    deliverer = WebhookDeliverer(deps, sender, signal, tuning, setup=settings_endpoint(deps, hooks))
    return Container(
        settings,
        deps,
        engine,
        bus,
        bots,
        sweeper,
        checkpointer,
        limiter,
        persisted,
        records,
        presence,
        keeper,
        deadlines,
        revocations,
        Settler(limiter, hold=settings.hold_dear_steps)
        if limiter is not None and limiter.limits.queries_limited
        else None,
        abandoned,
        SessionUseWriter(lambda: record_use(deps), settings.session_use_interval),
        deliverer,
        sender,
        standings,
        thinker,
        spectators=spectators,
        reads=reads,
    )


def webhook_policy(hooks: WebhookSettings) -> WebhookPolicy:
    return WebhookPolicy(
        parse_networks(hooks.allowed_networks),
        RetryPolicy(
            first=timedelta(seconds=hooks.first_retry),
            give_up_after=timedelta(seconds=hooks.retry_for),
        ),
        timedelta(seconds=hooks.retention),
    )


def settings_endpoint(deps: Deps, hooks: WebhookSettings) -> Callable[[], Awaitable[None]] | None:
    """The endpoint ``MMK_WEBHOOK_URL`` names, made or updated at start."""
    url, secret = hooks.url, hooks.secret
    if url is None or secret is None:
        return None

    async def ensure() -> None:
        await ensure_settings_endpoint(deps, SETTINGS_ENDPOINT, url, list(hooks.kinds), secret)

    return ensure


async def expire_old_records(deps: Deps) -> int:
    """What every instance's record sweep deletes: idempotency records past
    their retention, notifications read longer ago than theirs and webhook
    messages done longer ago than theirs (#25)."""
    done = await expire_idempotency_records(deps) + await expire_read(deps)
    return done + await expire_done(deps)


async def due_work(deps: Deps, idle: float) -> int:
    """What every instance's sweep does: resume stalled bots, and fill the
    quick-play games whose bot fill is due (docs/decisions/0048)."""
    return await resume_stalled_bots(deps, idle) + await fill_due_games(deps)


def key_policy(settings: Settings, engine: Engine) -> KeyPolicy:
    """The idempotency records' secret and lifetimes the settings name."""
    return KeyPolicy(
        server_secret(settings, engine),
        timedelta(seconds=settings.player_key_window),
        timedelta(seconds=settings.idempotency_retention),
    )


def identity_of(settings: Settings) -> JwtVerifier | None:
    """The app's identity provider (issue #24), from its settings."""
    jwt = settings.jwt
    if jwt is None:
        return None
    keys: KeySource
    if jwt.keys_file is not None:
        try:
            keys = FileKeys(Path(jwt.keys_file))
        except (OSError, ValueError) as e:
            raise SettingsError(f"MMK_JWT_KEYS_FILE: {e}") from None
    else:
        assert jwt.jwks_url is not None
        keys = JwksKeys(
            jwt.jwks_url,
            max_age=jwt.jwks_max_age,
            refetch_floor=jwt.jwks_refetch_floor,
            stale_for=jwt.jwks_stale_for,
        )
    return JwtVerifier(
        jwt.issuer,
        jwt.audience,
        keys,
        algorithms=jwt.algorithms,
        leeway=jwt.leeway,
        name_claim=jwt.name_claim,
    )


def caps_of(settings: Settings) -> Caps:
    """The per-player caps the settings name (0 is no cap)."""
    return Caps(
        open_games=settings.max_open_games,
        quick_play_waits=settings.max_quick_play_waits,
        packs_per_day=settings.booster_packs_per_day,
        pending_invitations=settings.max_pending_invitations,
    )


def limits_of(settings: Settings) -> Limits:
    """The rate limits the settings name (per minute; 0 is off)."""
    return Limits(
        mutations_per_token=settings.rate_mutations_token,
        mutations_per_ip=settings.rate_mutations_ip,
        subscriptions_per_token=settings.rate_subscriptions_token,
        subscriptions_per_ip=settings.rate_subscriptions_ip,
        query_cost_per_token=settings.rate_query_cost_token,
        query_cost_per_ip=settings.rate_query_cost_ip,
        service_calls_per_key=settings.rate_service_key_calls,
        cost_burst=settings.rate_cost_burst,
    )
