"""A started game's end when nobody is left to play it (docs/decisions/0051).

Not one of the rules' ends (R9.1): the server's. The trick under way is
undone (its prize back on top of the prize pool, each card played back in
its player's hand), a pending decision is dropped, and the game is over with
no winner and the scores of the tricks won so far (R10). Every card stays
where a card may be (domain/game/invariants.py).
"""

from __future__ import annotations

from domain.game.events import GameEnded
from domain.game.scoring import scores
from domain.game.state import GameState, Outcome, Phase, Termination


def abandon(state: GameState) -> GameEnded:
    """End ``state`` as abandoned (in place); the event that says so."""
    trick = state.trick
    if trick is not None:
        state.prize_pool.insert(0, trick.prize)  # R4.5: it came off the top
        for play in trick.plays:
            hand = state.seats[play.seat].hand
            hand.append(play.card)
            if play.second is not None:
                hand.append(play.second)
    state.trick, state.pending, state.phase = None, None, Phase.FINISHED
    outcome = Outcome(Termination.ABANDONED, (), (), scores(state))
    state.outcome = outcome
    return GameEnded(outcome.termination, (), (), outcome.scores)
