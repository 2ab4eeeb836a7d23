"""Use cases wired to in-memory fakes of every port."""

from __future__ import annotations

from datetime import timedelta

import pytest

from domain.bots.strategy import Strategy
from domain.game.commands import SendMessage
from domain.game.engine import to_act
from domain.game.legal import legal_actions
from domain.game.messaging import message_targets
from domain.records import GameStatus
from domain.services.games import NewGame, add_bot, create_game, join_game, start_game
from domain.services.play import act
from domain.services.players import create_player
from domain.services.timeouts import sweep_deadlines
from domain.services.transaction import Request
from tests.fakes import Harness, harness


@pytest.fixture
def h() -> Harness:
    return harness()


def req(player_id: str, op: str = "op", **args: object) -> Request:
    return Request(player_id, op, dict(args))


async def player(h: Harness, name: str = "ann") -> str:
    return (await create_player(h.deps, name)).player.id


async def started_game(
    h: Harness, people: int = 2, seats: int = 4, **spec: object
) -> tuple[str, list[str]]:
    """A started game: ``people`` players at seats 0.., bots elsewhere."""
    ids = [await player(h, f"p{i}") for i in range(people)]
    game = await create_game(h.deps, req(ids[0]), NewGame(seats, **spec))  # type: ignore[arg-type]
    for pid in ids[1:]:
        await join_game(h.deps, req(pid), game.game_id, None)
    for _ in range(seats - people):
        await add_bot(h.deps, req(ids[0]), game.game_id, Strategy.RANDOM, None)
    await start_game(h.deps, req(ids[0]), game.game_id)
    return game.game_id, ids


async def play_first_legal(h: Harness, game_id: str, player_at: dict[int, str]) -> None:
    """Play the game to its end: each person (``player_at``: seat -> player)
    sends the first legal action when it is their turn; bots move on their own."""
    for _ in range(5_000):
        await h.drain()
        state = h.store.games[game_id].state
        assert state is not None
        seat = to_act(state)
        if seat is None:
            break
        await act(h.deps, req(player_at[seat]), game_id, legal_actions(state, seat)[0])
    assert h.store.games[game_id].status is GameStatus.FINISHED


async def expire(h: Harness, game_id: str) -> int:
    """Let the game's running wait pass its deadline (the fake clock), then
    sweep; the timeouts logged (docs/decisions/0046)."""
    deadline = h.store.games[game_id].deadline
    assert deadline is not None
    h.clock.advance(deadline - h.clock.now() + timedelta(milliseconds=1))
    return await sweep_deadlines(h.deps)


async def people_game_with_messages(h: Harness, words: str) -> str:
    """A game of three people and a bot played to its end, every fifth step
    a message ``f"{words} {step}"`` sent by a person who may send one, the
    Rat answering one now and then (R5)."""
    game_id, ids = await started_game(h, people=3, seats=4)
    for step in range(5_000):
        await h.drain()
        state = h.store.games[game_id].state
        assert state is not None
        seat = to_act(state)
        if seat is None:
            return game_id
        cmd = legal_actions(state, seat)[0]
        senders = [s for s in range(3) if s != state.rat and message_targets(state, s)]
        if step % 5 == 0 and senders:
            seat = senders[step % len(senders)]
            cmd = SendMessage(message_targets(state, seat)[0], f"{words} {step}")
        elif seat == state.rat and step % 2:
            cmd = legal_actions(state, seat)[-1]  # a message's answer, when one is pending
        await act(h.deps, req(ids[seat]), game_id, cmd)
    raise AssertionError("the game did not end")
