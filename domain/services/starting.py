"""A game's start as one change with what filled it (R4, docs/decisions/0048):
the host's start, a quick-play game that starts itself when full, shared
by the lobby's and quick play's use cases."""

from __future__ import annotations

from domain import lobby
from domain.game.boosters import BoosterPack
from domain.game.cards import Card
from domain.game.events import Event
from domain.game.options import Format
from domain.records import BoosterRecord, GameRecord
from domain.services.transaction import Change, Tx


def starting_if_full(tx: Tx, game: GameRecord, events: list[Event]) -> Change:
    """``events``, then, if they filled a quick-play game, its start: a
    quick-play game starts itself when full (docs/decisions/0048)."""
    if game.quick_play is None or game.seats_taken < game.seat_count:
        return Change(events)
    return starting(tx, game, events)


def starting(tx: Tx, game: GameRecord, before: list[Event], by: str | None = None) -> Change:
    """``before`` (seats taken), then the start of the now full game, as
    one change: the start's cause goes on its first event. ``by``: the
    player who starts it (the host's check, R4); None: the game itself."""
    started = lobby.start(game, game.host if by is None else by, _collections(tx, game))
    for record in _kept_packs(tx, game, started.setup.packs):
        tx.add_booster(record)
    return Change([*before, *started.events], started.cause, len(before))


def _collections(tx: Tx, game: GameRecord) -> list[list[Card]] | None:
    """R3.3: each seated person's opened packs; bots bring none."""
    if game.options.format is not Format.FORMER_SEALED:
        return None
    out: list[list[Card]] = []
    for o in game.seats:
        if o is None or o.player_id is None:
            out.append([])
        else:
            packs = tx.uow.boosters.of_player(o.player_id)
            out.append([d for r in packs for d in r.pack.numbered])
    return out


def _kept_packs(tx: Tx, game: GameRecord, packs: dict[int, BoosterPack]) -> list[BoosterRecord]:
    """R3.2: a seated person's sealed pack joins their collection."""
    out = []
    for seat, pack in packs.items():
        o = game.seats[seat]
        if o is not None and o.player_id is not None:
            out.append(BoosterRecord(tx.new_id(), o.player_id, pack, tx.now(), game.id))
    return out
