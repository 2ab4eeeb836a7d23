"""R10: scoring — 10 / 5 / 1 per won card by the prizes held of its house."""

from __future__ import annotations

import pytest

from domain.game.cards import THE_RAT, Card
from domain.game.commands import PlayCard
from domain.game.events import TrickWon
from domain.game.scoring import score, scores
from domain.game.state import SeatState
from domain.game.views import player_view, spectator_view
from tests.builders import cards, make_state, one, run


def seat(won: list[str], prizes: list[str]) -> SeatState:
    return SeatState(house=None, identity=THE_RAT, won=cards(won), prizes=cards(prizes))


@pytest.mark.parametrize(
    ("prizes", "points"),
    [
        ([], 1),
        (["crazy-prize-2"], 5),
        (["crazy-prize-1", "crazy-prize-3"], 5),
        (["crazy-prize-1", "crazy-prize-2", "crazy-prize-3"], 10),
    ],
)
def test_r10_1_a_won_card_scores_by_prizes_held_of_its_house(
    prizes: list[str], points: int
) -> None:
    assert score(seat(["crazy-7"], prizes)) == points


def test_r10_1_each_card_scores_by_its_own_house() -> None:
    prizes = ["crazy-prize-1", "crazy-prize-2", "crazy-prize-3", "stinky-prize-2", "sassy-prize-1"]
    won = ["crazy-1", "crazy-32", "stinky-9", "sassy-30", "sleepy-12", "needy-3"]
    assert score(seat(won, prizes)) == 10 + 10 + 5 + 5 + 1 + 1


def test_r10_1_the_card_value_does_not_matter() -> None:
    assert score(seat(["crazy-1"], [])) == score(seat(["crazy-32"], [])) == 1


def test_r10_1_prizes_score_nothing() -> None:
    all_prizes = [f"{h}-prize-{k}" for h in ("crazy", "stinky") for k in (1, 2, 3)]
    assert score(seat([], all_prizes)) == 0


def test_r10_1_sealed_instances_score_like_their_design() -> None:
    assert score(seat(["crazy-7#1", "crazy-7#2"], ["crazy-prize-1"])) == 10


def test_r10_1_the_rat_scores_like_everyone() -> None:
    state = make_state(
        [["curious-1"], ["curious-2"], ["curious-3"]],
        won=[["sassy-1"], ["sassy-2"], []],
        prizes=[["sassy-prize-1"], [], []],
    )
    assert state.rat == 0
    assert scores(state) == (5, 1, 0)


def test_r10_2_scores_are_public_and_current_after_every_trick() -> None:
    # seat 1 held three Curious cards worth 1 each; winning a Curious prize
    # makes them (and the three cards of the trick) worth 5 each
    state = make_state(
        [["curious-1", "crazy-1"], ["curious-20", "crazy-2"], ["curious-3", "crazy-3"]],
        prize="curious-prize-1",
        won=[[], ["curious-4", "curious-5", "curious-6"], []],
    )
    assert spectator_view(state).seats[1].score == 3
    events = run(
        state,
        (0, PlayCard(Card("curious-1"))),
        (1, PlayCard(Card("curious-20"))),
        (2, PlayCard(Card("curious-3"))),
    )
    assert one(events, TrickWon).seen_by(None).scores == (0, 30, 0)
    assert [s.score for s in spectator_view(state).seats] == [0, 30, 0]
    assert [s.score for s in player_view(state, 2).public.seats] == [0, 30, 0]
