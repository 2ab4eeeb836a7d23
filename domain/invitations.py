"""Private games and invitations (issue #24, docs/decisions/0062): who may
see a game and who may sit in it, the invite code, the host's invitations.

A game's visibility is chosen at its creation and never changes:

- ``PUBLIC``: listed in ``games`` and on the lobby feed; anyone may watch it
  and take a free seat.
- ``UNLISTED``: in no listing; anyone who knows its id may watch it; a seat
  is taken with its invite code, or by invitation.
- ``PRIVATE``: in no listing; only its host, its players (seated, or a seat
  kept for them) and its invited players may see it at all; to anyone else
  it does not exist (``NOT_FOUND``, as a game that never was). A seat is
  taken by invitation, or with its invite code.

The invite code is the game's secret: never in an event, shown only to the
host and the seated players. Pending invitations are kept on the game; an
invitation ends when its player takes a seat, declines, or the host cancels
it; once the game has started, the invited who did not sit may still watch.
"""

from __future__ import annotations

import hmac
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated

from domain.errors import BadRequest, Forbidden, NotFound
from domain.game.errors import IllegalAction
from domain.game.events import Event
from domain.records import GameRecord, GameStatus, Invitation, Visibility

CODE_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
"""Crockford's base 32: no I, L, O or U, so a code read aloud is not misread."""
CODE_LENGTH = 10
"""Characters of an invite code: 50 bits, not guessed at any rate the
server's budgets allow."""
MAX_INVITEES = 20
"""Players one ``invitePlayers`` call may name."""
MAX_INVITED = 50
"""Pending invitations one game holds at most (whatever the hosts' cap)."""
NO_SUCH_CODE = "no game has this invite code: ask its host for the current one"


@dataclass(frozen=True, slots=True)
class PlayersInvited(Event):
    """The host invited players to the game (they find it in `me.invitations`)."""

    player_ids: Annotated[tuple[str, ...], "The players invited"]


@dataclass(frozen=True, slots=True)
class InvitationDeclined(Event):
    """An invited player declined."""

    player_id: Annotated[str, "The player who declined"]


@dataclass(frozen=True, slots=True)
class InvitationCancelled(Event):
    """The host withdrew an invitation."""

    player_id: Annotated[str, "The player no longer invited"]


@dataclass(frozen=True, slots=True)
class InviteCodeChanged(Event):
    """The host rotated or cleared the invite code (never shown here: the
    host and the seated players read it in `Game.inviteCode`)."""

    cleared: Annotated[bool, "true: the game has no invite code now"]


INVITATION_EVENTS: tuple[type[Event], ...] = (
    PlayersInvited,
    InvitationDeclined,
    InvitationCancelled,
    InviteCodeChanged,
)


def normal_code(code: str) -> str:
    """An invite code as typed (any case, with spaces or dashes) in its one
    form, or ``BAD_INPUT``."""
    normal = code.replace("-", "").replace(" ", "").upper()
    if len(normal) != CODE_LENGTH or any(c not in CODE_ALPHABET for c in normal):
        raise BadRequest(
            f"an invite code is {CODE_LENGTH} letters and digits (Crockford base 32), "
            f"not {code[:40]!r}"
        )
    return normal


def invited(game: GameRecord, player_id: str | None) -> Invitation | None:
    """The player's pending invitation to the game, if any."""
    for i in game.invitations:
        if i.player_id == player_id:
            return i
    return None


def is_player(game: GameRecord, player_id: str | None) -> bool:
    """The host, a seated player, or one a seat is kept for."""
    if player_id is None:
        return False
    return (
        player_id == game.host or game.seat_of(player_id) is not None or player_id in game.reserved
    )


def may_see(game: GameRecord, player_id: str | None) -> bool:
    """Whether ``player_id`` (None: nobody signed in) may see the game: any
    but a private one; a private one, its players and invited players."""
    if game.visibility is not Visibility.PRIVATE:
        return True
    return is_player(game, player_id) or invited(game, player_id) is not None


def check_may_see(game: GameRecord, player_id: str | None) -> None:
    """``NOT_FOUND`` (as for a game that never was) unless :func:`may_see`."""
    if not may_see(game, player_id):
        raise NotFound(f"no game {game.id}")


def check_may_join(game: GameRecord, player_id: str, code: str | None) -> None:
    """A public game: anyone. Another: its host, a player a seat is kept
    for, an invited player, or anyone with the game's current code."""
    if game.visibility is Visibility.PUBLIC or is_player(game, player_id):
        return
    if invited(game, player_id) is not None:
        return
    if code is not None:
        current = game.invite_code
        if current is not None and hmac.compare_digest(code, current):
            return
        raise NotFound(NO_SUCH_CODE)  # rotated or cleared since it was looked up
    check_may_see(game, player_id)
    raise Forbidden(
        f"this {game.visibility.value} game is joined by invitation or with its invite code "
        "(joinByInviteCode)"
    )


def take_invitation(game: GameRecord, player_id: str) -> None:
    """A player who sits ends their invitation (no event: the seat says it)."""
    game.invitations = [i for i in game.invitations if i.player_id != player_id]


def _host_in_lobby(game: GameRecord, player_id: str, what: str) -> None:
    if player_id != game.host:
        raise Forbidden(f"only the host may {what}")
    if game.status is not GameStatus.LOBBY:
        raise IllegalAction(f"{what}: only before the game starts")


def check_invitees(player_ids: Collection[str]) -> None:
    """1 to :data:`MAX_INVITEES` players at a time, each named once."""
    ids = list(player_ids)
    if not 1 <= len(ids) <= MAX_INVITEES:
        raise BadRequest(f"invite 1 to {MAX_INVITEES} players at a time, not {len(ids)}")
    if len(set(ids)) != len(ids):
        raise BadRequest("a player is named twice")


def invite(
    game: GameRecord,
    host: str,
    player_ids: Collection[str],
    known: Collection[str],
    at: datetime,
) -> list[Event]:
    """The host invites ``player_ids`` (``known``: those that are players).
    Each must be a player, not the host, not seated; one already invited
    stays so (asked again: nothing new). Refused whole, or done whole."""
    _host_in_lobby(game, host, "invite players")
    ids = list(player_ids)
    check_invitees(ids)
    for p in ids:
        if p not in known:
            raise BadRequest(f"no player {p[:64]}")
        if p == host:
            raise BadRequest("you host this game: you need no invitation")
        if game.seat_of(p) is not None:
            raise BadRequest(f"player {p} holds a seat in this game already")
    new = [p for p in ids if invited(game, p) is None]
    if not new:
        return []
    if len(game.invitations) + len(new) > MAX_INVITED:
        raise IllegalAction(
            f"a game holds {MAX_INVITED} invitations at most: it has {len(game.invitations)}; "
            "cancel some first"
        )
    game.invitations = [*game.invitations, *(Invitation(p, host, at) for p in new)]
    return [PlayersInvited(tuple(new))]


def decline(game: GameRecord, player_id: str) -> list[Event]:
    """The invited player declines, before the start: they may no longer see
    a private game (after the start, an invitation is only a right to
    watch: nothing to decline, and the log has no lobby events then)."""
    if invited(game, player_id) is None:
        check_may_see(game, player_id)
        raise NotFound("you have no invitation to this game")
    if game.status is not GameStatus.LOBBY:
        raise IllegalAction("the game has started: there is no invitation to decline now")
    take_invitation(game, player_id)
    return [InvitationDeclined(player_id)]


def cancel(game: GameRecord, host: str, player_id: str) -> list[Event]:
    """The host withdraws a pending invitation."""
    _host_in_lobby(game, host, "cancel invitations")
    if invited(game, player_id) is None:
        raise NotFound(f"player {player_id[:64]} has no invitation to this game")
    take_invitation(game, player_id)
    return [InvitationCancelled(player_id)]


def set_code(game: GameRecord, host: str, code: str | None) -> list[Event]:
    """The host rotates (a new ``code``) or clears (None) the invite code of
    an unlisted or private game."""
    _host_in_lobby(game, host, "change the invite code")
    if game.visibility is Visibility.PUBLIC:
        raise BadRequest("a public game has no invite code: anyone may join it")
    game.invite_code = code
    return [InviteCodeChanged(code is None)]
