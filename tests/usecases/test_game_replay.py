"""``gameReplay``: a finished game with every seat's view (R11, docs/decisions/
0067): what ``mmk export`` holds, page by page, once the rules ended the game
and only then; nothing of a running, abandoned or unseen private game."""

from __future__ import annotations

from dataclasses import fields, replace

import pytest

from domain.errors import DomainError, ErrorCode
from domain.event_kinds import EVENT_KINDS
from domain.game.events import GameStarted
from domain.game.options import Format, GameOptions
from domain.log import ExportedEvent
from domain.records import GameStatus, Visibility
from domain.services.export import export_log
from domain.services.game_replay import WORDS, read_replay
from domain.services.games import NewGame, create_game, leave_game
from domain.services.queries import read_events
from tests.fakes import FakeUnitOfWork, Harness
from tests.usecases.conftest import (
    people_game_with_messages,
    play_first_legal,
    player,
    req,
    started_game,
)
from tests.usecases.test_fair_deals import bots_game


async def whole_replay(h: Harness, game_id: str, who: str | None, size: int) -> list[ExportedEvent]:
    """Every step, ``size`` at a time, each page after the last one's seq."""
    steps: list[ExportedEvent] = []
    after = 0
    while True:
        page = await read_replay(h.deps, game_id, who, after, size)
        steps += page.steps
        if not page.has_more:
            return steps
        assert page.steps, "a page that says more follows holds a step"
        after = page.steps[-1].seq


async def refused(code: ErrorCode, h: Harness, game_id: str, who: str | None) -> None:
    with pytest.raises(DomainError) as err:
        await read_replay(h.deps, game_id, who, 0, 50)
    assert err.value.code is code


@pytest.mark.parametrize(
    ("seats", "fmt", "practice"),
    [(3, Format.SINGLETON, True), (4, Format.SEALED, False), (6, Format.SINGLETON, False)],
)
async def test_a_finished_game_replays_as_every_audience_saw_it(
    h: Harness, seats: int, fmt: Format, practice: bool
) -> None:
    seed = "replay-practice" if practice else None
    game_id = await bots_game(h, seats, seed=seed, practice=practice, options=GameOptions(fmt))
    assert h.store.games[game_id].status is GameStatus.FINISHED
    steps = await whole_replay(h, game_id, None, 7)
    exported = export_log(FakeUnitOfWork(h.store), game_id)
    assert [s.seq for s in steps] == list(range(1, len(exported) + 1))  # no gap, no repeat
    log = h.store.log(game_id)  # each whole event, projected here for every audience
    for step, e, whole in zip(steps, exported, log, strict=True):
        assert step == ExportedEvent.of(replace(whole, cause=None), seats)
        assert (step.public, step.seats) == (e.public, e.seats)
    # every seat's own hand is in its projection of the start, none in the public one
    (start,) = [s for s in steps if isinstance(s.public, GameStarted)]
    assert isinstance(start.public, GameStarted) and not start.public.hand
    hands = [s.hand for s in start.seats if isinstance(s, GameStarted)]
    assert len(hands) == seats and all(hands)


async def test_a_page_is_the_log_from_its_seq_for_a_spectator_and_a_player(h: Harness) -> None:
    game_id, ids = await started_game(h, people=2, seats=4)
    await play_first_legal(h, game_id, {0: ids[0], 1: ids[1]})
    public, _ = await read_events(h.deps, game_id, None, 0, 100)
    for who in (None, ids[0], "someone-else"):  # the same replay for anyone who may see it
        page = await read_replay(h.deps, game_id, who, 5, 10)
        assert [(s.seq, s.at, s.public) for s in page.steps] == [
            (e.seq, e.at, e.event) for e in public[5:15]
        ]
        assert page.has_more
        assert page.seat_count == 4


async def test_nothing_is_replayed_before_the_end(h: Harness) -> None:
    host = await player(h, "host")
    lobby = (await create_game(h.deps, req(host), NewGame(3))).game_id
    await refused(ErrorCode.GAME_NOT_STARTED, h, lobby, host)
    running, ids = await started_game(h, people=2, seats=3)
    for who in (None, *ids):  # not even a seated player sees the others' hands
        await refused(ErrorCode.BAD_INPUT, h, running, who)
    await refused(ErrorCode.NOT_FOUND, h, "no-such-game", None)


async def test_an_abandoned_game_is_not_replayed(h: Harness) -> None:
    game_id, ids = await started_game(h, people=2, seats=3)
    for pid in ids:
        await leave_game(h.deps, req(pid), game_id)
    assert h.store.games[game_id].status is GameStatus.ABANDONED
    await refused(ErrorCode.BAD_INPUT, h, game_id, ids[0])


async def test_a_private_game_replays_only_to_those_who_may_see_it(h: Harness) -> None:
    game_id, ids = await started_game(h, people=1, seats=3, visibility=Visibility.PRIVATE)
    await play_first_legal(h, game_id, {0: ids[0]})
    outsider = await player(h, "eve")
    for who in (None, outsider):  # as a game that never was (0062)
        await refused(ErrorCode.NOT_FOUND, h, game_id, who)
    assert (await read_replay(h.deps, game_id, ids[0], 0, 5)).steps


@pytest.mark.parametrize(("after", "first"), [(-1, 10), (0, 0), (0, 101)])
async def test_a_bad_page_is_refused(h: Harness, after: int, first: int) -> None:
    game_id = await bots_game(h, 3)
    with pytest.raises(DomainError) as err:
        await read_replay(h.deps, game_id, None, after, first)
    assert err.value.code is ErrorCode.BAD_INPUT


async def test_a_message_s_words_stay_its_readers_after_the_end(h: Harness) -> None:
    """R5.4 has no end: the deal's secrets are revealed (the seed gives them
    all), a message's text is not; ``mmk export`` (the operator's) keeps it."""
    game_id = await people_game_with_messages(h, "secret")
    host = h.store.games[game_id].host  # a person seated in it
    assert h.store.games[game_id].status is GameStatus.FINISHED
    steps = await whole_replay(h, game_id, host, 50)
    worded = [s for s in steps if isinstance(s.public, WORDS)]
    assert worded, "no message was sent"
    assert all(s.seats == (s.public,) * 4 and s.public.text is None for s in worded)  # type: ignore[attr-defined]
    exported = export_log(FakeUnitOfWork(h.store), game_id)
    texts = {getattr(e, "text", None) for x in exported for e in x.seats}
    assert any(t and t.startswith("secret") for t in texts)
    # the other steps are every seat's own projection, as the export's
    assert [(s.public, s.seats) for s in steps if s not in worded] == [
        (e.public, e.seats) for e in exported if not isinstance(e.public, WORDS)
    ]


def test_every_event_kind_with_words_is_replayed_without_them() -> None:
    """A new event kind that carries a player's text is listed in WORDS."""
    with_text = {k for k in EVENT_KINDS.values() if "text" in {f.name for f in fields(k)}}
    assert with_text == set(WORDS)
