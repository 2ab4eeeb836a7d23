"""The server's settings as operators read them: each environment variable
that ``infra/settings.py`` reads (``ENV_VARS``), its default and what it
does. The one source of docs/configuration.md, which ``make docs`` writes
(``python -m infra.settings_docs docs/configuration.md``);
tests/unit/test_configuration_doc.py fails when the file drifts or a
variable is missing here."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Setting:
    """One row: variables that go together (``MMK_HOST`` / ``MMK_PORT``),
    their defaults in the same order, and what they do (Markdown; links are
    relative to docs/)."""

    names: tuple[str, ...]
    default: str
    meaning: str


@dataclass(frozen=True)
class Section:
    """A table of related settings, with a line to introduce it."""

    title: str
    intro: str
    settings: tuple[Setting, ...]


SECTIONS: tuple[Section, ...] = (
    Section(
        "Storage, processes and logs",
        "Where the server keeps its games, how it runs and what it logs.",
        (
            Setting(
                ("DATABASE_URL",),
                "`sqlite:///var/mmk.sqlite3`",
                "SQLite file (WAL mode) or `postgresql+psycopg://user@host:5432/db`",
            ),
            Setting(
                ("REDIS_URL",),
                "unset: in-process bus",
                "Redis for pub/sub across server processes: `redis://host:6379/0`, or a "
                "Redis Cluster (sharded pub/sub) by any one node: `redis+cluster://host:7000`",
            ),
            Setting(("MMK_HOST", "MMK_PORT"), "`127.0.0.1` / `8000`", "where `mmk serve` listens"),
            Setting(("MMK_WORKERS",), "`1`", "uvicorn worker processes"),
            Setting(
                ("MMK_EVENT_LOOP",),
                "`asyncio`",
                (
                    "`asyncio` or `uvloop`: uvloop served some keep-alive connections a whole "
                    "round late under load (benchmarks.md, [decision "
                    "0021](decisions/0021-asyncio-as-the-default-event-loop.md))"
                ),
            ),
            Setting(
                ("MMK_KEEP_ALIVE_TIMEOUT",),
                "`75`",
                (
                    "seconds an idle HTTP keep-alive connection stays open (uvicorn's own default "
                    "is 5); keep it above your load balancer's idle timeout (60 s for most), so "
                    "the server never closes a connection the balancer is about to reuse"
                ),
            ),
            Setting(
                ("MMK_BUS_QUEUE_LIMIT",),
                "`1000`",
                (
                    "messages a subscriber may fall behind before it is dropped; over a WebSocket, "
                    "also the frames a connection may have waiting for its socket (the "
                    "subscription that would overflow it is dropped with `RATE_LIMITED`)"
                ),
            ),
            Setting(
                ("MMK_CHANNEL_PREFIX",),
                "`mmk:`",
                "prefix of the bus channels and Redis keys; no `{` or `}` (hash tags)",
            ),
            Setting(("MMK_LOG_LEVEL",), "`info`", "`debug`, `info`, `warning` or `error`"),
            Setting(
                ("MMK_ACCESS_LOG",),
                "`all`",
                (
                    "Which requests get an `mmk.access` line: `all`, `errors` (status 400 and up, "
                    "refused WebSockets) or `off`; the latency histogram counts every request "
                    "regardless. At capacity one line a request costs ~4% of the CPU"
                ),
            ),
            Setting(
                ("MMK_GRAPHIQL", "MMK_INTROSPECTION"),
                "`true` / `true`",
                (
                    "turn the playground / introspection off in production (without introspection, "
                    'errors suggest no names either: no "Did you mean ...?")'
                ),
            ),
            Setting(
                ("MMK_DEV",),
                "`false`",
                (
                    "development mode: pages served from this machine (`localhost`, `127.0.0.1` or "
                    "`[::1]`, any port, http or https: a Vite or other dev server) may call "
                    "`/graphql` from a browser and open its WebSocket, on top of "
                    "`MMK_CORS_ORIGINS`; `make run` sets it; never set it in production (the "
                    "container image does not)"
                ),
            ),
            Setting(
                ("MMK_SECRET_KEY",),
                (
                    "unset: a secret generated into the database (table `server_secrets`, "
                    "migration 0004)"
                ),
                (
                    "at least 32 characters (e.g. `openssl rand -hex 32`); keys `createPlayer`'s "
                    "replay records, so a guessed idempotency key cannot be tested offline. Set it "
                    "in production, **the same on every instance**, to keep it out of the database "
                    "(a database dump would otherwise carry it); changing it ends the replay of "
                    "pending `createPlayer` records ([decision "
                    "0041](decisions/0041-tokens-that-cannot-be-derived.md))"
                ),
            ),
        ),
    ),
    Section(
        "Request limits and costs",
        'What one caller may ask of the server (operations.md, "Rate limits").',
        (
            Setting(
                ("MMK_RATE_MUTATIONS_TOKEN", "MMK_RATE_MUTATIONS_IP"),
                "`600` / `3000`",
                "mutations a minute per bearer token / per client IP; `0` turns a limit off",
            ),
            Setting(
                ("MMK_RATE_SUBSCRIPTIONS_TOKEN", "MMK_RATE_SUBSCRIPTIONS_IP"),
                "`120` / `600`",
                "subscription starts a minute per bearer token / per client IP; `0` is off",
            ),
            Setting(
                ("MMK_RATE_QUERY_COST_TOKEN", "MMK_RATE_QUERY_COST_IP"),
                "`1500000` / `3000000`",
                (
                    "work a minute per bearer token / per client IP, in units of 0.5 µs of the "
                    "server's CPU: what each operation and stream event actually cost, measured (a "
                    "seat's turn query ~500, `{ __typename }` ~400); an operation's estimate must "
                    "fit before it runs; `0` is off, and nothing is measured when both are "
                    "([decisions 0045](decisions/0045-query-cost-budget.md), "
                    "[0049](decisions/0049-charged-what-it-actually-cost.md))"
                ),
            ),
            Setting(
                ("MMK_RATE_SERVICE_KEY_CALLS",),
                "`1200`",
                (
                    "calls a service key may make a minute (each root field of its operations, "
                    "queries too), in place of a player's mutation budget; one more is "
                    "`RATE_LIMITED` with `retryAfter`; `0` is no cap "
                    "([sign-in.md](sign-in.md))"
                ),
            ),
            Setting(
                ("MMK_RATE_COST_BURST",),
                "`10`",
                (
                    "seconds of those budgets' rate a caller may spend at once (1 to 60): with the "
                    "defaults a token may take 0.125 s of CPU in a burst, then 12.5 ms a second"
                ),
            ),
            Setting(
                ("MMK_QUERY_MAX_COST",),
                "`10000`",
                (
                    "the most one operation's estimate may be (values it would complete); more is "
                    "`BAD_INPUT`"
                ),
            ),
            Setting(
                ("MMK_MAX_SUBSCRIPTIONS_PER_TOKEN", "MMK_MAX_SUBSCRIPTIONS_PER_IP"),
                "`20` / `200`",
                (
                    "open subscriptions (`gameEvents`, `seatPresence`, `lobby`; WebSocket and HTTP "
                    "streams alike) per bearer token / per client IP in each process; one more is "
                    "`RATE_LIMITED`; `0` is off"
                ),
            ),
            Setting(
                ("MMK_REPLAY_RATE",),
                "`500`",
                (
                    "events a second a connection's streams send from the log (a replay after "
                    "`afterSeq`); more wait their turn; `0` is off"
                ),
            ),
            Setting(
                ("MMK_HOLD_DEAR_STEPS",),
                "`true`",
                (
                    "a query's steps, and a replay's, wait their turn once it took 2 ms of the "
                    "event loop, let go 2 ms of CPU a round; a caller whose queries took over 5 % "
                    "of the loop lately has its next ones wait from their start for 1 s; mutations "
                    "and live events never wait (decision 0055); `false`: steps are only timed"
                ),
            ),
            Setting(
                ("MMK_REPLAYS_PER_MINUTE",),
                "`3000`",
                (
                    "events a caller (its IP and token, over all its connections in the process) "
                    "may replay from the log in a minute (a bucket refilled over the minute); past "
                    "it a replay ends `RATE_LIMITED`, `retryAfter` until 100 fit again, and a new "
                    "`gameEvents` is refused after up to a second's wait; live events never count; "
                    "`0` is off"
                ),
            ),
            Setting(
                ("MMK_PERSISTED_QUERY_TTL",),
                "`86400`",
                (
                    "seconds an automatic persisted query stays in Redis after its last use (60 to "
                    "30 days)"
                ),
            ),
        ),
    ),
    Section(
        "Connections, browsers and proxies",
        (
            'What one connection may hold, and who may connect (operations.md, "Browsers" and '
            '"Proxies").'
        ),
        (
            Setting(
                ("MMK_FORWARDED_ALLOW_IPS",),
                "unset: no proxy (uvicorn's own default, loopback, is not taken)",
                (
                    "proxies whose `X-Forwarded-For` gives the client IP: comma-separated "
                    "addresses or networks (`172.31.240.0/24`), or `*` (any peer: only when "
                    "nothing else can reach the server); their own connections are not capped per "
                    "IP. Anything else stops the server. Unset, every client is its TCP peer and "
                    "the header is ignored"
                ),
            ),
            Setting(
                ("MMK_CORS_ORIGINS",),
                "unset: none",
                (
                    "web pages on these origins (comma-separated `scheme://host[:port]`, or `*` "
                    "for any) may call `/graphql` from a browser (CORS) and open its WebSocket "
                    "(`Origin` check); the server's own origin always may "
                    "([operations.md](operations.md#browsers))"
                ),
            ),
            Setting(
                ("MMK_WS_SEND_TIMEOUT",),
                "`30`",
                (
                    "seconds a client may leave sent bytes unread (TCP buffers full) before it is "
                    "dropped: a WebSocket, a streamed subscription (SSE, multipart) or any "
                    "response; its subscriptions end"
                ),
            ),
            Setting(
                ("MMK_HEADER_TIMEOUT", "MMK_BODY_TIMEOUT"),
                "`10` / `30`",
                (
                    "seconds a connection may take to send a request's complete headers (from "
                    "connecting, or from a kept-alive connection's next request) / its whole body; "
                    "then it is closed ([decision 0044](decisions/0044-connection-hygiene.md))"
                ),
            ),
            Setting(
                ("MMK_MAX_HEADER_BYTES",),
                "`16384`",
                (
                    "bytes of a request's line and headers (1024 to 1 MiB), counted as they "
                    "arrive, a kept-alive connection's next request and WebSocket upgrades "
                    "included; beyond, `431` (`BAD_INPUT`) and the connection is closed ([decision "
                    "0052](decisions/0052-connections-proxies-and-shares.md))"
                ),
            ),
            Setting(
                ("MMK_WS_INIT_TIMEOUT",),
                "`10`",
                (
                    "seconds a WebSocket may stay open without `connection_init`, on both "
                    "protocols; then it is closed with 4408"
                ),
            ),
            Setting(
                ("MMK_MAX_CONNECTIONS",),
                "`0`: the descriptor limit (`ulimit -n`) minus 128",
                (
                    "open connections a server process keeps; a new one beyond them gets `503` "
                    "(`RATE_LIMITED`, `Retry-After: 1`) and is closed"
                ),
            ),
            Setting(
                ("MMK_MAX_CONNECTIONS_PER_IP", "MMK_MAX_WS_PER_IP"),
                "`100` / `50`",
                (
                    "open connections / WebSockets per client address; one more gets `429` "
                    "(`RATE_LIMITED`); `0` is off. The address is the TCP peer (an IPv6 one "
                    "counted by its /64, as the rate limits count it): a peer in "
                    "`MMK_FORWARDED_ALLOW_IPS` is a proxy and counts only towards "
                    "`MMK_MAX_CONNECTIONS` (nginx caps its clients itself, `docker/nginx.conf`)"
                ),
            ),
            Setting(
                ("MMK_WS_MESSAGE_RATE",),
                "`50`",
                (
                    "frames a second a WebSocket client may send, pings included, in bursts of as "
                    "many; a flood closes the connection with 1008; `0` is off"
                ),
            ),
            Setting(
                ("MMK_CONNECTION_LOG_INTERVAL",),
                "`10`",
                (
                    "seconds between two log lines of one kind about refused, timed-out, flooding, "
                    "stalled or failed (out of descriptors) connections, requests that do not "
                    "parse or are too large, malformed WebSocket frames; the lines in between are "
                    "counted in the next one"
                ),
            ),
        ),
    ),
    Section(
        "Games and players",
        "Clocks, caps per player, and what is kept how long.",
        (
            Setting(
                ("MMK_DEADLINE_SWEEP_INTERVAL",),
                "`1`",
                (
                    "the longest pause between two sweeps of due turn deadlines on each instance "
                    "(1 to 60); a sweep wakes earlier for the next deadline it read, so a timeout "
                    "fires soon after its deadline (p99 36-176 ms with 1,000 timed games, "
                    "benchmarks.md); a deadline set less than this before it falls due may fire up "
                    "to this late; plus the clock skew between instances ([decision "
                    "0046](decisions/0046-turn-clocks-and-takeovers.md))"
                ),
            ),
            Setting(
                ("MMK_DEADLINE_SOON_PERCENT", "MMK_DEADLINE_SOON_LEAD"),
                "`10` / `3600`",
                (
                    "a long wait's warning (`DeadlineNear`, `YourDeadlineSoon`) comes this percent "
                    "of the wait or these seconds before its deadline, whichever is later; none "
                    "when that is under a minute"
                ),
            ),
            Setting(
                ("MMK_PRESENCE_GRACE",),
                "`15`",
                (
                    "seconds a seated player may be without a live subscription to their game "
                    "before `connected: false` is announced (0 to 3600); a reconnect within it "
                    "announces nothing (decision 0047)"
                ),
            ),
            Setting(
                ("MMK_PRESENCE_HEARTBEAT",),
                "`5`",
                (
                    "seconds between two presence heartbeats (1 to 600): each instance refreshes "
                    "its players' presence entries and reviews its games; an instance that dies "
                    "without cleaning up loses its entries after three heartbeats"
                ),
            ),
            Setting(
                ("MMK_REMATCH_WAIT",),
                "`120`",
                (
                    "seconds after a game's end that a `gameEvents` subscription with "
                    "`awaitRematch: true` stays open for the rematch offer (0 to 3600; decision "
                    "0048)"
                ),
            ),
            Setting(
                ("MMK_MAX_OPEN_GAMES",),
                "`5`",
                (
                    "lobby games a player hosts at once (`createGame`, `rematch`; quick-play games "
                    "count as waits); one more is `ILLEGAL_ACTION`; `0` is no cap ([decision "
                    "0051](decisions/0051-bounded-creation-and-abandoned-games.md))"
                ),
            ),
            Setting(
                ("MMK_MAX_QUICK_PLAY_WAITS",),
                "`3`",
                (
                    "quick-play games a player sits in at once before they start (`quickPlay`, "
                    "`joinGame`); one more is `ILLEGAL_ACTION`; `0` is no cap"
                ),
            ),
            Setting(
                ("MMK_BOOSTER_PACKS_PER_DAY",),
                "`10`",
                (
                    "`openBoosterPack` calls a player may make in any 24 hours; one more is "
                    "`RATE_LIMITED` with `retryAfter`; a Sealed game's packs are not counted; `0` "
                    "is no cap"
                ),
            ),
            Setting(
                ("MMK_MAX_PENDING_INVITATIONS",),
                "`50`",
                (
                    "Invitations a host may have out at once to games not yet started "
                    "(`invitePlayers`); one more is `ILLEGAL_ACTION`; `0` is no cap (a game still "
                    "holds at most 50)"
                ),
            ),
            Setting(
                ("MMK_ABANDON_IDLE",),
                "`604800`",
                (
                    "seconds a lobby or an untimed running game may go unchanged before it ends as "
                    "abandoned (1 to 365 days)"
                ),
            ),
            Setting(
                ("MMK_ABANDON_EMPTY",),
                "`3600`",
                (
                    "seconds a running game whose every person's seat a bot plays waits for a "
                    "`reclaimSeat` before it ends as abandoned (0 to 30 days); its bots wait "
                    "meanwhile"
                ),
            ),
            Setting(
                ("MMK_ABANDON_SWEEP_INTERVAL",),
                "`60`",
                (
                    "seconds between two sweeps for games to abandon on each instance (1 to 3600); "
                    "a game ends at most this late; each ends once"
                ),
            ),
            Setting(
                ("MMK_PLAYER_KEY_WINDOW",),
                "`86400`",
                (
                    "seconds a `createPlayer` repeated with its `idempotencyKey` returns the same "
                    "player and token (60 to 30 days); later it is refused with `BAD_INPUT` and "
                    "creates nobody"
                ),
            ),
            Setting(
                ("MMK_IDEMPOTENCY_RETENTION",),
                "`604800`",
                (
                    "seconds the other mutations' idempotency records are kept (1 hour to 365 "
                    "days); a repeat after that is a new request. Every instance deletes expired "
                    "records at start and every 10 minutes"
                ),
            ),
            Setting(
                ("MMK_TOKEN_RECHECK_INTERVAL",),
                "`10`",
                (
                    "seconds between two checks, on each instance (with `REDIS_URL`), of the "
                    "tokens of its open WebSockets and HTTP streams against the database (1 to "
                    "3600): a rotated or revoked token's streams end at the latest this long after "
                    "the change when its Redis notice was lost (normally the notice ends them "
                    "within milliseconds; [decision "
                    "0053](decisions/0053-revoked-tokens-end-their-connections-everywhere.md))"
                ),
            ),
            Setting(
                ("MMK_SESSION_USE_INTERVAL",),
                "`60`",
                (
                    "seconds between two writes of the sessions' `lastUsedAt` on each instance (1 "
                    "to 3600): a sign-in only notes its session, so `lastUsedAt` is this fine"
                ),
            ),
        ),
    ),
    Section(
        "Bots and ratings",
        "",
        (
            Setting(
                ("MMK_BOT_WORKERS",),
                "half the CPUs",
                (
                    "worker processes that think EXPERT's moves, off the event loop (0: inline, "
                    "for tests)"
                ),
            ),
            Setting(
                ("MMK_EXPERT_ITERATIONS", "MMK_EXPERT_CPU_MS"),
                "`180` / `50`",
                "EXPERT's budget a decision: playouts, and a cap on its CPU milliseconds",
            ),
            Setting(
                ("MMK_TAKEOVER_BOT",),
                "`EXPERT`",
                (
                    "the strategy that plays a seat taken over (timeouts, a leave): `RANDOM`, "
                    "`GREEDY` or `EXPERT`"
                ),
            ),
            Setting(
                ("MMK_QUICK_PLAY_BOT",),
                "`GREEDY`",
                (
                    "the strategy that fills an unrated quick-play game (a rated one gets the "
                    "strategy rated nearest its people)"
                ),
            ),
            Setting(
                ("MMK_RATING_PROVISIONAL_GAMES",),
                "`10`",
                "rated games until a rating is settled (listed on the leaderboard)",
            ),
            Setting(
                ("MMK_RATING_ACTIVE_DAYS",),
                "`30`",
                "days since a player's last rated game after which they leave the leaderboard",
            ),
            Setting(
                ("MMK_RATING_RANK_REFRESH",),
                "`60`",
                "seconds between two reads of the leaderboards by each instance, for `me.rank`",
            ),
        ),
    ),
    Section(
        "Notifications and webhooks",
        "See [Push notifications](push-notifications.md).",
        (
            Setting(
                ("MMK_NOTIFICATION_RETENTION",),
                "`2592000`",
                (
                    "seconds a notification marked read is kept (1 hour to 365 days); unread ones "
                    "are kept. Every instance deletes older ones with the idempotency records, at "
                    "start and every 10 minutes"
                ),
            ),
            Setting(
                ("MMK_WEBHOOK_URL", "MMK_WEBHOOK_SECRET", "MMK_WEBHOOK_KINDS"),
                "(none)",
                (
                    "an endpoint named by the settings (id `whk_settings`, made or updated at "
                    "start): its URL, its `whsec_` secret (both or neither), its kinds "
                    "(comma-separated `NoticeKind`s; all by default)"
                ),
            ),
            Setting(
                ("MMK_WEBHOOK_ALLOWED_NETWORKS",),
                "(none)",
                (
                    "comma-separated CIDRs a webhook target may be in although private, loopback "
                    "or link-local (e.g. `127.0.0.0/8` in development); by default only public "
                    "addresses"
                ),
            ),
            Setting(
                ("MMK_WEBHOOK_TIMEOUT", "MMK_WEBHOOK_CONCURRENCY"),
                "`10` / `4`",
                (
                    "seconds a webhook attempt may take in all (1 to 60); attempts at once per "
                    "endpoint on each instance (1 to 100)"
                ),
            ),
            Setting(
                ("MMK_WEBHOOK_POLL_INTERVAL",),
                "`1`",
                (
                    "seconds between two looks at the outbox on each instance (1 to 60); a commit "
                    "on the instance wakes it at once, unless no endpoint was live at its last "
                    "look (a new or re-enabled endpoint is seen within this interval)"
                ),
            ),
            Setting(
                ("MMK_WEBHOOK_FIRST_RETRY", "MMK_WEBHOOK_RETRY_FOR"),
                "`5` / `86400`",
                (
                    "seconds to a failed message's first retry (then four times longer each, at "
                    "most 6 h, ±20%); seconds from its first try to its last (60 to 7 days), after "
                    "which it failed and its endpoint is disabled"
                ),
            ),
            Setting(
                ("MMK_WEBHOOK_RETENTION",),
                "`604800`",
                (
                    "seconds a delivered, failed or skipped message stays in the delivery log (1 "
                    "hour to 90 days)"
                ),
            ),
        ),
    ),
    Section(
        "Sign in with your own accounts",
        "See [sign-in.md](sign-in.md).",
        (
            Setting(
                ("MMK_JWT_ISSUER", "MMK_JWT_AUDIENCE"),
                "unset",
                (
                    "your identity provider's `iss`, and the `aud` its tokens carry for this game "
                    "server: a bearer token that is a JWT then signs its user in as a player "
                    "(`iss` + `sub`: one player, made on first sight; "
                    "[sign-in.md](sign-in.md))"
                ),
            ),
            Setting(
                ("MMK_JWT_JWKS_URL", "MMK_JWT_KEYS_FILE"),
                "unset",
                (
                    "where the provider's public keys are: a JWKS URL (fetched and cached), or a "
                    "local JWKS or PEM file; one of the two, with the issuer and audience"
                ),
            ),
            Setting(
                ("MMK_JWT_ALGORITHMS",),
                "`RS256,ES256,EdDSA`",
                (
                    "the signature algorithms accepted (public-key ones only: `HS*` and `none` "
                    "stop the server)"
                ),
            ),
            Setting(
                ("MMK_JWT_NAME_CLAIM", "MMK_JWT_LEEWAY"),
                "`name` / `30`",
                (
                    "the claim a new player's name comes from; seconds of clock skew allowed on "
                    "`exp`, `nbf`, `iat` (0 to 600)"
                ),
            ),
            Setting(
                ("MMK_JWKS_MAX_AGE", "MMK_JWKS_REFETCH_FLOOR", "MMK_JWKS_STALE_FOR"),
                "`3600` / `60` / `86400`",
                (
                    "seconds the JWKS is kept before it is fetched again; the least time between "
                    "two fetches (an unknown `kid` fetches again, a flood of them once); how long "
                    "the last keys serve while the provider cannot be reached"
                ),
            ),
        ),
    ),
)

HEADER = """\
# Configuration

<!-- Generated by `make docs` from infra/settings_docs.py: edit that file. -->

Settings come from the environment, read once by `infra/settings.py`. A bad
value stops the server with a message naming the variable.
`mmk serve --host --port --workers --database --redis` overrides the
matching variables. The database schema is migrated (Alembic,
`infra/db/migrations/`) at start-up. How to run the server with these
settings: [operations.md](operations.md).
"""


def documented() -> tuple[str, ...]:
    """Every variable the tables document, in order."""
    return tuple(name for section in SECTIONS for s in section.settings for name in s.names)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render() -> str:
    """docs/configuration.md."""
    lines = [HEADER]
    for section in SECTIONS:
        lines += [f"## {section.title}", ""]
        if section.intro:
            lines += [section.intro, ""]
        lines += ["| variable | default | meaning |", "| --- | --- | --- |"]
        for s in section.settings:
            names = " / ".join(f"`{name}`" for name in s.names)
            lines.append(f"| {names} | {_cell(s.default)} | {_cell(s.meaning)} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    """Write docs/configuration.md (the path given), or print it."""
    if argv:
        Path(argv[0]).write_text(render(), encoding="utf-8")
    else:
        sys.stdout.write(render())


if __name__ == "__main__":
    main(sys.argv[1:])
