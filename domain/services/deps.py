"""The ports a use case needs, wired once by the composition root."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from domain.abandonment import AbandonPolicy
from domain.bots.expert import DEFAULT_BUDGET, Budget
from domain.bots.strategy import Strategy
from domain.caps import Caps
from domain.clocks import WarnPolicy
from domain.ports import (
    BlockingRunner,
    BotScheduler,
    Clock,
    CommittedReads,
    EventBus,
    IdentityVerifier,
    Ids,
    PresenceStore,
    RatingModel,
    Revocations,
    SpectatorCounts,
    Standings,
    Thinker,
    UnitOfWorkFactory,
)
from domain.quick_play import RatingWindow
from domain.ratings import RatingPolicy
from domain.session_use import SessionUse
from domain.webhooks import Policy as WebhookPolicy


def _nothing() -> None:
    return None


@dataclass(frozen=True, slots=True)
class KeyPolicy:
    """Idempotency records (docs/decisions/0041): ``secret`` keys the
    look-up and the seal of ``createPlayer``'s record (empty: ``createPlayer``
    takes no key); its replay lasts ``replay_window``, other mutations'
    records ``retention``, then a sweep deletes them."""

    secret: bytes = field(default=b"", repr=False)
    replay_window: timedelta = timedelta(hours=24)
    retention: timedelta = timedelta(days=7)


@dataclass(frozen=True, slots=True)
class Deps:
    uow: UnitOfWorkFactory
    run: BlockingRunner
    bus: EventBus
    clock: Clock
    ids: Ids
    schedule_bots: BotScheduler
    keys: KeyPolicy = KeyPolicy()
    # Lone reads (a game, a token's session) outside a unit of work, where
    # the adapter has a path without a worker thread (docs/decisions/0073);
    # None: each is a unit of work run by ``run``.
    committed: CommittedReads | None = None
    # Seat presence (docs/decisions/0047); None: not tracked (all seats read
    # as not connected).
    presence: PresenceStore | None = None
    presence_grace: timedelta = timedelta(seconds=15)
    # Spectators per game, on every instance (issue #28); None: not counted (0).
    spectators: SpectatorCounts | None = None
    # How long after its end a game's stream, when asked to, stays open for
    # the rematch offer (docs/decisions/0048).
    rematch_wait: timedelta = timedelta(seconds=120)
    # Notices of rotated and revoked tokens to every instance
    # (docs/decisions/0053); None: none sent.
    revocations: Revocations | None = None
    # What a player may have open at once or open a day, and when a game
    # nobody plays any more ends (docs/decisions/0051).
    caps: Caps = field(default_factory=Caps)
    abandon: AbandonPolicy = field(default_factory=AbandonPolicy)
    # The app's identity provider, whose JWTs stand for a player (issue
    # #24); None: MMK tokens only.
    identity: IdentityVerifier | None = None
    # Sessions that signed in lately, written in batches (issue #24).
    session_use: SessionUse = field(default_factory=SessionUse)
    # How long a notification marked read is kept (issue #25).
    notice_retention: timedelta = timedelta(days=30)
    # When a long wait's DeadlineNear comes (issue #25).
    warn: WarnPolicy = field(default_factory=WarnPolicy)
    # Webhooks: allowed private networks, retries, log retention (issue #25).
    webhooks: WebhookPolicy = field(default_factory=WebhookPolicy)
    # Told after a commit that made notifications: the webhook deliverer
    # of this instance starts at once (0064).
    wake_webhooks: Callable[[], None] = _nothing
    # Rated games (issue #26): the model (OpenSkill's, infra/ratings.py;
    # None: no game is rated) and when a rating is settled and listed.
    rating_model: RatingModel | None = None
    ratings: RatingPolicy = field(default_factory=RatingPolicy)
    # Leaderboards as of a recent snapshot, for ranks (None: counted in the
    # database at each ask).
    standings: Standings | None = None
    # Bots (issue #26): where EXPERT thinks (None: inline, in tests), its
    # budget a decision, and the strategy that plays a seat taken over.
    thinker: Thinker | None = None
    expert_budget: Budget = DEFAULT_BUDGET
    takeover_bot: Strategy = Strategy.EXPERT
    quick_play_bot: Strategy = Strategy.GREEDY  # an unrated quick-play game's fill
    # Rated quick play: how far apart in rating a waiting game takes a newcomer.
    rating_window: RatingWindow = field(default_factory=RatingWindow)
