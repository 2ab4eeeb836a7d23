"""Rated games on the fake ports (issue #26, docs/decisions/0065): rated
once as they end, in that transaction, for the players (a seat a bot took
over too) and the bots' strategies; the rebuild from the log equals the
live ratings; refusals change nothing."""

from __future__ import annotations

from domain.bots.strategy import Strategy
from domain.errors import ErrorCode
from domain.game.events import GameEnded
from domain.rating_pools import RatingPool
from domain.ratings import bot_subject, finishing_ranks
from domain.records import GameStatus
from domain.services.games import NewGame, add_bot, create_game, join_game, leave_game, start_game
from domain.services.leaderboards import leaderboard, rank_of, ratings_of
from domain.services.rating_rebuild import rebuild
from infra.rating_model import OpenSkillModel
from tests.fakes import Harness
from tests.usecases.conftest import play_first_legal, player, req
from tests.usecases.refused import code_of

POOL = RatingPool.SINGLETON_3_4


async def rated_game(
    h: Harness, ids: list[str], seats: int = 4, bot: Strategy = Strategy.GREEDY
) -> str:
    """A started rated game: ``ids`` at seats 0.., ``bot`` bots elsewhere."""
    game = await create_game(h.deps, req(ids[0]), NewGame(seats, rated=True))
    for pid in ids[1:]:
        await join_game(h.deps, req(pid), game.game_id, None)
    for _ in range(seats - len(ids)):
        await add_bot(h.deps, req(ids[0]), game.game_id, bot, None)
    await start_game(h.deps, req(ids[0]), game.game_id)
    return game.game_id


def ended(h: Harness, game_id: str) -> GameEnded:
    (e,) = [x.event for x in h.store.log(game_id) if isinstance(x.event, GameEnded)]
    return e


async def test_a_rated_game_rates_its_people_and_its_bots_strategy_once(h: Harness) -> None:
    ids = [await player(h, "ann"), await player(h, "bob")]
    gid = await rated_game(h, ids)
    await play_first_legal(h, gid, dict(enumerate(ids)))
    e = ended(h, gid)
    assert e.ratings is not None and [r.seat for r in e.ratings] == [0, 1, 2, 3]
    greedy = bot_subject(Strategy.GREEDY)
    stored = {s: h.store.ratings[(POOL, s)] for s in (*ids, greedy)}
    assert len(h.store.ratings) == 3  # the two GREEDY seats are one subject
    assert all(r.games == 1 for r in stored.values())
    # the values are the model's for the game's finishing order (R9.2)
    game = h.store.games[gid]
    assert game.state is not None and game.state.outcome is not None
    model = OpenSkillModel()
    want = model.rate([model.initial()] * 4, finishing_ranks(game.state.outcome))
    for seat, pid in enumerate(ids):
        assert stored[pid].skill == want[seat]
        assert e.ratings[seat].after == round(want[seat].mu * 60)
        assert e.ratings[seat].before == 1500 and e.ratings[seat].provisional
    assert stored[greedy].skill.mu == (want[2].mu + want[3].mu) / 2
    assert e.ratings[2].after == e.ratings[3].after == stored[greedy].display


async def test_the_second_game_starts_from_the_first_ones_ratings(h: Harness) -> None:
    ids = [await player(h, "ann"), await player(h, "bob")]
    first = await rated_game(h, ids)
    await play_first_legal(h, first, dict(enumerate(ids)))
    after_first = h.store.ratings[(POOL, ids[0])]
    second = await rated_game(h, ids, seats=3)
    await play_first_legal(h, second, dict(enumerate(ids)))
    e = ended(h, second)
    assert e.ratings is not None
    assert e.ratings[0].before == after_first.display and e.ratings[0].games == 2
    assert h.store.ratings[(POOL, ids[0])].games == 2


async def test_an_unrated_game_rates_nobody(h: Harness) -> None:
    ids = [await player(h, "ann"), await player(h, "bob")]
    game = await create_game(h.deps, req(ids[0]), NewGame(3))
    await join_game(h.deps, req(ids[1]), game.game_id, None)
    await add_bot(h.deps, req(ids[0]), game.game_id, Strategy.GREEDY, None)
    await start_game(h.deps, req(ids[0]), game.game_id)
    await play_first_legal(h, game.game_id, dict(enumerate(ids)))
    assert ended(h, game.game_id).ratings is None
    assert h.store.ratings == {}


async def test_a_seat_taken_over_after_its_player_left_counts_for_that_player(
    h: Harness,
) -> None:
    ids = [await player(h, "ann"), await player(h, "bob"), await player(h, "cy")]
    gid = await rated_game(h, ids, seats=3)
    await leave_game(h.deps, req(ids[2]), gid)  # a bot plays the seat from now on
    await play_first_legal(h, gid, {0: ids[0], 1: ids[1]})
    assert (POOL, ids[2]) in h.store.ratings
    assert (POOL, bot_subject(Strategy.GREEDY)) not in h.store.ratings


async def test_an_abandoned_rated_game_rates_nobody(h: Harness) -> None:
    ids = [await player(h, "ann"), await player(h, "bob")]
    gid = await rated_game(h, ids)
    await leave_game(h.deps, req(ids[0]), gid)
    await leave_game(h.deps, req(ids[1]), gid)
    await h.drain()
    assert h.store.games[gid].status is GameStatus.ABANDONED
    assert ended(h, gid).ratings is None
    assert h.store.ratings == {}


async def test_refusals_change_nothing(h: Harness) -> None:
    ann = await player(h, "ann")
    practice = NewGame(4, seed="s", practice=True, rated=True)
    assert await code_of(create_game(h.deps, req(ann), practice)) is ErrorCode.BAD_INPUT
    assert h.store.games == {}
    game = await create_game(h.deps, req(ann), NewGame(3, rated=True))
    for _ in range(2):
        await add_bot(h.deps, req(ann), game.game_id, Strategy.GREEDY, None)
    version = h.store.games[game.game_id].version
    refused = start_game(h.deps, req(ann), game.game_id)
    assert await code_of(refused) is ErrorCode.ILLEGAL_ACTION  # one person: not rated
    assert h.store.games[game.game_id].version == version
    assert h.store.games[game.game_id].status is GameStatus.LOBBY


async def test_the_rebuild_from_the_log_equals_the_live_ratings(h: Harness) -> None:
    ids = [await player(h, n) for n in ("ann", "bob", "cy", "dee")]
    for k in range(6):
        seated = [ids[k % 4], ids[(k + 1) % 4], ids[(k + 2) % 4]][: 2 + k % 2]
        gid = await rated_game(
            h, seated, seats=3 + k % 2, bot=Strategy(["random", "greedy"][k % 2])
        )
        await play_first_legal(h, gid, dict(enumerate(seated)))
    live = dict(h.store.ratings)
    checked = await rebuild(h.deps, write=False)
    assert checked.games == 6 and checked.differences == []
    assert {(r.pool, r.subject): r for r in checked.ratings} == live
    h.store.ratings[(POOL, ids[0])] = live[(POOL, ids[1])]  # a live rating gone wrong
    assert len((await rebuild(h.deps, write=False)).differences) == 1
    await rebuild(h.deps, write=True)
    assert h.store.ratings == live


async def test_leaderboard_lists_settled_recent_ratings_best_first(h: Harness) -> None:
    ids = [await player(h, n) for n in ("ann", "bob")]
    for _ in range(10):
        gid = await rated_game(h, ids, seats=3)
        await play_first_legal(h, gid, dict(enumerate(ids)))
    board = await leaderboard(h.deps, POOL, 10, None)
    subjects = [s.rating.subject for s in board.standings]
    assert sorted(subjects) == sorted([*ids, bot_subject(Strategy.GREEDY)])
    mus = [s.rating.skill.mu for s in board.standings]
    assert mus == sorted(mus, reverse=True) and [s.rank for s in board.standings] == [1, 2, 3]
    for s in board.standings:
        assert await rank_of(h.deps, s.rating.subject, POOL) == s.rank
    names = {s.player_id: s.name for s in board.standings}
    assert names[ids[0]] == "ann" and names[None] == "GREEDY bot"
    page = await leaderboard(h.deps, POOL, 1, (mus[0], subjects[0], 1))
    assert [s.rank for s in page.standings] == [2] and page.has_next
    assert (await ratings_of(h.deps, ids[0]))[0].games == 10
    h.clock.advance(h.deps.ratings.active_for)  # a month without a rated game
    assert (await leaderboard(h.deps, POOL, 10, None)).standings == []
    assert await rank_of(h.deps, ids[0], POOL) is None
