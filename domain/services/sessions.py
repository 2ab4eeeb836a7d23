"""Use cases: a player's sessions, one live MMK token each (issue #24).

A player may hold several tokens at once (a phone, a tablet, a TV paired
with ``createSession``, one an app's backend issued): each is a session
with an id, an optional label, when it was created and when it was last
used. Ending one (``revokeSession``, ``revokeToken``) ends that token only,
on every instance (docs/decisions/0053).
"""

from __future__ import annotations

from dataclasses import dataclass

from domain.errors import BadRequest, NotFound, Unauthenticated
from domain.records import SessionRecord
from domain.services.auth import session_id, token_hash
from domain.services.deps import Deps
from domain.services.transaction import Tx, no_load, transact, unkeyed

MAX_SESSIONS = 20
"""[decision] Live tokens a player holds at most: a new one beyond ends the
least recently used (its sockets close), as an app's backend that issues a
token per sign-in would otherwise grow them without end."""
MAX_LABEL = 60
USE_BATCH = 500
"""Sessions marked used in one statement."""


@dataclass(frozen=True, slots=True)
class NewSession:
    """A new session and its token (shown once, never stored)."""

    session: SessionRecord
    token: str


@dataclass(frozen=True, slots=True)
class Sessions:
    """A player's live sessions, the most recently used first, and which of
    them the caller's token is (None: a provider's JWT, issue #24)."""

    items: list[SessionRecord]
    current: str | None


def check_label(label: str | None) -> str | None:
    """A client's label for a session (``"Anna's phone"``), or none."""
    if label is None:
        return None
    label = label.strip()
    if not label:
        return None
    if len(label) > MAX_LABEL or not label.isprintable():
        raise BadRequest(f"a session label has at most {MAX_LABEL} printable characters")
    return label


def open_session(
    tx: Tx, player_id: str, digest: str, label: str | None, keep: str | None = None
) -> tuple[SessionRecord, list[str]]:
    """Store a session holding the token of ``digest``; it, and the hashes
    of the sessions the cap (:data:`MAX_SESSIONS`) ended to make room, to
    announce once committed. The session of hash ``keep`` (the caller's) is
    never the one ended: its stored last use may lag its real one."""
    tx.claim(player_id)  # two at once count one after the other (0051)
    now = tx.now()
    players = tx.uow.players
    held = players.sessions_of(player_id)
    if keep is not None and (mine := players.by_token_hash(keep)) is not None:
        held = [mine[1]] + [s for s in held if s.id != mine[1].id]
    ended = [
        h
        for old in held[MAX_SESSIONS - 1 :]
        if (h := players.end_session(player_id, old.id)) is not None
    ]
    session = SessionRecord(session_id(digest), player_id, label, now, now)
    players.add_session(session, digest)
    return session, ended


async def announce(deps: Deps, digests: list[str]) -> None:
    """Once the change is committed: the ended tokens' digests (their stored
    hashes, never the tokens) to every instance, which end their open
    connections and streams; this instance's at once (docs/decisions/0053)."""
    if deps.revocations is not None:
        for digest in digests:
            await deps.revocations.announce(digest)


async def create_session(
    deps: Deps, player_id: str, label: str | None, caller: str | None = None
) -> NewSession:
    """Another token for the caller (a second device), with its own session.
    The caller's own token (``caller``) must be an MMK token: a provider's
    JWT makes no token that would outlive it (it ends at its expiry, or at
    the provider). Beyond the cap the least recently used session ends,
    never the caller's."""
    if caller is not None and deps.identity is not None and deps.identity.recognises(caller):
        raise BadRequest(
            "this is your identity provider's token: sign in on the other device with it too "
            "(a session's token would outlive it)"
        )
    clean = check_label(label)
    token = deps.ids.new_token()
    digest = token_hash(token)
    keep = None if caller is None else token_hash(caller)

    def add(tx: Tx, _: None) -> tuple[SessionRecord, list[str]]:
        tx.player(player_id)
        return open_session(tx, player_id, digest, clean, keep)

    session, ended = await transact(deps, None, unkeyed(no_load, add))
    await announce(deps, ended)
    return NewSession(session, token)


async def list_sessions(deps: Deps, player_id: str, token: str | None) -> Sessions:
    """The caller's sessions, and which one is the caller's."""
    digest = None if token is None else token_hash(token)

    def tx() -> Sessions:
        with deps.uow() as uow:
            found = None if digest is None else uow.players.by_token_hash(digest)
            current = found[1].id if found and found[0].id == player_id else None
            return Sessions(uow.players.sessions_of(player_id), current)

    return await deps.run(tx)


async def revoke_session(deps: Deps, player_id: str, session_id: str) -> str:
    """End one of the caller's sessions: its token stops working at once, on
    every instance. Another player's session, or one ended already, is
    ``NOT_FOUND`` (the same answer: ids are not probed). The ended token's
    digest."""

    def end(tx: Tx, _: None) -> str:
        digest = tx.uow.players.end_session(player_id, session_id)
        if digest is None:
            raise NotFound("you have no such session (ended already?)")
        return digest

    digest = await transact(deps, None, unkeyed(no_load, end))
    await announce(deps, [digest])
    return digest


async def record_use(deps: Deps) -> int:
    """Write when the sessions noted since the last call signed in (now, to
    within the interval of the calls: ``MMK_SESSION_USE_INTERVAL``), in one
    statement per :data:`USE_BATCH`; how many sessions it marked."""
    ids = list(deps.session_use.take())
    for at in range(0, len(ids), USE_BATCH):
        batch = ids[at : at + USE_BATCH]

        def mark(tx: Tx, _: None, batch: list[str] = batch) -> None:
            tx.uow.players.touch_sessions(batch, tx.now())

        try:
            await transact(deps, None, unkeyed(no_load, mark))
        except BaseException:
            for left in ids[at:]:  # the next call writes them
                deps.session_use.note(left)
            raise
    return len(ids)


async def revoke_token(deps: Deps, player_id: str, token: str) -> None:
    """End the session of the presented token (sign out)."""

    def end(tx: Tx, _: None) -> None:
        found = tx.uow.players.by_token_hash(token_hash(token))
        if found is None or found[0].id != player_id:
            raise Unauthenticated("this token was rotated or revoked")
        tx.uow.players.end_session(player_id, found[1].id)

    await transact(deps, None, unkeyed(no_load, end))
    await announce(deps, [token_hash(token)])
