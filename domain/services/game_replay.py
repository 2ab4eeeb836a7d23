"""Use case: a finished game step by step, every seat's hand shown (R11:
what each seat saw of the deal is revealed once the game has ended, and
only then; the log ``mmk export`` reads, without the messages' words:
docs/decisions/0067)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from domain.errors import BadRequest
from domain.game.events import Event, MessageDelivered, MessageSent
from domain.log import ExportedEvent
from domain.services.deps import Deps
from domain.services.queries import check_ended_by_rules, check_limit, load_seen

WORDS: tuple[type[Event], ...] = (MessageSent, MessageDelivered)
"""Events whose private part is a player's words, not the deal's: a
message's text stays its readers' for good (R5.4 has no end), so a replay
shows these as the public saw them. The deal's secrets are no longer
secrets once the game has ended: the revealed seed gives them all (0040)."""


def replayed(e: ExportedEvent) -> ExportedEvent:
    """An event as a replay shows it to everyone: each seat's projection,
    but a message's words only as the public saw them."""
    if isinstance(e.public, WORDS):
        return replace(e, seats=(e.public,) * len(e.seats))
    return e


@dataclass(frozen=True, slots=True)
class ReplayPage:
    """Steps of a finished game's log: each event as the public and each
    seat saw it (a seat's own projection, or the public one)."""

    game_id: str
    steps: list[ExportedEvent]
    has_more: bool
    seat_count: int


async def read_replay(
    deps: Deps, game_id: str, player_id: str | None, after_seq: int, limit: int
) -> ReplayPage:
    """The steps after ``after_seq`` of a game the rules ended, as each
    audience saw them, in one read of the log. A game still in its lobby is
    ``GAME_NOT_STARTED``; a running one, and an abandoned one (its hands
    were never played out, as ``mmk export`` refuses it), are
    ``BAD_INPUT``; a private game is ``NOT_FOUND`` to those who may not see
    it (0062)."""
    check_limit(limit)
    if after_seq < 0:
        raise BadRequest("afterSeq is 0 or more")

    def tx() -> ReplayPage:
        with deps.uow() as uow:
            game = load_seen(uow, game_id, player_id)
            check_ended_by_rules(game, "a replay")
            steps = uow.events.read_audiences(game_id, after_seq, limit + 1, game.seat_count)
            page = [replayed(e) for e in steps[:limit]]
            return ReplayPage(game_id, page, len(steps) > limit, game.seat_count)

    return await deps.run(tx)
