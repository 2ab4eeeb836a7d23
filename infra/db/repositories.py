"""Repositories over one SQLAlchemy ``Connection`` (one transaction), in Core SQL.

Statements are built once at import time so that each call only binds values:
the writes and the idempotency key's look-up (a move's statements) through
:class:`~infra.db.direct.DirectStatement` (compiled once, run on the DBAPI
cursor), the other reads through Core (its compiled cache does the rest). A
``Session``'s transaction works too: pass ``session.connection()``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from functools import partial
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from domain.featured import LiveGame
from domain.log import ExportedEvent, LoggedEvent
from domain.my_games import OTHERS, SeatEntry, StatLine, changed_entries, entries_of
from domain.notifications import Notice, Notification
from domain.ports import WriteConflict
from domain.records import (
    BoosterRecord,
    GameRecord,
    GameStatus,
    GameSummary,
    IdempotencyRecord,
    Invitation,
    Occupant,
    PackPage,
    Page,
    Player,
    ServiceKey,
    SessionRecord,
)
from domain.webhooks import outbox
from infra.db import mappers as m
from infra.db.batch import settle
from infra.db.direct import DirectStatement
from infra.db.errors import conflicts_as_write_conflict
from infra.db.game_cache import GameCache
from infra.db.tables import (
    booster_packs,
    game_events,
    game_seats,
    games,
    idempotency_keys,
    identities,
    invitations,
    notice_counters,
    notifications,
    players,
    service_keys,
    sessions,
)
from infra.db.webhook_store import SqlWebhookStore

_P, _G, _E, _I, _B = players.c, games.c, game_events.c, idempotency_keys.c, booster_packs.c

_PLAYER_BY_ID = sa.select(players).where(_P.id == sa.bindparam("id"))
_S = sessions.c
SESSION_BY_HASH = DirectStatement(
    sa.select(
        sessions,
        _P.name.label("player_name"),
        _P.created_at.label("player_created_at"),
    )
    .join(players, _P.id == _S.player_id)
    .where(_S.token_hash == sa.bindparam("h"))
)
_SESSIONS_OF = (
    sa.select(sessions)
    .where(_S.player_id == sa.bindparam("p"))
    .order_by(_S.last_used_at.desc(), _S.created_at.desc(), _S.id)
)
_SESSION_HASH = sa.select(_S.token_hash).where(
    _S.id == sa.bindparam("s"), _S.player_id == sa.bindparam("p")
)
_END_SESSION = sa.delete(sessions).where(
    _S.id == sa.bindparam("s"), _S.player_id == sa.bindparam("p")
)
_TOUCH_SESSIONS = (
    sa.update(sessions)
    .where(_S.id.in_(sa.bindparam("s", expanding=True)))
    .values(last_used_at=sa.bindparam("at"))
)
_PLAYER_BY_DIGEST = sa.select(players).where(_P.key_digest == sa.bindparam("d"))
_ID = identities.c
_PLAYER_BY_IDENTITY = (
    sa.select(players)
    .join(identities, _ID.player_id == _P.id)
    .where(_ID.issuer == sa.bindparam("iss"), _ID.subject == sa.bindparam("sub"))
)
_LIVE_TOKEN_HASHES = sa.select(_S.token_hash).where(
    _S.token_hash.in_(sa.bindparam("hs", expanding=True))
)
_SWAP_TOKEN_HASH = (
    sa.update(sessions)
    .where(_S.player_id == sa.bindparam("w_id"), _S.token_hash == sa.bindparam("old"))
    .values(token_hash=sa.bindparam("new"))
)
_RENAME_PLAYER = (
    sa.update(players).where(_P.id == sa.bindparam("w_id")).values(name=sa.bindparam("name"))
)
_CLAIM_PLAYER = sa.select(_P.id).where(_P.id == sa.bindparam("p")).with_for_update(key_share=True)
"""The player's row held to the end of the transaction (0051): FOR NO KEY
UPDATE on PostgreSQL, so the foreign-key checks of other transactions'
inserts (their KEY SHARE locks) never wait on it; nothing on SQLite, where
every transaction holds the database's write lock (``BEGIN IMMEDIATE``)."""
GAME_BY_ID = DirectStatement(sa.select(games).where(_G.id == sa.bindparam("id")))
_LOCK_GAME = sa.select(_G.id).where(_G.id == sa.bindparam("id")).with_for_update()
GAME_VERSION = DirectStatement(sa.select(_G.version).where(_G.id == sa.bindparam("id")))
_KEPT: sa.BindParameter[int] = sa.bindparam("kept", type_=sa.Integer())
GAME_IF_CHANGED = DirectStatement(
    sa.select(
        _G.id,
        _G.version,
        *(
            sa.case((_G.version != _KEPT, c)).label(c.name)
            for c in games.c
            if c.name not in ("id", "version")
        ),
    ).where(_G.id == sa.bindparam("id"))
)
"""A game's version, and its other columns only when that is not ``kept``
(the version a cache holds): a cache's check and its miss in one round trip
(NULLs, nothing read or sent, while the copy is current)."""
# Set at creation, never changed: left out of the per-move UPDATE, so it
# writes (and re-indexes) only what a move can change.
_IMMUTABLE_GAME_COLUMNS = frozenset(
    {
        "id",
        "created_at",
        "host",
        "seat_count",
        "options",
        "seed",
        "rat_choice",
        "salt",
        "practice",
        "quick_play",
        "visibility",
        "rated",
    }
)
_MOVE_COLUMNS = [c.key for c in games.columns if c.key not in _IMMUTABLE_GAME_COLUMNS]
_SAVE_GAME = DirectStatement(
    sa.update(games).where(_G.id == sa.bindparam("w_id"), _G.version == sa.bindparam("w_version")),
    _MOVE_COLUMNS,
)
_STALLED_BOTS = (
    sa.select(_G.id)
    .where(_G.bot_turn.is_(True), _G.updated_at < sa.bindparam("before"))
    .order_by(_G.updated_at)
    .limit(sa.bindparam("n"))
)
_DUE_DEADLINES = (
    sa.select(_G.id)
    .where(_G.deadline.is_not(None), _G.deadline <= sa.bindparam("now"))
    .order_by(_G.deadline)
    .limit(sa.bindparam("n"))
)
_NEXT_DEADLINE = (
    sa.select(_G.deadline)
    .where(_G.deadline.is_not(None), _G.deadline > sa.bindparam("after"))
    .order_by(_G.deadline)
    .limit(1)
)
_OPEN_QUICK_PLAY = (
    sa.select(_G.id)
    .where(_G.status == GameStatus.LOBBY.value, _G.quick_play == sa.bindparam("k"))
    .order_by(_G.created_at, _G.id)
    .limit(sa.bindparam("n"))
)
_DUE_FILLS = (
    sa.select(_G.id)
    .where(_G.fill_bots_at <= sa.bindparam("now"), _G.status == GameStatus.LOBBY.value)
    .order_by(_G.fill_bots_at, _G.id)
    .limit(sa.bindparam("n"))
)
_OPEN_LOBBIES = (
    sa.select(sa.func.count())
    .select_from(games)
    .where(
        _G.host == sa.bindparam("p"),
        _G.status == GameStatus.LOBBY.value,
        _G.quick_play.is_(None),
    )
)
# The open quick-play games (ix_games_quick_play) with a seat of the player:
# a look inside the seats' JSON, in each dialect's words.
_QUICK_PLAY_WAITS = {
    "sqlite": sa.text(
        "SELECT count(*) FROM games WHERE status = 'lobby' AND quick_play IS NOT NULL "
        "AND EXISTS (SELECT 1 FROM json_each(games.seats) AS s "
        "WHERE json_extract(s.value, '$.playerId') = :p)"
    ),
    "postgresql": sa.text(
        "SELECT count(*) FROM games WHERE status = 'lobby' AND quick_play IS NOT NULL "
        "AND EXISTS (SELECT 1 FROM json_array_elements(games.seats) AS s "
        "WHERE s ->> 'playerId' = :p)"
    ),
}
_DUE_ABANDONMENTS = (
    sa.select(_G.id)
    .where(_G.abandon_at.is_not(None), _G.abandon_at <= sa.bindparam("now"))
    .order_by(_G.abandon_at, _G.id)
    .limit(sa.bindparam("n"))
)
# The public games only, in the words of the partial indexes' condition:
# a bound parameter could leave a generic plan (PostgreSQL's prepared
# statements) unable to prove the condition, and so without the indexes.
_GAME_NEWEST = (
    sa.select(*(games.c[n] for n in m.SUMMARY_COLUMNS))
    .where(_G.visibility == sa.literal_column("'public'"))
    .order_by(_G.created_at.desc(), _G.id.desc())
)
_LIVE = (
    _GAME_NEWEST.add_columns(_G.updated_at)
    .where(_G.status == GameStatus.RUNNING.value)
    .limit(sa.bindparam("n"))
)
_V = invitations.c
_BY_INVITE_CODE = sa.select(_G.id).where(_G.invite_code == sa.bindparam("c"))
_DELETE_INVITATIONS = DirectStatement(sa.delete(invitations).where(_V.game_id == sa.bindparam("g")))


def _invitations_of(after: bool) -> sa.Select[Any]:
    """A page of a player's pending invitations to lobby games, newest first."""
    stmt = (
        sa.select(invitations, *(games.c[n].label(f"g_{n}") for n in m.SUMMARY_COLUMNS))
        .join(games, games.c.id == _V.game_id)
        .where(_V.player_id == sa.bindparam("p"), _G.status == GameStatus.LOBBY.value)
        .order_by(_V.created_at.desc(), _V.game_id.desc())
        .limit(sa.bindparam("n"))
    )
    if after:
        stmt = stmt.where(
            sa.tuple_(_V.created_at, _V.game_id)
            < sa.tuple_(sa.bindparam("at", type_=_V.created_at.type), sa.bindparam("g"))
        )
    return stmt


_INVITATIONS_OF = {a: _invitations_of(a) for a in (False, True)}
_INVITATIONS_SENT = (
    sa.select(sa.func.count())
    .select_from(invitations)
    .join(games, games.c.id == _V.game_id)
    .where(_V.invited_by == sa.bindparam("p"), _G.status == GameStatus.LOBBY.value)
)
_EVENTS_AFTER = (
    sa.select(game_events)
    .where(_E.game_id == sa.bindparam("g"), _E.seq > sa.bindparam("after"))
    .order_by(_E.seq)
    .limit(sa.bindparam("n"))
)
_KEY = DirectStatement(
    sa.select(idempotency_keys).where(
        _I.player_id == sa.bindparam("p"), _I.key == sa.bindparam("k")
    )
)
_DISCARD_KEY = sa.delete(idempotency_keys).where(
    _I.player_id == sa.bindparam("p"), _I.key == sa.bindparam("k")
)
_EXPIRED_KEYS = sa.delete(idempotency_keys).where(
    sa.tuple_(_I.player_id, _I.key).in_(
        sa.select(_I.player_id, _I.key)
        .where(_I.expires_at <= sa.bindparam("now"))
        .limit(sa.bindparam("n", type_=sa.Integer))
    )
)
"""A batch of expired records (one short transaction each, docs/decisions/0041)."""
_PACKS_OF = (
    sa.select(booster_packs).where(_B.player_id == sa.bindparam("p")).order_by(_B.opened_at, _B.id)
)
_PACKS_COUNTED = (
    sa.select(sa.func.count()).select_from(booster_packs).where(_B.player_id == sa.bindparam("p"))
)
_PACKS_SINCE = (
    sa.select(_B.opened_at)
    .where(
        _B.player_id == sa.bindparam("p"),
        _B.game_id.is_(None),
        _B.opened_at > sa.bindparam("since"),
    )
    .order_by(_B.opened_at.desc())
    .limit(sa.bindparam("n"))
)
_INSERT = {
    t.name: DirectStatement(sa.insert(t), [c.key for c in t.columns])
    for t in (
        players,
        sessions,
        service_keys,
        games,
        game_seats,
        game_events,
        idempotency_keys,
        booster_packs,
        identities,
        invitations,
        notifications,
    )
}


class _Repo:
    def __init__(self, conn: sa.Connection) -> None:
        self._c = conn

    def _insert(self, table: sa.Table, rows: list[dict[str, Any]], what: str) -> None:
        if not rows:
            return
        with conflicts_as_write_conflict(what):
            _INSERT[table.name].later(self._c, rows)  # with the batch (infra/db/batch.py)


class SqlPlayerRepository(_Repo):
    def add(self, player: Player, key_digest: str | None = None) -> None:
        self._insert(players, [m.player_to_row(player, key_digest)], f"player {player.id}")

    def add_session(self, session: SessionRecord, token_hash: str) -> None:
        row = m.session_to_row(session, token_hash)
        self._insert(sessions, [row], f"session {session.id}")

    def get(self, player_id: str) -> Player | None:
        row = self._c.execute(_PLAYER_BY_ID, {"id": player_id}).first()
        return None if row is None else m.player_from_row(row._mapping)

    def by_token_hash(self, token_hash: str) -> tuple[Player, SessionRecord, str] | None:
        found = SESSION_BY_HASH.first(self._c, {"h": token_hash})
        return None if found is None else m.session_found(found)

    def sessions_of(self, player_id: str) -> list[SessionRecord]:
        rows = self._c.execute(_SESSIONS_OF, {"p": player_id})
        return [m.session_from_row(r._mapping) for r in rows]

    def end_session(self, player_id: str, session_id: str) -> str | None:
        keys = {"s": session_id, "p": player_id}
        digest: str | None = self._c.execute(_SESSION_HASH, keys).scalar()
        if digest is not None:
            self._c.execute(_END_SESSION, keys)
        return digest

    def touch_sessions(self, session_ids: Collection[str], at: datetime) -> None:
        if session_ids:
            self._c.execute(_TOUCH_SESSIONS, {"s": list(session_ids), "at": at})

    def by_key_digest(self, key_digest: str) -> Player | None:
        row = self._c.execute(_PLAYER_BY_DIGEST, {"d": key_digest}).first()
        return None if row is None else m.player_from_row(row._mapping)

    def by_identity(self, issuer: str, subject: str) -> Player | None:
        row = self._c.execute(_PLAYER_BY_IDENTITY, {"iss": issuer, "sub": subject}).first()
        return None if row is None else m.player_from_row(row._mapping)

    def add_identity(self, player_id: str, issuer: str, subject: str, at: datetime) -> None:
        row = {"issuer": issuer, "subject": subject, "player_id": player_id, "created_at": at}
        self._insert(identities, [row], f"identity {issuer} {subject}")

    def rename(self, player_id: str, name: str) -> bool:
        return self._c.execute(_RENAME_PLAYER, {"w_id": player_id, "name": name}).rowcount == 1

    def replace_token_hash(self, player_id: str, old: str, new: str) -> bool:
        with conflicts_as_write_conflict(f"player {player_id}"):
            done = self._c.execute(_SWAP_TOKEN_HASH, {"w_id": player_id, "old": old, "new": new})
        return done.rowcount == 1

    def names(self, player_ids: Collection[str]) -> dict[str, str]:
        if not player_ids:
            return {}
        stmt = _NAMES[self._c.dialect.name]
        return {r.id: r.name for r in self._c.execute(stmt, {"ids": list(player_ids)})}

    def live_token_hashes(self, hashes: Collection[str]) -> set[str]:
        if not hashes:
            return set()
        rows = self._c.execute(_LIVE_TOKEN_HASHES, {"hs": list(hashes)})
        return {row.token_hash for row in rows}

    def claim(self, player_id: str) -> None:
        self._c.execute(_CLAIM_PLAYER, {"p": player_id})


_GS = game_seats.c
_ENTRY_COLUMNS = [c.key for c in game_seats.columns if c.key not in ("player_id", "game_id")]
_UPDATE_ENTRIES = DirectStatement(
    sa.update(game_seats).where(
        _GS.game_id == sa.bindparam("w_game"), _GS.player_id == sa.bindparam("w_player")
    ),
    _ENTRY_COLUMNS,
)
_DELETE_ENTRIES = DirectStatement(sa.delete(game_seats).where(_GS.game_id == sa.bindparam("g")))


def _my_games(status: bool, your_turn: bool | None, after: bool) -> sa.Select[Any]:
    """A page of a player's games: with a status, with or without their
    turn (their rank's first digit), after a (rank, game id)."""
    stmt = (
        sa.select(game_seats, *(games.c[n].label(f"g_{n}") for n in m.SUMMARY_COLUMNS))
        .join(games, games.c.id == _GS.game_id)
        .where(_GS.player_id == sa.bindparam("p"))
        .order_by(_GS.rank, _GS.game_id)
        .limit(sa.bindparam("n"))
    )
    if status:
        stmt = stmt.where(_GS.status == sa.bindparam("s"))
    if your_turn is True:
        stmt = stmt.where(_GS.rank < OTHERS)
    elif your_turn is False:
        stmt = stmt.where(_GS.rank >= OTHERS)
    if after:
        stmt = stmt.where(
            sa.tuple_(_GS.rank, _GS.game_id) > sa.tuple_(sa.bindparam("r"), sa.bindparam("g"))
        )
    return stmt


_MY_GAMES = {
    (s, t, a): _my_games(s, t, a)
    for s in (False, True)
    for t in (None, True, False)
    for a in (False, True)
}
_MY_STATS = (
    sa.select(
        _GS.format,
        _GS.seat_count,
        sa.func.count().label("played"),
        sa.func.sum(sa.case((_GS.won.is_(True), 1), else_=0)).label("won"),
    )
    .where(_GS.player_id == sa.bindparam("p"), _GS.status == GameStatus.FINISHED.value)
    .group_by(_GS.format, _GS.seat_count)
    .order_by(_GS.format, _GS.seat_count)
)
_NAMES = {
    # one parameter, one plan: an IN list of its own length per call costs
    # PostgreSQL a plan each time (~2 ms for a page of names)
    "postgresql": sa.select(_P.id, _P.name).where(
        _P.id == sa.any_(sa.bindparam("ids", type_=postgresql.ARRAY(sa.String())))
    ),
    "sqlite": sa.select(_P.id, _P.name).where(_P.id.in_(sa.bindparam("ids", expanding=True))),
}
_K = service_keys.c
_KEY_BY_HASH = sa.select(service_keys).where(_K.key_hash == sa.bindparam("h"))
_ALL_KEYS = sa.select(service_keys).order_by(_K.created_at, _K.id)
_REVOKE_KEY = (
    sa.update(service_keys)
    .where(_K.id == sa.bindparam("k"), _K.revoked_at.is_(None))
    .values(revoked_at=sa.bindparam("at"))
)


class SqlServiceKeyRepository(_Repo):
    def add(self, key: ServiceKey, key_hash: str) -> None:
        row = m.service_key_to_row(key, key_hash)
        self._insert(service_keys, [row], f"service key {key.id}")

    def by_hash(self, key_hash: str) -> tuple[ServiceKey, str] | None:
        row = self._c.execute(_KEY_BY_HASH, {"h": key_hash}).first()
        return None if row is None else (m.service_key_from_row(row._mapping), row.key_hash)

    def all(self) -> list[ServiceKey]:
        return [m.service_key_from_row(r._mapping) for r in self._c.execute(_ALL_KEYS)]

    def revoke(self, key_id: str, at: datetime) -> bool:
        return self._c.execute(_REVOKE_KEY, {"k": key_id, "at": at}).rowcount == 1


class SqlGameRepository(_Repo):
    """Games. With a :class:`GameCache`, a game whose stored version is the
    cached one is served from memory as a copy: only its version is read,
    not its state (docs/decisions)."""

    def __init__(self, conn: sa.Connection, cache: GameCache | None = None) -> None:
        super().__init__(conn)
        self._cache = cache
        self.written: list[GameRecord] = []
        # each game's "my games" entries as of the version read, to write
        # only what a change changed (domain/my_games.py)
        self._entries: dict[str, list[SeatEntry]] = {}
        # and its pending invitations, copied to ``invitations`` on a change (0062)
        self._invited: dict[str, list[Invitation]] = {}

    def add(self, game: GameRecord) -> None:
        self._insert(games, [m.game_to_row(game)], f"game {game.id}")
        self._entries[game.id] = entries = entries_of(game)
        self._insert(game_seats, [m.entry_row(e) for e in entries], f"game {game.id}'s seats")
        self._invited[game.id] = []
        self._write_invitations(game)
        self.written.append(game)

    def _write_invitations(self, game: GameRecord) -> None:
        """The game's pending invitations again in ``invitations``, when a
        change changed them (seldom: an invitation, an answer, a seat taken)."""
        if self._invited.get(game.id) == game.invitations:
            return
        _DELETE_INVITATIONS.later(self._c, [{"g": game.id}])
        rows = [m.invitation_row(game.id, i) for i in game.invitations]
        self._insert(invitations, rows, f"game {game.id}'s invitations")
        self._invited[game.id] = list(game.invitations)

    def by_invite_code(self, code: str) -> str | None:
        found: str | None = self._c.execute(_BY_INVITE_CODE, {"c": code}).scalar()
        return found

    def invitations_of(
        self, player_id: str, before: tuple[datetime, str] | None, limit: int
    ) -> list[tuple[Invitation, GameSummary]]:
        values: dict[str, Any] = {"p": player_id, "n": limit}
        if before is not None:
            values["at"], values["g"] = before
        rows = self._c.execute(_INVITATIONS_OF[before is not None], values).mappings().all()
        return [m.invited_from_row(r) for r in rows]

    def invitations_sent(self, host: str) -> int:
        count: int = self._c.execute(_INVITATIONS_SENT, {"p": host}).scalar_one()
        return count

    def _write_entries(self, game: GameRecord) -> None:
        """The game's "my games" rows (issue #24), those the change changed:
        updated in place while the persons stay (they change in the lobby
        only: a seat left later stays its player's, played by a bot), all
        written again when they change."""
        now = entries_of(game)
        changed = changed_entries(self._entries.get(game.id), now)
        self._entries[game.id] = now
        if changed is None:
            self.reindex(game)
        elif changed:
            rows = [
                m.entry_row(e) | {"w_game": e.game_id, "w_player": e.player_id} for e in changed
            ]

            def check(cursor: Any) -> None:
                if cursor.rowcount < len(rows):
                    self.reindex(game)  # a row missing (rewritten meanwhile): all again

            _UPDATE_ENTRIES.later(self._c, rows, check)

    def rewrite_entries(self, game_id: str) -> bool:
        """``mmk games reindex``: the game's rows again, the game's row held
        to the commit (on PostgreSQL a move of it waits, or went first and is
        what is read; SQLite's write lock holds everything)."""
        if self._c.execute(_LOCK_GAME, {"id": game_id}).first() is None:
            return False
        game = self.get(game_id)
        if game is None:
            return False
        self.reindex(game)
        return True

    def reindex(self, game: GameRecord) -> None:
        """Write the game's "my games" rows again from the game itself
        (``mmk games reindex``: games stored before migration 0012)."""
        _DELETE_ENTRIES.later(self._c, [{"g": game.id}])
        rows = [m.entry_row(e) for e in entries_of(game)]
        self._insert(game_seats, rows, f"game {game.id}'s seats")

    def player_games(
        self,
        player_id: str,
        status: GameStatus | None,
        your_turn: bool | None,
        after: tuple[str, str] | None,
        limit: int,
    ) -> list[tuple[SeatEntry, GameSummary, list[Occupant | None]]]:
        stmt = _MY_GAMES[status is not None, your_turn, after is not None]
        values: dict[str, Any] = {"p": player_id, "n": limit}
        if status is not None:
            values["s"] = status.value
        if after is not None:
            values["r"], values["g"] = after
        rows = self._c.execute(stmt, values).mappings().all()
        return [m.my_game_from_row(r) for r in rows]

    def player_stats(self, player_id: str) -> list[StatLine]:
        rows = self._c.execute(_MY_STATS, {"p": player_id})
        return [StatLine(r.format, r.seat_count, r.played, int(r.won or 0)) for r in rows]

    def get(self, game_id: str) -> GameRecord | None:
        # a game this transaction wrote is not committed yet: never cached
        cache = None if any(g.id == game_id for g in self.written) else self._cache
        if cache is not None:
            found = GAME_VERSION.first(self._c, {"id": game_id})
            if found is None:
                return None
            cached = cache.get(game_id, found["version"])
            if cached is not None:
                self._entries[game_id] = entries_of(cached)
                self._invited[game_id] = list(cached.invitations)
                return cached
        row = GAME_BY_ID.first(self._c, {"id": game_id})
        if row is None:
            return None
        game = m.game_from_row(row)
        if cache is not None:
            cache.put(game.clone())  # committed; the caller changes its own
        self._entries[game_id] = entries_of(game)
        self._invited[game_id] = list(game.invitations)
        return game

    def save(self, game: GameRecord, expected_version: int) -> None:
        values = m.game_to_row(game) | {"w_id": game.id, "w_version": expected_version}

        def check(cursor: Any) -> None:  # before the commit (infra/db/batch.py)
            if cursor.rowcount != 1:
                raise WriteConflict(f"game {game.id} is no longer at version {expected_version}")

        with conflicts_as_write_conflict(f"game {game.id}"):
            _SAVE_GAME.later(self._c, [values], check)
        self._write_entries(game)
        self._write_invitations(game)
        self.written.append(game)

    def committed(self) -> None:
        """After the commit: what was written may now be served (as copies)."""
        if self._cache is not None:
            for game in self.written:
                self._cache.put(game)

    def stalled_bot_games(self, before: datetime, limit: int) -> list[str]:
        rows = self._c.execute(_STALLED_BOTS, {"before": before, "n": limit})
        return [r[0] for r in rows]

    def due_deadlines(self, now: datetime, limit: int) -> list[str]:
        rows = self._c.execute(_DUE_DEADLINES, {"now": now, "n": limit})
        return [r[0] for r in rows]

    def next_deadline(self, after: datetime) -> datetime | None:
        found: datetime | None = self._c.execute(_NEXT_DEADLINE, {"after": after}).scalar()
        return found

    def open_quick_play(self, key: str, limit: int) -> list[str]:
        return [r[0] for r in self._c.execute(_OPEN_QUICK_PLAY, {"k": key, "n": limit})]

    def due_bot_fills(self, now: datetime, limit: int) -> list[str]:
        return [r[0] for r in self._c.execute(_DUE_FILLS, {"now": now, "n": limit})]

    def open_lobbies(self, host: str) -> int:
        count: int = self._c.execute(_OPEN_LOBBIES, {"p": host}).scalar_one()
        return count

    def quick_play_waits(self, player_id: str) -> int:
        stmt = _QUICK_PLAY_WAITS[self._c.dialect.name]
        count: int = self._c.execute(stmt, {"p": player_id}).scalar_one()
        return count

    def due_abandonments(self, now: datetime, limit: int) -> list[str]:
        return [r[0] for r in self._c.execute(_DUE_ABANDONMENTS, {"now": now, "n": limit})]

    def rated_games(self, after: str | None, limit: int) -> list[str]:
        q = sa.select(_G.id).where(_G.rated, _G.status == GameStatus.FINISHED.value)
        if after is not None:
            q = q.where(_G.id > after)
        return list(self._c.execute(q.order_by(_G.id).limit(limit)).scalars())

    def page(
        self, status: GameStatus | None, before: tuple[datetime, str] | None, limit: int
    ) -> Page:
        if limit < 0:
            raise ValueError("limit must not be negative")
        stmt = _GAME_NEWEST
        if status is not None:
            stmt = stmt.where(_G.status == status.value)
        if before is not None:
            at, game_id = sa.literal(before[0], _G.created_at.type), sa.literal(before[1])
            stmt = stmt.where(sa.tuple_(_G.created_at, _G.id) < sa.tuple_(at, game_id))
        rows = self._c.execute(stmt.limit(limit + 1)).all()
        return Page([m.summary_from_row(r._mapping) for r in rows[:limit]], len(rows) > limit)

    def live(self, limit: int) -> list[LiveGame]:
        rows = self._c.execute(_LIVE, {"n": limit}).mappings().all()
        return [m.live_from_row(r) for r in rows]


class SqlEventLog(_Repo):
    """The log keeps each event as every audience sees it (R11)."""

    def __init__(self, conn: sa.Connection) -> None:
        super().__init__(conn)
        self.appended: list[LoggedEvent] = []

    def append(self, events: Sequence[LoggedEvent]) -> None:
        what = f"events of game {events[0].game_id}" if events else ""
        self._insert(game_events, [m.event_to_row(e) for e in events], what)
        self.appended.extend(events)

    def read(
        self, game_id: str, after_seq: int, limit: int, seat: int | None, *, causes: bool = False
    ) -> list[LoggedEvent]:
        if limit < 0:
            raise ValueError("limit must not be negative")
        rows = self._c.execute(_EVENTS_AFTER, {"g": game_id, "after": after_seq, "n": limit})
        return [m.event_from_row(r._mapping, seat, causes=causes) for r in rows]

    def read_audiences(
        self, game_id: str, after_seq: int, limit: int, seat_count: int, *, causes: bool = False
    ) -> list[ExportedEvent]:
        if limit < 0:
            raise ValueError("limit must not be negative")
        rows = self._c.execute(_EVENTS_AFTER, {"g": game_id, "after": after_seq, "n": limit})
        return [m.audiences_from_row(r._mapping, seat_count, causes=causes) for r in rows]


class SqlIdempotencyStore(_Repo):
    def get(self, player_id: str, key: str) -> IdempotencyRecord | None:
        row = _KEY.first(self._c, {"p": player_id, "k": key})
        return None if row is None else m.idempotency_from_row(row)

    def put(self, record: IdempotencyRecord) -> None:
        what = f"idempotency key {record.key!r} of player {record.player_id}"
        self._insert(idempotency_keys, [m.idempotency_to_row(record)], what)

    def discard(self, player_id: str, key: str) -> None:
        self._c.execute(_DISCARD_KEY, {"p": player_id, "k": key})

    def delete_expired(self, now: datetime, limit: int) -> int:
        return self._c.execute(_EXPIRED_KEYS, {"now": now, "n": limit}).rowcount


class SqlBoosterRepository(_Repo):
    def add(self, record: BoosterRecord) -> None:
        self._insert(booster_packs, [m.booster_to_row(record)], f"booster pack {record.id}")

    def of_player(self, player_id: str) -> list[BoosterRecord]:
        rows = self._c.execute(_PACKS_OF, {"p": player_id})
        return [m.booster_from_row(r._mapping) for r in rows]

    def page_of_player(
        self, player_id: str, after: tuple[datetime, str] | None, limit: int
    ) -> PackPage:
        if limit < 0:
            raise ValueError("limit must not be negative")
        stmt = _PACKS_OF
        if after is not None:
            at, pack_id = sa.literal(after[0], _B.opened_at.type), sa.literal(after[1])
            stmt = stmt.where(sa.tuple_(_B.opened_at, _B.id) > sa.tuple_(at, pack_id))
        rows = self._c.execute(stmt.limit(limit + 1), {"p": player_id}).all()
        total = self._c.execute(_PACKS_COUNTED, {"p": player_id}).scalar_one()
        items = [m.booster_from_row(r._mapping) for r in rows[:limit]]
        return PackPage(items, len(rows) > limit, total)

    def opened_since(self, player_id: str, since: datetime, limit: int) -> list[datetime]:
        rows = self._c.execute(_PACKS_SINCE, {"p": player_id, "since": since, "n": limit})
        return [r[0] for r in rows]


_N = notifications.c
_C = notice_counters.c


def _take_seqs(insert: Any) -> Any:
    """Add ``n`` to the player's counter (made at ``n``), its new value back."""
    stmt = insert(notice_counters).values(player_id=sa.bindparam("p"), last_seq=sa.bindparam("n"))
    return stmt.on_conflict_do_update(
        index_elements=[_C.player_id], set_={"last_seq": _C.last_seq + stmt.excluded.last_seq}
    ).returning(_C.last_seq)


_TAKE_NOTICE_SEQS = {
    "postgresql": DirectStatement(_take_seqs(postgresql.insert), ["p", "n"]),
    "sqlite": DirectStatement(_take_seqs(sqlite.insert), ["p", "n"]),
}
_LAST_SEQ = sa.select(_C.last_seq).where(_C.player_id == sa.bindparam("p"))
_MARK_READ = (
    sa.update(notifications)
    .where(
        _N.player_id == sa.bindparam("p"),
        _N.seq <= sa.bindparam("upto"),
        _N.read_at.is_(None),
    )
    .values(read_at=sa.bindparam("at"))
)


# The oldest read ones first (ix_notifications_read_at), a batch at a time.
_DELETE_READ = sa.delete(notifications).where(
    sa.tuple_(_N.player_id, _N.seq).in_(
        sa.select(_N.player_id, _N.seq)
        .where(_N.read_at.is_not(None), _N.read_at < sa.bindparam("before"))
        .order_by(_N.read_at)
        .limit(sa.bindparam("n"))
    )
)


def _notifications_after(unread: bool) -> sa.Select[Any]:
    stmt = (
        sa.select(notifications)
        .where(_N.player_id == sa.bindparam("p"), _N.seq > sa.bindparam("after"))
        .order_by(_N.seq)
        .limit(sa.bindparam("n"))
    )
    return stmt.where(_N.read_at.is_(None)) if unread else stmt


_NOTIFICATIONS_AFTER = {u: _notifications_after(u) for u in (False, True)}


def _took(last: dict[str, int], player_id: str, cursor: Any) -> None:
    """A counter's upsert answered: the player's last seq now taken."""
    last[player_id] = int(cursor.fetchone()[0])


class SqlNotificationStore(_Repo):
    """Notifications (issue #25). A transaction's notices wait for its
    commit (:meth:`flush`): each player's seqs are then taken from their
    ``notice_counters`` row in one upsert ``... RETURNING``, players in id
    order, which holds the rows to the commit. No transaction holding a
    counter waits for anything but another counter, taken in the same order:
    no deadlock, with the claims of ``players`` (0051) or among counters."""

    def __init__(self, conn: sa.Connection, webhooks: SqlWebhookStore) -> None:
        super().__init__(conn)
        self._webhooks = webhooks
        self._pending: list[tuple[str, Notice, datetime]] = []
        self.added: list[Notification] = []

    def add(self, at: datetime, notices: Sequence[tuple[str, Notice]]) -> None:
        self._pending += [(player_id, notice, at) for player_id, notice in notices]

    def flush(self) -> None:
        """Number and store the transaction's notices (just before its commit)."""
        pending, self._pending = self._pending, []
        by_player: dict[str, list[tuple[Notice, datetime]]] = {}
        for player_id, notice, at in pending:
            by_player.setdefault(player_id, []).append((notice, at))
        if not by_player:
            return
        take = _TAKE_NOTICE_SEQS[self._c.dialect.name]
        last: dict[str, int] = {}
        for player_id in sorted(by_player):
            counted = {"p": player_id, "n": len(by_player[player_id])}
            with conflicts_as_write_conflict(f"notifications of {player_id}"):
                take.later(self._c, [counted], partial(_took, last, player_id))
        endpoints = self._webhooks.live_endpoints()  # read with the counters
        settle(self._c)  # the counters answered, whatever the read above did
        made: list[Notification] = []
        for player_id in sorted(by_player):
            mine = by_player[player_id]
            first = last[player_id] - len(mine) + 1
            made += [Notification(player_id, first + i, at, n) for i, (n, at) in enumerate(mine)]
        self._insert(notifications, [m.notification_row(n) for n in made], "notifications")
        self.added += made
        if endpoints:
            # the outbox (0064): read only when an endpoint is live
            push, external = self._webhooks.pushed_and_external({n.player_id for n in made})
            self._webhooks.enqueue(outbox(endpoints, made, push, external))

    def forget(self) -> None:
        self._pending.clear()
        self.added.clear()

    def last_seq(self, player_id: str) -> int:
        found = self._c.execute(_LAST_SEQ, {"p": player_id}).scalar()
        return 0 if found is None else int(found)

    def page(
        self, player_id: str, after_seq: int, limit: int, unread_only: bool
    ) -> list[Notification]:
        values = {"p": player_id, "after": after_seq, "n": limit}
        rows = self._c.execute(_NOTIFICATIONS_AFTER[unread_only], values).mappings().all()
        return [m.notification_from_row(r) for r in rows]

    def mark_read(self, player_id: str, upto_seq: int, at: datetime) -> int:
        done = self._c.execute(_MARK_READ, {"p": player_id, "upto": upto_seq, "at": at})
        return done.rowcount

    def delete_read(self, before: datetime, limit: int) -> int:
        return self._c.execute(_DELETE_READ, {"before": before, "n": limit}).rowcount
