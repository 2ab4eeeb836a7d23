"""Fair deals (docs/decisions/0040): the server's secret seed and salt,
``GameStarted``'s commitment, ``GameEnded``'s reveal, practice games, and
bots no client can predict; on the fake ports."""

from __future__ import annotations

import json

import pytest

from domain.bots.strategy import Strategy
from domain.errors import BadRequest
from domain.fairness import bot_rng_state, commitment
from domain.game.events import GameEnded, GameStarted
from domain.game.rng import seed_state
from domain.log import LoggedEvent, SeatCommand
from domain.services.games import NewGame, add_bot, create_game, start_game
from domain.services.queries import get_game, list_games
from infra.codec import event_to_json
from tests.fakes import Harness
from tests.usecases.conftest import player, req, started_game


async def bots_game(
    h: Harness,
    seats: int = 4,
    *,
    seed: str | None = None,
    practice: bool = False,
    play: bool = True,
    **spec: object,
) -> str:
    """A game of bots only (greedy and random in turn), started and, with
    ``play``, driven to its end."""
    host = await player(h, "host")
    new = NewGame(seats, seed=seed, practice=practice, take_seat=False, **spec)  # type: ignore[arg-type]
    game_id = (await create_game(h.deps, req(host), new)).game_id
    for i in range(seats):
        strategy = Strategy.RANDOM if i % 2 else Strategy.GREEDY
        await add_bot(h.deps, req(host), game_id, strategy, None)
    await start_game(h.deps, req(host), game_id)
    if play:
        await h.drain()
    return game_id


def audiences(e: LoggedEvent, seats: int) -> list[str]:
    """The event as every audience is served it (JSON text)."""
    return [json.dumps(event_to_json(e.event.seen_by(a))) for a in (None, *range(seats))]


def only(log: list[LoggedEvent], kind: type) -> LoggedEvent:
    (found,) = [e for e in log if isinstance(e.event, kind)]
    return found


async def test_game_started_commits_to_the_secret_seed_and_salt_for_every_audience(
    h: Harness,
) -> None:
    game_id, _ = await started_game(h, people=2, seats=4)
    game = h.store.games[game_id]
    assert game.seed.startswith("seed") and game.salt == "salt1"  # from the Ids port
    assert not game.practice
    started = only(h.store.log(game_id), GameStarted).event
    for audience in (None, 0, 1, 2, 3):
        seen = started.seen_by(audience)
        assert isinstance(seen, GameStarted)
        assert seen.seed_commitment == commitment(game.seed, "salt1")
        assert seen.practice is False
    snapshot = await get_game(h.deps, game_id, None)
    assert snapshot.seed_commitment == commitment(game.seed, "salt1")


async def test_game_ended_reveals_seed_and_salt_to_every_audience(h: Harness) -> None:
    game_id = await bots_game(h, 5)
    game = h.store.games[game_id]
    log = h.store.log(game_id)
    ended = log[-1]
    assert isinstance(ended.event, GameEnded)
    for audience in (None, *range(5)):
        seen = ended.event.seen_by(audience)
        assert isinstance(seen, GameEnded)
        assert (seen.seed, seen.salt) == (game.seed, game.salt)
    started = only(log, GameStarted).event
    assert isinstance(started, GameStarted)
    assert started.seed_commitment == commitment(game.seed, game.salt)


async def test_nothing_served_before_game_ended_holds_the_seed_or_salt(h: Harness) -> None:
    game_id = await bots_game(h, 4)
    game = h.store.games[game_id]
    *before, ended = h.store.log(game_id)
    assert isinstance(ended.event, GameEnded)
    for e in before:
        for text in audiences(e, 4):
            assert game.seed not in text and game.salt not in text, (e.seq, text)
    assert all(game.seed in text and game.salt in text for text in audiences(ended, 4))


async def test_a_chosen_seed_needs_a_practice_game_and_is_refused_without(h: Harness) -> None:
    host = await player(h)
    with pytest.raises(BadRequest, match="practice"):
        await create_game(h.deps, req(host), NewGame(3, seed="predictable"))
    assert h.store.games == {}
    with pytest.raises(BadRequest):
        await create_game(h.deps, req(host), NewGame(3, seed="", practice=True))
    assert h.store.games == {}


async def test_practice_is_marked_on_the_game_the_listing_and_game_started(h: Harness) -> None:
    practice = await bots_game(h, 3, seed="my seed", practice=True, play=False)
    fair = await bots_game(h, 3, play=False)
    assert h.store.games[practice].seed == "my seed"
    listing = {s.id: s.practice for s in (await list_games(h.deps, None, None, 10))[0]}
    assert listing == {practice: True, fair: False}
    for game_id, marked in ((practice, True), (fair, False)):
        assert (await get_game(h.deps, game_id, None)).summary.practice is marked
        started = only(h.store.log(game_id), GameStarted).event
        assert isinstance(started, GameStarted) and started.practice is marked
        assert started.seen_by(None).practice is marked


async def test_two_games_with_the_same_settings_deal_differently(h: Harness) -> None:
    a = await bots_game(h, 4, play=False, rat_seat=0)
    b = await bots_game(h, 4, play=False, rat_seat=0)
    ga, gb = h.store.games[a], h.store.games[b]
    assert ga.seed != gb.seed and ga.salt != gb.salt
    sa, sb = (only(h.store.log(g), GameStarted).event for g in (a, b))
    assert isinstance(sa, GameStarted) and isinstance(sb, GameStarted)
    assert sa.seed_commitment != sb.seed_commitment
    assert sa.hands != sb.hands


async def test_practice_bots_replay_from_the_seed_and_other_bots_do_not(h: Harness) -> None:
    """Two practice games with one seed: the same moves (reproducible). A
    non-practice game's bots draw from HMAC(salt and seed), not the seed."""
    a = await bots_game(h, 4, seed="again", practice=True)
    b = await bots_game(h, 4, seed="again", practice=True)

    def moves(game_id: str) -> list[SeatCommand]:
        return [e.cause for e in h.store.log(game_id) if isinstance(e.cause, SeatCommand)]

    assert moves(a) and moves(a) == moves(b)
    assert bot_rng_state("again", "salt1", True, 7) == seed_state("again/bot/7")
    fair = bot_rng_state("again", "salt1", False, 7)
    assert fair != seed_state("again/bot/7")
    assert fair != bot_rng_state("again", "salt2", False, 7), "the salt is in the key"
    assert fair != bot_rng_state("again", "salt1", False, 8), "a new stream per move"
