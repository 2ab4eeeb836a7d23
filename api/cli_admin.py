"""An operator's commands against the server's database (issue #24):
``mmk service-key create|list|revoke`` (the app's backend's keys: a new key
is printed once, only its hash is stored), ``mmk games reindex`` and
``mmk ratings rebuild`` (issue #26)."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
from collections.abc import Awaitable, Callable
from typing import TypeVar

from domain.errors import DomainError
from domain.services import service_keys
from domain.services.deps import Deps
from infra.settings import Settings

T = TypeVar("T")
DATABASE_HELP = "database URL (DATABASE_URL); default a SQLite file"


def _run(args: argparse.Namespace, use: Callable[[Deps], Awaitable[T]]) -> T:
    """``use`` with the server's use cases on its database (migrated), no Redis:
    a key is read on every call, so no instance needs telling."""
    from infra.bootstrap import build

    settings = Settings.from_env()
    if args.database:
        settings = dataclasses.replace(settings, database_url=args.database)
    container = build(dataclasses.replace(settings, redis_url=None))

    async def go() -> T:
        try:
            return await use(container.deps)
        finally:
            await container.aclose()

    return asyncio.run(go())


def create(args: argparse.Namespace) -> int:
    scopes = [s for s in args.scopes.replace(",", " ").split() if s]
    try:
        new = _run(args, lambda deps: service_keys.create_service_key(deps, args.name, scopes))
    except DomainError as e:
        print(f"mmk service-key create: {e}", file=sys.stderr)
        return 2
    print(new.secret)
    print(
        f"service key {new.key.id} ({new.key.name}; {' '.join(sorted(new.key.scopes))}): "
        "shown once, keep it secret",
        file=sys.stderr,
    )
    return 0


def list_keys(args: argparse.Namespace) -> int:
    keys = _run(args, service_keys.list_service_keys)
    for key in keys:
        state = "live" if key.revoked_at is None else f"revoked {key.revoked_at.isoformat()}"
        scopes = " ".join(sorted(key.scopes))
        print(f"{key.id}\t{key.name}\t{scopes}\t{key.created_at.isoformat()}\t{state}")
    return 0


def revoke(args: argparse.Namespace) -> int:
    try:
        _run(args, lambda deps: service_keys.revoke_service_key(deps, args.key_id))
    except DomainError as e:
        print(f"mmk service-key revoke: {e}", file=sys.stderr)
        return 1
    print(f"service key {args.key_id} revoked", file=sys.stderr)
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("service-key", help="create, list or revoke your app backend's keys")
    keys = p.add_subparsers(dest="service_key_command", required=True)
    p_create = keys.add_parser("create", help="a new key, printed once")
    p_create.add_argument("--name", required=True, help="what it is for (1 to 60 characters)")
    p_create.add_argument(
        "--scopes",
        required=True,
        help=f"comma-separated, among: {', '.join(service_keys.SCOPES)}",
    )
    p_create.add_argument("--database", help=DATABASE_HELP)
    p_create.set_defaults(run=create)
    p_list = keys.add_parser("list", help="every key: id, name, scopes, created, state")
    p_list.add_argument("--database", help=DATABASE_HELP)
    p_list.set_defaults(run=list_keys)
    p_revoke = keys.add_parser("revoke", help="a key stops working at once")
    p_revoke.add_argument("key_id", metavar="KEY_ID")
    p_revoke.add_argument("--database", help=DATABASE_HELP)
    p_revoke.set_defaults(run=revoke)


def reindex(args: argparse.Namespace) -> int:
    """``mmk games reindex``: the "my games" rows of every game, again."""
    from infra.db.engine import make_engine
    from infra.db.migrate import upgrade
    from infra.db.reindex import reindex_game_seats

    url = args.database or Settings.from_env().database_url
    upgrade(url)
    engine = make_engine(url)
    try:
        count = reindex_game_seats(engine)
    finally:
        engine.dispose()
    print(f"reindexed {count} game(s)", file=sys.stderr)
    return 0


def add_games_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("games", help="maintenance of the games' indexes")
    cmds = p.add_subparsers(dest="games_command", required=True)
    p_reindex = cmds.add_parser(
        "reindex", help="write every game's 'my games' rows again (scores of games before 0012)"
    )
    p_reindex.add_argument("--database", help=DATABASE_HELP)
    p_reindex.set_defaults(run=reindex)


def rebuild_ratings(args: argparse.Namespace) -> int:
    """``mmk ratings rebuild``: every rating recomputed from the game log;
    ``--check``: compared with the live ones only (exit 1 if any differs)."""
    from domain.services.rating_rebuild import rebuild

    done = _run(args, lambda deps: rebuild(deps, write=not args.check))
    differences = done.differences
    for mine, live in differences:
        print(f"differs: from the log {mine}; live {live}")
    verb = "checked" if args.check else "rebuilt"
    print(
        f"{verb} {len(done.ratings)} rating(s) from {done.games} rated game(s); "
        f"{len(differences)} differed from the live ones",
        file=sys.stderr,
    )
    return 1 if args.check and differences else 0


def add_ratings_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("ratings", help="maintenance of the ratings of rated games")
    cmds = p.add_subparsers(dest="ratings_command", required=True)
    p_rebuild = cmds.add_parser(
        "rebuild", help="recompute every rating from the game log and write it over the live one"
    )
    p_rebuild.add_argument(
        "--check", action="store_true", help="only compare with the live ratings (exit 1: differ)"
    )
    p_rebuild.add_argument("--database", help=DATABASE_HELP)
    p_rebuild.set_defaults(run=rebuild_ratings)
