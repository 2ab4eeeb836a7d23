"""The one publisher: after a commit, each audience gets its own projection
of the new events on its own channel (R11), lobby screens hear of games
created, filling, started and finished, and the bots are woken when one of
them must act."""

from __future__ import annotations

from collections.abc import Sequence

from domain.channels import LOBBY, game_channel, notice_channel
from domain.game.events import GameEnded, GameStarted
from domain.lobby import LOBBY_EVENTS
from domain.log import LoggedEvent
from domain.ports import BusMessage
from domain.records import GameRecord, LobbyUpdate, NewEvents, Visibility
from domain.services.bot_turn import bot_to_act
from domain.services.deps import Deps

LISTED = (*LOBBY_EVENTS, GameStarted, GameEnded)
"""The events that change what the lobby listing shows of a game."""


def messages(game: GameRecord, events: Sequence[LoggedEvent]) -> list[tuple[str, BusMessage]]:
    """Every audience's projection of ``events`` on its channel, in order."""
    public_channel = game_channel(game.id, None)
    seat_channels = [game_channel(game.id, seat) for seat in range(game.seat_count)]
    out: list[tuple[str, BusMessage]] = []
    for e in events:
        public = e.seen_by(None)
        out.append((public_channel, public))
        own = e.event.private_to()
        for seat, channel in enumerate(seat_channels):
            out.append((channel, e.seen_by(seat) if seat in own else public))
    listed = game.visibility is Visibility.PUBLIC  # the others are in no listing (0062)
    if listed and any(isinstance(e.event, LISTED) for e in events):
        out.append((LOBBY, LobbyUpdate.of(game)))
    return out


async def after_commit(deps: Deps, news: Sequence[NewEvents], wake_bots: bool = True) -> None:
    if any(n.told for n in news):
        deps.wake_webhooks()  # their messages are in the outbox (0064)
    for n in news:
        told = [(notice_channel(t.player_id), t) for t in n.told]  # each to its player alone
        await deps.bus.publish([*messages(n.game, n.events), *told])
        if wake_bots and bot_to_act(n.game) is not None:
            deps.schedule_bots(n.game.id)
