"""Settings, read once from the environment (documented in docs/configuration.md,
generated from infra/settings_docs.py)."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from domain.bots.expert import DEFAULT_BUDGET
from domain.bots.strategy import Strategy
from domain.errors import BadRequest
from domain.webhooks import KINDS, check_kinds, check_secret, check_url, parse_networks

DEFAULT_DATABASE_URL = "sqlite:///var/mmk.sqlite3"
EVENT_LOOPS = ("asyncio", "uvloop")
ACCESS_LOGS = ("all", "errors", "off")
# Every variable ``Settings.from_env`` reads; tests/test_docker_files.py keeps
# this list and the deployment files (docker/) in step with it, and
# tests/unit/test_configuration_doc.py its documentation (infra/settings_docs.py).
EXPERT_CPU_MS = round((DEFAULT_BUDGET.cpu_seconds or 0.05) * 1000)
"""EXPERT's default CPU cap a decision, in ms (domain/bots/expert.py)."""

ENV_VARS: tuple[str, ...] = (
    "DATABASE_URL",
    "REDIS_URL",
    "MMK_HOST",
    "MMK_PORT",
    "MMK_WORKERS",
    "MMK_BUS_QUEUE_LIMIT",
    "MMK_CHANNEL_PREFIX",
    "MMK_LOG_LEVEL",
    "MMK_ACCESS_LOG",
    "MMK_GRAPHIQL",
    "MMK_INTROSPECTION",
    "MMK_WS_SEND_TIMEOUT",
    "MMK_KEEP_ALIVE_TIMEOUT",
    "MMK_RATE_MUTATIONS_TOKEN",
    "MMK_RATE_MUTATIONS_IP",
    "MMK_RATE_SUBSCRIPTIONS_TOKEN",
    "MMK_RATE_SUBSCRIPTIONS_IP",
    "MMK_RATE_QUERY_COST_TOKEN",
    "MMK_RATE_QUERY_COST_IP",
    "MMK_QUERY_MAX_COST",
    "MMK_RATE_COST_BURST",
    "MMK_RATE_SERVICE_KEY_CALLS",
    "MMK_FORWARDED_ALLOW_IPS",
    "MMK_EVENT_LOOP",
    "MMK_CORS_ORIGINS",
    "MMK_DEV",
    "MMK_PERSISTED_QUERY_TTL",
    "MMK_DEADLINE_SWEEP_INTERVAL",
    "MMK_HEADER_TIMEOUT",
    "MMK_BODY_TIMEOUT",
    "MMK_MAX_HEADER_BYTES",
    "MMK_WS_INIT_TIMEOUT",
    "MMK_MAX_CONNECTIONS",
    "MMK_MAX_CONNECTIONS_PER_IP",
    "MMK_MAX_WS_PER_IP",
    "MMK_WS_MESSAGE_RATE",
    "MMK_CONNECTION_LOG_INTERVAL",
    "MMK_SECRET_KEY",
    "MMK_PLAYER_KEY_WINDOW",
    "MMK_IDEMPOTENCY_RETENTION",
    "MMK_PRESENCE_GRACE",
    "MMK_PRESENCE_HEARTBEAT",
    "MMK_REMATCH_WAIT",
    "MMK_MAX_SUBSCRIPTIONS_PER_TOKEN",
    "MMK_MAX_SUBSCRIPTIONS_PER_IP",
    "MMK_REPLAY_RATE",
    "MMK_REPLAYS_PER_MINUTE",
    "MMK_HOLD_DEAR_STEPS",
    "MMK_TOKEN_RECHECK_INTERVAL",
    "MMK_MAX_OPEN_GAMES",
    "MMK_MAX_QUICK_PLAY_WAITS",
    "MMK_BOOSTER_PACKS_PER_DAY",
    "MMK_MAX_PENDING_INVITATIONS",
    "MMK_NOTIFICATION_RETENTION",
    "MMK_DEADLINE_SOON_PERCENT",
    "MMK_DEADLINE_SOON_LEAD",
    "MMK_RATING_PROVISIONAL_GAMES",
    "MMK_RATING_ACTIVE_DAYS",
    "MMK_RATING_RANK_REFRESH",
    "MMK_BOT_WORKERS",
    "MMK_EXPERT_ITERATIONS",
    "MMK_EXPERT_CPU_MS",
    "MMK_TAKEOVER_BOT",
    "MMK_QUICK_PLAY_BOT",
    "MMK_WEBHOOK_ALLOWED_NETWORKS",
    "MMK_WEBHOOK_TIMEOUT",
    "MMK_WEBHOOK_CONCURRENCY",
    "MMK_WEBHOOK_POLL_INTERVAL",
    "MMK_WEBHOOK_FIRST_RETRY",
    "MMK_WEBHOOK_RETRY_FOR",
    "MMK_WEBHOOK_RETENTION",
    "MMK_WEBHOOK_URL",
    "MMK_WEBHOOK_SECRET",
    "MMK_WEBHOOK_KINDS",
    "MMK_ABANDON_IDLE",
    "MMK_ABANDON_EMPTY",
    "MMK_ABANDON_SWEEP_INTERVAL",
    "MMK_SESSION_USE_INTERVAL",
    "MMK_JWT_ISSUER",
    "MMK_JWT_AUDIENCE",
    "MMK_JWT_ALGORITHMS",
    "MMK_JWT_JWKS_URL",
    "MMK_JWT_KEYS_FILE",
    "MMK_JWT_NAME_CLAIM",
    "MMK_JWT_LEEWAY",
    "MMK_JWKS_MAX_AGE",
    "MMK_JWKS_REFETCH_FLOOR",
    "MMK_JWKS_STALE_FOR",
)
JWT_ALGORITHMS: tuple[str, ...] = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512")
JWT_ALGORITHMS += ("ES256", "ES384", "ES512", "EdDSA")  # public-key algorithms only
DEFAULT_JWT_ALGORITHMS = ("RS256", "ES256", "EdDSA")
MIN_SECRET_KEY = 32  # characters of MMK_SECRET_KEY (e.g. `openssl rand -hex 32`: 64)


class SettingsError(ValueError):
    """An environment variable with a value the server cannot use."""


def _int(env: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError as e:
        raise SettingsError(f"{name} must be an integer, not {raw!r}") from e
    if not low <= value <= high:
        raise SettingsError(f"{name} must be {low} to {high}, not {value}")
    return value


def _strategy(env: Mapping[str, str], name: str, default: str) -> str:
    """A bot strategy's name (``BotStrategy``: RANDOM, GREEDY, EXPERT)."""
    raw = (env.get(name) or default).strip().upper()
    if raw not in Strategy.__members__:
        raise SettingsError(f"{name} must be one of {', '.join(Strategy.__members__)}, not {raw!r}")
    return raw


def default_workers() -> int:
    """EXPERT's worker processes: half the CPUs, at least one."""
    return max(1, (os.cpu_count() or 2) // 2)


def _bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off"):
        return False
    raise SettingsError(f"{name} must be true or false, not {raw!r}")


def _origin(name: str, text: str) -> str:
    """``text`` as browsers send it in ``Origin``: lowercase scheme and host,
    no default port, no trailing slash (CORS compares origins as strings)."""
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        parts, port = None, None
    if (
        parts is None
        or parts.scheme.lower() not in ("http", "https")
        or not parts.hostname
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
        or parts.username is not None
    ):
        raise SettingsError(
            f"{name}: {text!r} is not an origin (scheme://host[:port], e.g. "
            "https://play.example.com, no path), nor *"
        )
    scheme, host = parts.scheme.lower(), parts.hostname
    host = f"[{host}]" if ":" in host else host
    default = 80 if scheme == "http" else 443
    return f"{scheme}://{host}" + (f":{port}" if port not in (None, default) else "")


def _origins(env: Mapping[str, str], name: str) -> tuple[str, ...]:
    """A comma-separated list of origins (or ``*``, any origin), normalised."""
    found = [item.strip() for item in (env.get(name) or "").split(",")]
    return tuple(dict.fromkeys(o if o == "*" else _origin(name, o) for o in found if o))


def _proxies(env: Mapping[str, str], name: str) -> str | None:
    """The trusted proxies: comma-separated addresses or networks, or ``*``
    (any peer); None (unset or empty) trusts none. Refused when an item is
    neither: uvicorn would keep it as a literal that no peer ever matches."""
    items = [item.strip() for item in (env.get(name) or "").split(",") if item.strip()]
    for item in items:
        if item == "*":
            continue
        try:
            if "/" in item:
                ipaddress.ip_network(item)  # strict: no host bits, as uvicorn parses it
            else:
                ipaddress.ip_address(item)
        except ValueError as e:
            raise SettingsError(
                f"{name}: {item!r} is not an IP address or network (e.g. 172.30.0.0/24), nor *"
            ) from e
    return ",".join(items) or None


def _secret(env: Mapping[str, str], name: str) -> str | None:
    """A secret of at least :data:`MIN_SECRET_KEY` characters, or None."""
    raw = env.get(name) or None
    if raw is not None and len(raw) < MIN_SECRET_KEY:
        raise SettingsError(
            f"{name} must be at least {MIN_SECRET_KEY} characters (e.g. `openssl rand -hex 32`)"
        )
    return raw


@dataclass(frozen=True, slots=True)
class JwtSettings:
    """The app's identity provider, whose JWTs stand for players (issue #24)."""

    issuer: str
    audience: str
    jwks_url: str | None = None
    keys_file: str | None = None
    algorithms: tuple[str, ...] = DEFAULT_JWT_ALGORITHMS
    name_claim: str = "name"
    leeway: int = 30
    jwks_max_age: int = 3600
    jwks_refetch_floor: int = 60
    jwks_stale_for: int = 86_400


def _trusted_keys_url(url: str) -> bool:
    """An https URL, or http on a loopback host (a local key server)."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return True
    if parts.scheme != "http" or not parts.hostname:
        return False
    if parts.hostname == "localhost":
        return True
    try:
        return ipaddress.ip_address(parts.hostname).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class WebhookSettings:
    """Webhooks (issue #25, docs/decisions/0064): the private networks a
    target may be in (CIDRs; none by default: no private, loopback or
    link-local target), seconds an attempt may take, attempts at once per
    endpoint on an instance, seconds between two looks at the outbox,
    seconds to the first retry (then 4 times longer each, at most 6 h),
    seconds a message is retried, seconds a done one stays in the log; and
    an endpoint named here rather than by ``createWebhookEndpoint``."""

    allowed_networks: str = ""
    timeout: int = 10
    concurrency: int = 4
    poll_interval: int = 1
    first_retry: int = 5
    retry_for: int = 86_400
    retention: int = 7 * 86_400
    url: str | None = None
    secret: str | None = field(default=None, repr=False)
    kinds: tuple[str, ...] = tuple(KINDS)


def webhook_settings(env: Mapping[str, str]) -> WebhookSettings:
    networks = env.get("MMK_WEBHOOK_ALLOWED_NETWORKS", "")
    try:
        parse_networks(networks)
    except ValueError as e:
        raise SettingsError(f"MMK_WEBHOOK_ALLOWED_NETWORKS: {e}") from e
    url, secret = env.get("MMK_WEBHOOK_URL") or None, env.get("MMK_WEBHOOK_SECRET") or None
    kinds = tuple(k.strip() for k in env.get("MMK_WEBHOOK_KINDS", "").split(",") if k.strip())
    try:
        if (url is None) != (secret is None):
            raise SettingsError("MMK_WEBHOOK_URL and MMK_WEBHOOK_SECRET go together")
        if secret is not None:
            check_secret(secret)
        if url is not None:
            check_url(url, parse_networks(networks))
        check_kinds(kinds or tuple(KINDS))
    except BadRequest as e:
        raise SettingsError(f"MMK_WEBHOOK_*: {e.message}") from e
    return WebhookSettings(
        networks,
        _int(env, "MMK_WEBHOOK_TIMEOUT", 10, 1, 60),
        _int(env, "MMK_WEBHOOK_CONCURRENCY", 4, 1, 100),
        _int(env, "MMK_WEBHOOK_POLL_INTERVAL", 1, 1, 60),
        _int(env, "MMK_WEBHOOK_FIRST_RETRY", 5, 1, 3600),
        _int(env, "MMK_WEBHOOK_RETRY_FOR", 86_400, 60, 7 * 86_400),
        _int(env, "MMK_WEBHOOK_RETENTION", 7 * 86_400, 3600, 90 * 86_400),
        url,
        secret,
        kinds or tuple(KINDS),
    )


def jwt_settings(env: Mapping[str, str]) -> JwtSettings | None:
    """The identity provider's settings; None when no keys are named."""
    url, path = env.get("MMK_JWT_JWKS_URL") or None, env.get("MMK_JWT_KEYS_FILE") or None
    issuer, audience = env.get("MMK_JWT_ISSUER") or None, env.get("MMK_JWT_AUDIENCE") or None
    if url is None and path is None:
        if issuer or audience:
            raise SettingsError("MMK_JWT_ISSUER needs MMK_JWT_JWKS_URL or MMK_JWT_KEYS_FILE")
        return None
    if url is not None and path is not None:
        raise SettingsError("set MMK_JWT_JWKS_URL or MMK_JWT_KEYS_FILE, not both")
    if url is not None and not _trusted_keys_url(url):
        raise SettingsError(
            f"MMK_JWT_JWKS_URL: {url!r} is not an https URL (plain http only on loopback: "
            "whoever can change the keys in transit can sign in as anyone)"
        )
    if path is not None and not os.path.isfile(path):
        raise SettingsError(f"MMK_JWT_KEYS_FILE: {path!r} is not a file")
    if not issuer or not audience:
        raise SettingsError("a JWT's keys need MMK_JWT_ISSUER and MMK_JWT_AUDIENCE too")
    raw = env.get("MMK_JWT_ALGORITHMS") or ",".join(DEFAULT_JWT_ALGORITHMS)
    algorithms = tuple(dict.fromkeys(a.strip() for a in raw.split(",") if a.strip()))
    unknown = [a for a in algorithms if a not in JWT_ALGORITHMS]
    if unknown or not algorithms:
        raise SettingsError(
            f"MMK_JWT_ALGORITHMS: {', '.join(unknown) or 'none'} not among "
            f"{', '.join(JWT_ALGORITHMS)} (public-key algorithms only)"
        )
    return JwtSettings(
        issuer=issuer,
        audience=audience,
        jwks_url=url,
        keys_file=path,
        algorithms=algorithms,
        name_claim=env.get("MMK_JWT_NAME_CLAIM") or "name",
        leeway=_int(env, "MMK_JWT_LEEWAY", 30, 0, 600),
        jwks_max_age=_int(env, "MMK_JWKS_MAX_AGE", 3600, 60, 7 * 86_400),
        jwks_refetch_floor=_int(env, "MMK_JWKS_REFETCH_FLOOR", 60, 1, 86_400),
        jwks_stale_for=_int(env, "MMK_JWKS_STALE_FOR", 86_400, 0, 30 * 86_400),
    )


@dataclass(frozen=True, slots=True)
class Settings:
    """Every setting of the server; ``from_env`` documents the variables."""

    database_url: str = DEFAULT_DATABASE_URL
    redis_url: str | None = None
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 1
    bus_queue_limit: int = 1000
    channel_prefix: str = "mmk:"
    log_level: str = "info"
    # Which requests get an access line: all, errors (status >= 400), off.
    access_log: str = "all"
    graphiql: bool = True
    introspection: bool = True
    ws_send_timeout: int = 30  # seconds a WebSocket client may not read (api/fast/ws_protocol.py)
    # Seconds an idle HTTP keep-alive connection stays open: longer than a
    # load balancer's idle timeout (60 s for most), so that the server never
    # closes a connection the balancer is about to reuse; a player's next
    # move reuses its connection.
    keep_alive_timeout: int = 75
    # Requests per minute (GCRA: a burst of as many, then evenly spaced); 0 = off.
    rate_mutations_token: int = 600
    rate_mutations_ip: int = 3000
    rate_subscriptions_token: int = 120
    rate_subscriptions_ip: int = 600
    # Cost units per minute (0.5 us of the server's work each): the estimate
    # is reserved before an operation runs (every operation 500, an unseen
    # document 2 a character, a query also its estimated cost:
    # docs/decisions/0045), then the work measured is charged instead, streams'
    # events included (docs/decisions/0049). A seat's turn query is ~500; a
    # budget of 1,500,000 is 0.75 s of work a minute (issue #22: four
    # abusers at these budgets leave a neighbour's p99 within ~3x).
    rate_query_cost_token: int = 1_500_000
    rate_query_cost_ip: int = 3_000_000
    # A service key's calls a minute (issue #24): each root field of its
    # operations, in place of a player's mutation budget.
    rate_service_key_calls: int = 1200
    # Seconds of those budgets' rate a caller may spend at once (the burst;
    # docs/decisions/0049): a caller that ran dry waits until it has this
    # much again, however long the minute's budget.
    rate_cost_burst: int = 10
    # The most one request may cost (BAD_INPUT above it).
    query_max_cost: int = 10_000
    # Proxies whose X-Forwarded-For names the client (comma-separated
    # addresses or networks, or *). None: no peer is trusted, every client is
    # its TCP peer (uvicorn's own default trusts loopback: not taken).
    forwarded_allow_ips: str | None = None
    # [decision] asyncio, not uvloop: under load uvloop starved some keep-alive
    # connections for whole rounds of the others (docs/operations.md "Benchmarks").
    event_loop: str = "asyncio"
    # Pages on these origins may call /graphql (CORS) and open its WebSocket;
    # pages of the server's own origin always may. Empty: no other origin.
    cors_origins: tuple[str, ...] = ()
    # Development mode (``make run``; never a container's default): pages on
    # this machine's own origins (http or https, localhost, 127.0.0.1 or
    # [::1], any port: a Vite or other dev server) may call /graphql and open
    # its WebSocket too, on top of ``cors_origins`` (api/cors.py).
    dev: bool = False
    # Seconds an automatic persisted query stays in Redis after its last use.
    persisted_query_ttl: int = 86_400
    # Seconds between two sweeps of due turn deadlines (each instance sweeps;
    # a timeout fires at most this late; docs/decisions/0046).
    deadline_sweep_interval: int = 1
    # Connection hygiene (api/connections.py, docs/decisions/0044):
    # seconds a connection may take to send a request's headers (counted from
    # the connection, or from the request's first byte) / its whole body.
    header_timeout: int = 10
    body_timeout: int = 30
    # Bytes of a request's line and headers (431 beyond; counted as they arrive).
    max_header_bytes: int = 16_384
    # Seconds a WebSocket may stay open without ``connection_init`` (both protocols).
    ws_init_timeout: int = 10
    # Open connections a process keeps; more are refused (503). 0: the
    # descriptor limit (RLIMIT_NOFILE) minus a reserve for the database,
    # Redis and files.
    max_connections: int = 0
    # Open connections / WebSockets per client IP (TCP peer; a trusted proxy's,
    # MMK_FORWARDED_ALLOW_IPS, are not counted per IP); 0 = off.
    max_connections_per_ip: int = 100
    max_ws_per_ip: int = 50
    # Frames a second a WebSocket client may send (pings included), in bursts
    # of as many; a flood closes the connection (1008). 0 = off.
    ws_message_rate: int = 50
    # Seconds between two log lines of one kind about refused, timed-out or
    # failed (out of descriptors) connections; the others are counted.
    connection_log_interval: int = 10
    # Keys createPlayer's replay record (docs/decisions/0041); the same on
    # every instance. Unset: the secret migration 0004 stored in the database.
    secret_key: str | None = field(default=None, repr=False)
    # Seconds a repeated createPlayer returns the same player and token.
    player_key_window: int = 86_400
    # Seconds the other mutations' idempotency records are kept.
    idempotency_retention: int = 7 * 86_400
    # Seat presence (docs/decisions/0047): seconds a seated player may be
    # without a live subscription before `disconnected` is announced, and
    # seconds between two presence heartbeats (an entry in Redis lives three
    # heartbeats without one).
    presence_grace: int = 15
    presence_heartbeat: int = 5
    # Seconds after its end that a game's stream asked to await the rematch
    # stays open for the offer (docs/decisions/0048).
    rematch_wait: int = 120
    # Open subscriptions (every stream, every transport) per token and per
    # client IP in one process; more are refused (RATE_LIMITED). 0 = off.
    max_subscriptions_per_token: int = 20
    max_subscriptions_per_ip: int = 200
    # Events a second a connection's streams may send from the log (a replay
    # after `afterSeq`); more wait their turn. 0 = off.
    replay_rate: int = 500
    # Events a caller's streams may replay from the log in a minute
    # (a whole 8-seat game is ~670); past that its replays end RATE_LIMITED
    # until there is room for 100 again. 0 = off.
    replays_per_minute: int = 3000
    # A query's steps (and a replay's) wait their turn once it took 2 ms of
    # the event loop, and a caller over 5 % of the loop lately waits from its
    # requests' first step (docs/decisions/0055). Off: steps are only timed.
    hold_dear_steps: bool = True
    # Seconds between two checks, on each instance, of the tokens of its open
    # WebSockets and HTTP streams (with REDIS_URL): a revocation notice lost
    # on the way ends them this late at most (docs/decisions/0053).
    token_recheck_interval: int = 10
    # Per-player caps (docs/decisions/0051; 0: no cap): lobby games hosted
    # at once, quick-play games waited in at once, booster packs opened in
    # any 24 hours, invitations out at once (0062).
    max_open_games: int = 5
    max_quick_play_waits: int = 3
    booster_packs_per_day: int = 10
    max_pending_invitations: int = 50
    # Seconds a notification marked read is kept (#25); the unread are kept.
    notification_retention: int = 30 * 86_400
    # A long wait's DeadlineNear (#25): this percent of the wait or this many
    # seconds before its deadline, whichever is later (none under a minute).
    deadline_soon_percent: int = 10
    deadline_soon_lead: int = 3600
    # Ratings (#26, docs/decisions/0065): rated games until a rating is
    # settled (not provisional); days since a rated game to stay listed.
    rating_provisional_games: int = 10
    rating_active_days: int = 30
    # Seconds between two reads of the leaderboards for ranks (each instance).
    rating_rank_refresh: int = 60
    # Bots (#26): worker processes of EXPERT's search (0: inline, on the
    # event loop: tests only), its budget a decision (iterations, a CPU cap
    # in ms), the strategy of a seat taken over, and of a quick-play fill.
    bot_workers: int = 1
    expert_iterations: int = DEFAULT_BUDGET.iterations
    expert_cpu_ms: int = EXPERT_CPU_MS
    takeover_bot: str = "EXPERT"
    quick_play_bot: str = "GREEDY"
    # Webhooks (#25, docs/decisions/0064): see WebhookSettings.
    webhooks: WebhookSettings = field(default_factory=lambda: WebhookSettings())
    # Abandoned games (docs/decisions/0051): seconds a lobby or an untimed
    # running game may go unchanged; seconds a running game whose every
    # person's seat a bot plays waits for one to be reclaimed; seconds
    # between two abandonment sweeps on each instance.
    abandon_idle: int = 7 * 86_400
    abandon_empty: int = 3600
    abandon_sweep_interval: int = 60
    # Seconds between two writes of the sessions' lastUsedAt on each
    # instance (issue #24): it is that fine, and costs no write per request.
    session_use_interval: int = 60
    # The app's identity provider (issue #24): its JWTs stand for players
    # (iss + sub: one player each); None: MMK tokens only.
    jwt: JwtSettings | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        e = os.environ if env is None else env
        level = e.get("MMK_LOG_LEVEL", "info").lower()
        if level not in ("debug", "info", "warning", "error"):
            raise SettingsError(
                f"MMK_LOG_LEVEL must be debug, info, warning or error, not {level!r}"
            )
        access = e.get("MMK_ACCESS_LOG", "all").lower() or "all"
        if access not in ACCESS_LOGS:
            raise SettingsError(f"MMK_ACCESS_LOG must be all, errors or off, not {access!r}")
        loop = e.get("MMK_EVENT_LOOP", "asyncio").lower() or "asyncio"
        if loop not in EVENT_LOOPS:
            raise SettingsError(f"MMK_EVENT_LOOP must be asyncio or uvloop, not {loop!r}")
        prefix = e.get("MMK_CHANNEL_PREFIX", "mmk:")
        if "{" in prefix or "}" in prefix:  # the games' hash tags (docs/decisions/0068)
            raise SettingsError(f"MMK_CHANNEL_PREFIX must not contain {{ or }}, not {prefix!r}")
        return cls(
            database_url=e.get("DATABASE_URL") or DEFAULT_DATABASE_URL,
            redis_url=e.get("REDIS_URL") or None,
            host=e.get("MMK_HOST") or "127.0.0.1",
            port=_int(e, "MMK_PORT", 8000, 1, 65535),
            workers=_int(e, "MMK_WORKERS", 1, 1, 64),
            bus_queue_limit=_int(e, "MMK_BUS_QUEUE_LIMIT", 1000, 10, 1_000_000),
            channel_prefix=prefix,
            log_level=level,
            access_log=access,
            graphiql=_bool(e, "MMK_GRAPHIQL", True),
            introspection=_bool(e, "MMK_INTROSPECTION", True),
            ws_send_timeout=_int(e, "MMK_WS_SEND_TIMEOUT", 30, 1, 3600),
            keep_alive_timeout=_int(e, "MMK_KEEP_ALIVE_TIMEOUT", 75, 1, 3600),
            rate_mutations_token=_int(e, "MMK_RATE_MUTATIONS_TOKEN", 600, 0, 10**9),
            rate_mutations_ip=_int(e, "MMK_RATE_MUTATIONS_IP", 3000, 0, 10**9),
            rate_subscriptions_token=_int(e, "MMK_RATE_SUBSCRIPTIONS_TOKEN", 120, 0, 10**9),
            rate_subscriptions_ip=_int(e, "MMK_RATE_SUBSCRIPTIONS_IP", 600, 0, 10**9),
            rate_query_cost_token=_int(e, "MMK_RATE_QUERY_COST_TOKEN", 1_500_000, 0, 10**12),
            rate_query_cost_ip=_int(e, "MMK_RATE_QUERY_COST_IP", 3_000_000, 0, 10**12),
            rate_cost_burst=_int(e, "MMK_RATE_COST_BURST", 10, 1, 60),
            rate_service_key_calls=_int(e, "MMK_RATE_SERVICE_KEY_CALLS", 1200, 0, 10**9),
            query_max_cost=_int(e, "MMK_QUERY_MAX_COST", 10_000, 1, 10**9),
            forwarded_allow_ips=_proxies(e, "MMK_FORWARDED_ALLOW_IPS"),
            event_loop=loop,
            cors_origins=_origins(e, "MMK_CORS_ORIGINS"),
            dev=_bool(e, "MMK_DEV", False),
            persisted_query_ttl=_int(e, "MMK_PERSISTED_QUERY_TTL", 86_400, 60, 30 * 86_400),
            deadline_sweep_interval=_int(e, "MMK_DEADLINE_SWEEP_INTERVAL", 1, 1, 60),
            header_timeout=_int(e, "MMK_HEADER_TIMEOUT", 10, 1, 3600),
            body_timeout=_int(e, "MMK_BODY_TIMEOUT", 30, 1, 3600),
            max_header_bytes=_int(e, "MMK_MAX_HEADER_BYTES", 16_384, 1024, 1 << 20),
            ws_init_timeout=_int(e, "MMK_WS_INIT_TIMEOUT", 10, 1, 3600),
            max_connections=_int(e, "MMK_MAX_CONNECTIONS", 0, 0, 10**7),
            max_connections_per_ip=_int(e, "MMK_MAX_CONNECTIONS_PER_IP", 100, 0, 10**7),
            max_ws_per_ip=_int(e, "MMK_MAX_WS_PER_IP", 50, 0, 10**7),
            ws_message_rate=_int(e, "MMK_WS_MESSAGE_RATE", 50, 0, 10**6),
            connection_log_interval=_int(e, "MMK_CONNECTION_LOG_INTERVAL", 10, 1, 3600),
            secret_key=_secret(e, "MMK_SECRET_KEY"),
            player_key_window=_int(e, "MMK_PLAYER_KEY_WINDOW", 86_400, 60, 30 * 86_400),
            idempotency_retention=_int(
                e, "MMK_IDEMPOTENCY_RETENTION", 7 * 86_400, 3600, 365 * 86_400
            ),
            presence_grace=_int(e, "MMK_PRESENCE_GRACE", 15, 0, 3600),
            presence_heartbeat=_int(e, "MMK_PRESENCE_HEARTBEAT", 5, 1, 600),
            rematch_wait=_int(e, "MMK_REMATCH_WAIT", 120, 0, 3600),
            max_subscriptions_per_token=_int(e, "MMK_MAX_SUBSCRIPTIONS_PER_TOKEN", 20, 0, 10**6),
            max_subscriptions_per_ip=_int(e, "MMK_MAX_SUBSCRIPTIONS_PER_IP", 200, 0, 10**6),
            replay_rate=_int(e, "MMK_REPLAY_RATE", 500, 0, 10**6),
            replays_per_minute=_int(e, "MMK_REPLAYS_PER_MINUTE", 3000, 0, 10**9),
            hold_dear_steps=_bool(e, "MMK_HOLD_DEAR_STEPS", True),
            token_recheck_interval=_int(e, "MMK_TOKEN_RECHECK_INTERVAL", 10, 1, 3600),
            max_open_games=_int(e, "MMK_MAX_OPEN_GAMES", 5, 0, 10**6),
            max_quick_play_waits=_int(e, "MMK_MAX_QUICK_PLAY_WAITS", 3, 0, 10**6),
            booster_packs_per_day=_int(e, "MMK_BOOSTER_PACKS_PER_DAY", 10, 0, 10**6),
            max_pending_invitations=_int(e, "MMK_MAX_PENDING_INVITATIONS", 50, 0, 10**6),
            notification_retention=_int(
                e, "MMK_NOTIFICATION_RETENTION", 30 * 86_400, 3600, 365 * 86_400
            ),
            deadline_soon_percent=_int(e, "MMK_DEADLINE_SOON_PERCENT", 10, 0, 100),
            deadline_soon_lead=_int(e, "MMK_DEADLINE_SOON_LEAD", 3600, 0, 14 * 86_400),
            rating_provisional_games=_int(e, "MMK_RATING_PROVISIONAL_GAMES", 10, 0, 1000),
            rating_active_days=_int(e, "MMK_RATING_ACTIVE_DAYS", 30, 1, 3650),
            rating_rank_refresh=_int(e, "MMK_RATING_RANK_REFRESH", 60, 1, 86_400),
            bot_workers=_int(e, "MMK_BOT_WORKERS", default_workers(), 0, 256),
            expert_iterations=_int(
                e, "MMK_EXPERT_ITERATIONS", DEFAULT_BUDGET.iterations, 1, 100_000
            ),
            expert_cpu_ms=_int(e, "MMK_EXPERT_CPU_MS", EXPERT_CPU_MS, 1, 60_000),
            takeover_bot=_strategy(e, "MMK_TAKEOVER_BOT", "EXPERT"),
            quick_play_bot=_strategy(e, "MMK_QUICK_PLAY_BOT", "GREEDY"),
            webhooks=webhook_settings(e),
            abandon_idle=_int(e, "MMK_ABANDON_IDLE", 7 * 86_400, 1, 365 * 86_400),
            abandon_empty=_int(e, "MMK_ABANDON_EMPTY", 3600, 0, 30 * 86_400),
            abandon_sweep_interval=_int(e, "MMK_ABANDON_SWEEP_INTERVAL", 60, 1, 3600),
            session_use_interval=_int(e, "MMK_SESSION_USE_INTERVAL", 60, 1, 3600),
            jwt=jwt_settings(e),
        )
