"""One scenario of a player's games (issue #24), run on the fakes
(tests/usecases/test_my_games.py) and on SQLite and PostgreSQL
(tests/integration/test_my_games_on_sql.py): a lobby, a timed game waiting
for the player, one waiting for another, one finished."""

from __future__ import annotations

from dataclasses import dataclass

from domain.bots.strategy import Strategy
from domain.clocks import fallback_moves
from domain.game.engine import to_act
from domain.game.options import GameOptions
from domain.my_games import MyGame
from domain.records import GameStatus
from domain.services.bots import drive_bots
from domain.services.deps import Deps
from domain.services.games import NewGame, add_bot, create_game, join_game, start_game
from domain.services.my_games import my_games, my_stats
from domain.services.play import act
from domain.services.players import create_player
from domain.services.transaction import Request


def _req(player_id: str) -> Request:
    return Request(player_id, "op", {})


@dataclass
class Built:
    ann: str
    bob: str
    lobby: str
    mine: str  # waits for ann (timed)
    theirs: str  # waits for bob
    done: str  # finished; ann's seat played out by a bot after she left


async def build(deps: Deps) -> Built:
    ann, bob, cat = [(await create_player(deps, n)).player.id for n in ("ann", "bob", "cat")]
    timed = GameOptions(turn_seconds=600)
    lobby = (await create_game(deps, _req(ann), NewGame(3))).game_id
    theirs = (await create_game(deps, _req(bob), NewGame(3, timed, rat_seat=0))).game_id
    for who in (ann, cat):
        await join_game(deps, _req(who), theirs, None)
    await start_game(deps, _req(bob), theirs)  # bob (seat 0, the Rat) leads
    mine = (await create_game(deps, _req(ann), NewGame(3, timed, rat_seat=0))).game_id
    for who in (bob, cat):
        await join_game(deps, _req(who), mine, None)
    await start_game(deps, _req(ann), mine)  # ann leads: her turn, with a deadline
    done = (await create_game(deps, _req(ann), NewGame(3, rat_seat=1))).game_id
    for strategy in (Strategy.GREEDY, Strategy.RANDOM):
        await add_bot(deps, _req(ann), done, strategy, None)
    await start_game(deps, _req(ann), done)
    await play_out(deps, ann, done)
    return Built(ann, bob, lobby, mine, theirs, done)


async def play_out(deps: Deps, player_id: str, game_id: str) -> None:
    """The player's first legal move (never a message) whenever the game
    waits for them, the bots' between, to the end."""
    for _ in range(500):
        await drive_bots(deps, game_id)
        with deps.uow() as uow:
            game = uow.games.get(game_id)
        assert game is not None and game.state is not None
        if game.status is not GameStatus.RUNNING:
            return
        seat = to_act(game.state)
        assert seat is not None and seat == game.seat_of(player_id), "a bot stalled"
        await act(deps, _req(player_id), game_id, fallback_moves(game.state, seat)[0])
    raise AssertionError("the game did not end")


async def all_pages(deps: Deps, player_id: str, size: int) -> list[MyGame]:
    """Every game of the player's list, a page of ``size`` at a time."""
    seen: list[MyGame] = []
    after = None
    while True:
        page = await my_games(deps, player_id, None, None, after, size)
        seen += page.items
        if not page.has_next:
            return seen
        after = (page.items[-1].entry.rank, page.items[-1].entry.game_id)


async def check(deps: Deps, b: Built) -> None:
    """What the scenario's lists must be, on any adapter."""
    listed = (await my_games(deps, b.ann, None, None, None, 20)).items
    ids = [g.entry.game_id for g in listed]
    assert ids[0] == b.mine and set(ids) == {b.lobby, b.mine, b.theirs, b.done}, ids
    first = listed[0].entry
    assert first.your_turn and first.deadline is not None and first.seat == 0
    others = [g.entry for g in listed[1:]]
    assert not any(e.your_turn for e in others)
    assert [e.updated_at for e in others] == sorted((e.updated_at for e in others), reverse=True)
    names = {s.name for s in listed[0].seats}
    assert names == {"ann", "bob", "cat"}, listed[0].seats
    assert [g.entry.game_id for g in await all_pages(deps, b.ann, 1)] == ids

    turn = (await my_games(deps, b.ann, None, True, None, 20)).items
    assert [g.entry.game_id for g in turn] == [b.mine]
    not_turn = (await my_games(deps, b.ann, None, False, None, 20)).items
    assert [g.entry.game_id for g in not_turn] == ids[1:]
    bobs = (await my_games(deps, b.bob, None, True, None, 20)).items
    assert [g.entry.game_id for g in bobs] == [b.theirs]

    (finished,) = (await my_games(deps, b.ann, GameStatus.FINISHED, None, None, 20)).items
    e = finished.entry
    assert e.game_id == b.done and e.score is not None and e.place is not None
    lobby = (await my_games(deps, b.ann, GameStatus.LOBBY, None, None, 20)).items
    assert [g.entry.game_id for g in lobby] == [b.lobby]
    assert [s.bot is None for s in finished.seats].count(True) == 1  # ann's own seat

    (line,) = await my_stats(deps, b.ann)
    assert (line.format, line.seat_count, line.played, line.won) == (
        "singleton",
        3,
        1,
        int(bool(e.won)),
    )
    assert await my_stats(deps, b.bob) == []
