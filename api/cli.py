"""The ``mmk`` command line: ``serve`` (the GraphQL server), ``demo`` (a
seeded bots-only game in the terminal), ``simulate`` (many bots-only
games, with statistics), ``export`` (a finished game's log as JSON) and
``verify`` (re-deal an exported game from its revealed seed and check it)
``service-key`` (the app's backend's keys) and ``games reindex``."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence

from tqdm import tqdm

from api import cli_admin
from api.event_text import describe
from domain.bots.strategy import Strategy
from domain.errors import DomainError
from domain.game.options import MAX_SEATS, MIN_SEATS, AbilityTrigger, Format, GameOptions
from domain.simulation import Stats, play_game
from domain.verify import Mismatch, verify
from infra.logs import configure_logging, log_config, redact
from infra.settings import Settings


def _seats(text: str) -> int:
    n = int(text)
    if not MIN_SEATS <= n <= MAX_SEATS:
        raise argparse.ArgumentTypeError(f"seats must be {MIN_SEATS} to {MAX_SEATS}")
    return n


def _positive(text: str) -> int:
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return n


def _bots(text: str) -> list[Strategy]:
    try:
        return [Strategy(b.strip().lower()) for b in text.split(",") if b.strip()]
    except ValueError as e:
        raise argparse.ArgumentTypeError(
            f"bots are {', '.join(s.value for s in Strategy)}, comma-separated"
        ) from e


def _options(args: argparse.Namespace) -> GameOptions:
    return GameOptions(Format(args.format), AbilityTrigger(args.trigger), not args.no_refill)


def _add_game_args(p: argparse.ArgumentParser, seats: int) -> None:
    p.add_argument("--seats", type=_seats, default=seats, help="3 to 8 (R2.1)")
    p.add_argument("--seed", default="1", help="integer or text (R3.5)")
    p.add_argument(
        "--bots",
        type=_bots,
        default=[Strategy.GREEDY, Strategy.RANDOM],
        help="strategies, given to seats in turn (default: greedy,random)",
    )
    p.add_argument("--format", choices=[f.value for f in Format], default=Format.SINGLETON.value)
    p.add_argument(
        "--trigger",
        choices=[t.value for t in AbilityTrigger],
        default=AbilityTrigger.LEAD_AND_RARE.value,
    )
    p.add_argument("--no-refill", action="store_true", help="turn off refilling hands (R8.3)")


def _seed(text: str) -> int | str:
    return int(text) if text.lstrip("-").isdigit() else text


def demo(args: argparse.Namespace) -> int:
    """Play one seeded game and print what a spectator sees."""
    _, result = play_game(
        args.seats,
        _seed(args.seed),
        args.bots,
        _options(args),
        on_event=lambda e: print(describe(e.seen_by(None))),
    )
    o = result.outcome
    print(
        f"\n{result.tricks} tricks, {result.decisions} decisions; "
        f"scores {list(o.scores)}; winners {list(o.winners)} ({o.termination.value})"
    )
    return 0


def simulate(args: argparse.Namespace) -> int:
    """Play many games; print games/s and outcome statistics."""
    stats = Stats()
    base = _seed(args.seed)
    start = time.perf_counter()
    for g in tqdm(
        range(args.games), unit="game", disable=args.games < 200 or args.quiet, file=sys.stderr
    ):
        stats.add(play_game(args.seats, f"{base}/{g}", args.bots, _options(args))[1])
    elapsed = time.perf_counter() - start
    print(
        f"{stats.games} games, {args.seats} seats, bots {','.join(b.value for b in args.bots)}: "
        f"{stats.games / elapsed:.1f} games/s, {stats.decisions / elapsed:.0f} decisions/s"
    )
    for key, value in stats.summary().items():
        print(f"  {key:28} {value:.3f}" if isinstance(value, float) else f"  {key:28} {value}")
    for key, count in sorted(stats.terminations.items()):
        print(f"  ended by {key:19} {count}")
    return 0


def export(args: argparse.Namespace) -> int:
    """Write a finished game's log (every audience's view, and the causes)
    as JSON, for ``mmk verify`` (docs/decisions/0040)."""
    from domain.services.export import export_log
    from infra.db.engine import make_engine
    from infra.db.uow import SqlUnitOfWorkFactory
    from infra.game_export import export_to_json

    url = args.database or Settings.from_env().database_url
    engine = make_engine(url)
    try:
        with SqlUnitOfWorkFactory(engine)() as uow:
            log = export_log(uow, args.game_id)
    except DomainError as e:
        print(f"mmk export: {e}", file=sys.stderr)
        return 1
    finally:
        engine.dispose()
    text = json.dumps(export_to_json(args.game_id, log), ensure_ascii=False) + "\n"
    if args.output in (None, "-"):
        sys.stdout.write(text)
    else:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


def verify_export(args: argparse.Namespace) -> int:
    """Check an exported game: 0 and one "ok" line, 1 and the first mismatch,
    2 for a file that is not an export."""
    from infra.game_export import export_from_json

    try:
        with open(args.file, encoding="utf-8") as f:
            game_id, log = export_from_json(json.load(f))
    except (OSError, ValueError, TypeError, KeyError) as e:
        print(f"mmk verify: {args.file}: not a readable game export: {e}", file=sys.stderr)
        return 2
    try:
        ok = verify(log)
    except Mismatch as e:
        print(f"mmk verify: game {game_id}: MISMATCH: {e}", file=sys.stderr)
        return 1
    print(
        f"ok: game {game_id}{' (practice)' if ok.practice else ''}: {ok.seat_count} seats, "
        f"{ok.events} events, {ok.commands} commands replayed from the revealed seed; "
        f"commitment {ok.seed_commitment}; winners {list(ok.winners)}"
    )
    return 0


def serve(args: argparse.Namespace) -> int:
    """Serve the GraphQL API with uvicorn; options override the environment."""
    import os

    import uvicorn

    from api.app import MAX_WS_MESSAGE_BYTES
    from api.fast.ws_protocol import PING_INTERVAL

    for name, value in (
        ("DATABASE_URL", args.database),
        ("REDIS_URL", args.redis),
        ("MMK_HOST", args.host),
        ("MMK_PORT", args.port),
        ("MMK_WORKERS", args.workers),
    ):
        if value is not None:
            os.environ[name] = str(value)
    settings = Settings.from_env()
    configure_logging(settings.log_level)
    print(
        f"MMK server on http://{settings.host}:{settings.port}/graphql "
        f"({settings.workers} worker(s), database {redact(settings.database_url)}, "
        f"bus {'redis' if settings.redis_url else 'in-process'})"
        + ("; development mode (MMK_DEV): local pages may call it" if settings.dev else ""),
        flush=True,
    )
    uvicorn.run(
        "api.app:create_app",
        factory=True,
        host=settings.host,
        port=settings.port,
        workers=settings.workers,
        log_level=settings.log_level,
        log_config=log_config(settings.log_level),  # JSON lines, in every worker
        access_log=False,  # api.middleware logs each request, without its query string
        # uvicorn's httptools, with header/body read timeouts and connection
        # caps (docs/decisions/0044)
        http="api.fast.http_protocol:HttpProtocol",
        # uvicorn's websockets-sansio, dropping clients that stop reading or flood
        ws="api.fast.ws_protocol:WebSocketProtocol",
        ws_ping_interval=PING_INTERVAL,  # keeps a quiet WebSocket alive through proxies
        # frames are small JSON events: per-message deflate costs CPU and memory
        # per subscription for little gain (docs/decisions/0022)
        ws_per_message_deflate=False,
        ws_max_size=MAX_WS_MESSAGE_BYTES,  # a larger client message closes the socket (1009)
        timeout_keep_alive=settings.keep_alive_timeout,
        # X-Forwarded-For names the client (rate limits, per-IP caps) only when
        # it comes from a proxy named in MMK_FORWARDED_ALLOW_IPS; none named,
        # no proxy header is read (uvicorn's own default trusts loopback)
        proxy_headers=settings.forwarded_allow_ips is not None,
        forwarded_allow_ips=settings.forwarded_allow_ips or "",
        lifespan="on",
        loop=settings.event_loop,
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mmk", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p_serve = sub.add_parser("serve", help="serve the GraphQL API (uvicorn)")
    p_serve.add_argument("--host", help="default 127.0.0.1 (MMK_HOST)")
    p_serve.add_argument("--port", type=int, help="default 8000 (MMK_PORT)")
    p_serve.add_argument("--workers", type=int, help="processes, default 1 (MMK_WORKERS)")
    p_serve.add_argument("--database", help="database URL (DATABASE_URL); default a SQLite file")
    p_serve.add_argument("--redis", help="Redis URL (REDIS_URL); default the in-process bus")
    p_serve.set_defaults(run=serve)
    p_demo = sub.add_parser("demo", help="play one seeded bots-only game in the terminal")
    _add_game_args(p_demo, seats=4)
    p_demo.set_defaults(run=demo)
    p_sim = sub.add_parser("simulate", help="play many bots-only games; print statistics")
    _add_game_args(p_sim, seats=5)
    p_sim.add_argument("--games", type=_positive, default=1000)
    p_sim.add_argument("--quiet", action="store_true", help="no progress bar")
    p_sim.set_defaults(run=simulate)
    p_export = sub.add_parser("export", help="write a finished game's log as JSON (for verify)")
    p_export.add_argument("game_id", metavar="GAME_ID")
    p_export.add_argument("--database", help="database URL (DATABASE_URL); default a SQLite file")
    p_export.add_argument("-o", "--output", help="the file to write (default: standard output)")
    p_export.set_defaults(run=export)
    p_verify = sub.add_parser(
        "verify", help="re-deal an exported game from its revealed seed and check its log"
    )
    p_verify.add_argument("file", metavar="FILE", help="what mmk export wrote")
    p_verify.set_defaults(run=verify_export)
    cli_admin.add_parser(sub)
    cli_admin.add_games_parser(sub)
    cli_admin.add_ratings_parser(sub)
    args = parser.parse_args(argv)
    result: int = args.run(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
