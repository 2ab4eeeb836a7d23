"""R9: end of the game — when it ends, who wins, and that it then stays over."""

from __future__ import annotations

import pytest

from domain.game.cards import HOUSES, Card, prize_card
from domain.game.commands import (
    ChooseNeighbour,
    Command,
    DeclineMessage,
    DeliverMessage,
    DiscardAndPlay,
    Gift,
    GiveCard,
    GiveCards,
    HungryDiscard,
    HungryTake,
    Pass,
    PlayCard,
    PlaySecondCard,
    ReorderTop,
    SendMessage,
)
from domain.game.engine import to_act
from domain.game.events import Event, GameEnded, TrickStarted
from domain.game.legal import legal_actions
from domain.game.messaging import message_targets
from domain.game.state import GameState, Phase, Termination
from domain.game.views import spectator_view
from tests.builders import make_state, of_type, one, refused, run

SIX_HOUSES = [prize_card(h, 1) for h in HOUSES[:6]]  # all but Sassy
SASSY_PRIZE = prize_card(HOUSES[6], 1)


def play_out(state: GameState, plays: list[tuple[int, str]]) -> list[Event]:
    return run(state, *((s, PlayCard(Card(c))) for s, c in plays))


def seventh_house_trick(prizes_of: int, won: list[list[str]]) -> tuple[GameState, list[Event]]:
    """Seat ``prizes_of`` holds 6 houses and wins the Sassy prize in trick 1."""
    prizes: list[list[str]] = [[], [], [], []]
    prizes[prizes_of] = list(SIX_HOUSES)
    hands = [
        ["curious-1", "crazy-1"],
        ["curious-2", "crazy-2"],
        ["curious-3", "crazy-3"],
        ["curious-4", "crazy-4"],
    ]
    hands[prizes_of][0] = "curious-20"
    state = make_state(hands, prize=SASSY_PRIZE, prizes=prizes, won=won)
    events = play_out(state, [(s, hands[s][0]) for s in range(4)])
    return state, events


# ---------------------------------------------------------------- R9.1 / R9.2
def test_r9_2_rat_holds_all_7_houses_rat_wins_outright() -> None:
    # the Rat (seat 0) scores 4 x 5 for the trick, seat 2 has 29: the Rat wins alone
    won = [[], ["crazy-5", "crazy-6"], [f"hungry-{v}" for v in range(1, 30)], []]
    state, events = seventh_house_trick(0, won)
    assert state.phase is Phase.FINISHED
    assert state.outcome is not None
    assert state.outcome.termination is Termination.RAT_ALL_HOUSES
    assert state.outcome.winners == (0,)
    assert state.outcome.disqualified == ()
    assert state.outcome.scores[0] < state.outcome.scores[2]
    ended = one(events, GameEnded)
    assert ended.seen_by(None).termination is Termination.RAT_ALL_HOUSES
    assert ended.seen_by(None).winners == (0,)


def test_r9_2_house_player_all_7_houses_loses_win_goes_to_best_other_score() -> None:
    won = [["crazy-5"], [f"hungry-{v}" for v in range(1, 20)], ["crazy-7", "crazy-8"], []]
    state, events = seventh_house_trick(1, won)
    assert state.outcome is not None
    assert state.outcome.termination is Termination.HOUSE_PLAYER_ALL_HOUSES
    assert state.outcome.disqualified == (1,)
    assert max(state.outcome.scores) == state.outcome.scores[1]  # best score, yet out
    assert state.outcome.winners == (2,)
    assert one(events, GameEnded).seen_by(None).disqualified == (1,)


def test_r9_2_the_best_others_may_share_the_win() -> None:
    won = [["crazy-5"], [], ["crazy-7"], ["crazy-8"]]
    state, _ = seventh_house_trick(1, won)
    assert state.outcome is not None
    # seat 1 took the four curious cards of the trick; seats 0, 2, 3 have 1 point
    assert state.outcome.winners == (0, 2, 3)


def test_r9_1_all_7_houses_ends_the_game_even_with_prizes_left() -> None:
    state, _ = seventh_house_trick(2, [[], [], [], []])
    assert len(state.prize_pool) > 0
    assert state.outcome is not None
    assert state.outcome.termination is Termination.HOUSE_PLAYER_ALL_HOUSES


def test_r9_1_six_houses_do_not_end_the_game() -> None:
    prizes = [[], SIX_HOUSES[:5], [], []]
    hands = [["curious-1", "crazy-1"], ["curious-20", "crazy-2"], ["curious-3"], ["curious-4"]]
    state = make_state(hands, prize=SASSY_PRIZE, prizes=prizes)
    play_out(state, [(0, "curious-1"), (1, "curious-20"), (2, "curious-3"), (3, "curious-4")])
    assert state.phase is Phase.LEAD
    assert state.outcome is None
    assert state.trick is not None and state.trick.number == 2


def test_r9_1_the_game_ends_when_the_prize_pool_is_empty() -> None:
    hands = [["curious-1", "crazy-1"], ["curious-20", "crazy-2"], ["curious-3", "crazy-3"]]
    state = make_state(hands, prize="needy-prize-1", prize_pool=[])
    events = play_out(state, [(0, "curious-1"), (1, "curious-20"), (2, "curious-3")])
    assert state.outcome is not None
    assert state.outcome.termination is Termination.PRIZE_POOL_EMPTY
    assert state.outcome.winners == (1,)
    assert of_type(events, TrickStarted) == []


def test_r9_2_equal_best_scores_share_the_win() -> None:
    hands = [["curious-1", "crazy-1"], ["curious-20", "crazy-2"], ["curious-3", "crazy-3"]]
    won = [["sassy-1", "sassy-2", "sassy-3"], [], ["sassy-4"]]
    state = make_state(hands, prize="needy-prize-1", prize_pool=[], won=won)
    events = play_out(state, [(0, "curious-1"), (1, "curious-20"), (2, "curious-3")])
    assert state.outcome is not None
    assert state.outcome.scores == (3, 3, 1)
    assert state.outcome.winners == (0, 1)
    assert one(events, GameEnded).seen_by(None).winners == (0, 1)


def test_r9_1_the_game_ends_when_no_seat_holds_a_card() -> None:
    hands = [["curious-1"], ["curious-20"], ["curious-3"]]
    state = make_state(hands, prize="needy-prize-1")
    play_out(state, [(0, "curious-1"), (1, "curious-20"), (2, "curious-3")])
    assert state.prize_pool
    assert state.outcome is not None
    assert state.outcome.termination is Termination.NO_CARDS_LEFT


def test_r9_1_empty_hands_refilled_from_the_rat_deck_do_not_end_the_game() -> None:
    hands = [["sleepy-1"], ["sleepy-20"], ["sleepy-3"]]
    state = make_state(hands, prize="needy-prize-1", rat_deck=["crazy-1", "crazy-2"])
    play_out(state, [(0, "sleepy-1"), (1, "sleepy-20"), (2, "sleepy-3")])
    assert state.outcome is None
    assert state.seats[1].hand == ["crazy-1", "crazy-2"]
    assert to_act(state) == 1


def test_r9_1_r8_3_without_refill_empty_hands_end_the_game_despite_the_rat_deck() -> None:
    hands = [["curious-1"], ["curious-20"], ["curious-3"]]
    state = make_state(hands, prize="needy-prize-1", rat_deck=["crazy-1"], refill=False)
    run(state, (0, PlayCard(Card("curious-1"))), (0, ReorderTop((Card("crazy-1"),))))
    play_out(state, [(1, "curious-20"), (2, "curious-3")])
    assert state.outcome is not None
    assert state.outcome.termination is Termination.NO_CARDS_LEFT


def test_r9_1_all_7_houses_takes_precedence_over_an_empty_prize_pool() -> None:
    prizes = [[], SIX_HOUSES, [], []]
    hands = [["curious-1"], ["curious-20"], ["curious-3"], ["curious-4"]]
    state = make_state(hands, prize=SASSY_PRIZE, prizes=prizes, prize_pool=[])
    play_out(state, [(0, "curious-1"), (1, "curious-20"), (2, "curious-3"), (3, "curious-4")])
    assert state.outcome is not None
    assert state.outcome.termination is Termination.HOUSE_PLAYER_ALL_HOUSES
    assert state.outcome.winners == (0, 2, 3)  # all at 0 points: they share


# ---------------------------------------------------------------- R9.3
def finished() -> GameState:
    hands = [["curious-1", "crazy-1"], ["curious-20", "crazy-2"], ["curious-3", "crazy-3"]]
    state = make_state(hands, prize="needy-prize-1", prize_pool=[], rat_deck=["sassy-1"])
    play_out(state, [(0, "curious-1")])
    run(state, (0, ReorderTop((Card("sassy-1"),))))
    play_out(state, [(1, "curious-20"), (2, "curious-3")])
    assert state.phase is Phase.FINISHED
    return state


EVERY_COMMAND: list[Command] = [
    PlayCard(Card("crazy-1")),
    PlayCard(Card("crazy-2")),
    Pass(),
    DiscardAndPlay(Card("crazy-1"), Card("crazy-2")),
    SendMessage(1, "hello"),
    DeliverMessage("m1"),
    DeclineMessage("m1"),
    PlaySecondCard(Card("crazy-1")),
    GiveCards((Gift(1, Card("crazy-1")), Gift(2, Card("crazy-1")))),
    HungryDiscard(Card("crazy-1")),
    HungryTake(Card("sassy-1")),
    ChooseNeighbour(1),
    GiveCard(Card("crazy-2")),
    ReorderTop((Card("sassy-1"),)),
]


@pytest.mark.parametrize("cmd", EVERY_COMMAND, ids=lambda c: type(c).__name__)
@pytest.mark.parametrize("seat", [0, 1, 2])
def test_r9_3_a_finished_game_refuses_everything_with_game_finished(
    seat: int, cmd: Command
) -> None:
    state = finished()
    err = refused(state, seat, cmd, "GAME_FINISHED")
    assert "over" in err.message


def test_r9_3_a_finished_game_offers_no_action_and_waits_for_nobody() -> None:
    state = finished()
    assert to_act(state) is None
    assert all(legal_actions(state, s) == [] for s in range(3))
    assert all(message_targets(state, s) == [] for s in range(3))
    view = spectator_view(state)
    assert view.phase is Phase.FINISHED
    assert view.to_act is None
    assert view.trick is None
    assert view.outcome == state.outcome
