"""Check a finished game's log against its revealed seed (``mmk verify``,
docs/decisions/0040): the commitment is the seed's and salt's, the re-deal
gives every dealt and revealed card, every logged command is legal, and the
engine's events are the logged ones as every audience saw them (R11)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from domain.clocks import CLOCK_EVENTS, as_served
from domain.fairness import commitment, reveal, seal
from domain.game.engine import apply, awaiting
from domain.game.events import ActionRequired, Event, GameEnded, GameStarted
from domain.game.options import GameOptions
from domain.game.setup import new_game
from domain.game.state import GameState
from domain.invitations import INVITATION_EVENTS
from domain.lobby import LOBBY_EVENTS, GameCreated
from domain.log import ExportedEvent, GameStart
from domain.rematch import AFTER_GAME_EVENTS


@dataclass(frozen=True, slots=True)
class Verified:
    """What a log that checks out says."""

    seat_count: int
    events: int
    commands: int
    practice: bool
    seed_commitment: str
    winners: tuple[int, ...]


class Mismatch(ValueError):
    """The first place where the log and its replay from the revealed seed
    disagree (or the log is not a finished game's)."""


def _name(e: object) -> str:
    return type(e).__name__


def _header(log: Sequence[ExportedEvent]) -> tuple[GameCreated, GameStarted, GameEnded]:
    if not log:
        raise Mismatch("the log is empty")
    for i, e in enumerate(log, start=1):
        if e.seq != i:
            raise Mismatch(f"event {i} has seq {e.seq}: the log is out of order or incomplete")
    last = len(log)
    while last > 1 and type(log[last - 1].public) in AFTER_GAME_EVENTS:
        last -= 1  # a rematch offered after the end (docs/decisions/0048)
    created, ended = log[0].public, log[last - 1].public
    if not isinstance(created, GameCreated):
        raise Mismatch(f"event 1 is {_name(created)}, not GameCreated")
    for e in log:
        kinds = {type(s) for s in e.seats}
        if len(e.seats) != created.seat_count or kinds != {type(e.public)}:
            raise Mismatch(f"event {e.seq} has no projection for each of the game's seats")
    if not isinstance(ended, GameEnded):
        raise Mismatch(f"the last event is {_name(ended)}, not GameEnded: the game has not ended")
    started = next((e.public for e in log if isinstance(e.public, GameStarted)), None)
    if started is None:
        raise Mismatch("the log has no GameStarted")
    return created, started, ended


def verify(log: Sequence[ExportedEvent]) -> Verified:
    """Check a finished game's whole log; raises :class:`Mismatch` at the
    first disagreement."""
    created, started, ended = _header(log)
    if started.seed_commitment is None or ended.seed is None or ended.salt is None:
        raise Mismatch("the game predates fair deals: no seed commitment or no revealed seed")
    seed, salt = ended.seed, ended.salt
    if commitment(seed, salt) != started.seed_commitment:
        raise Mismatch(
            f"GameStarted's seedCommitment {started.seed_commitment} is not the commitment "
            f"of the seed and salt GameEnded reveals ({commitment(seed, salt)})"
        )
    clock = started.options  # the time control (0046): not the rules', as GameStarted has it
    options = GameOptions(
        created.format,
        created.ability_trigger,
        created.refill_hands,
        clock.turn_seconds,
        clock.bank_seconds,
        clock.timeouts_to_takeover,
    )
    state: GameState | None = None
    pending: list[Event] = []
    commands = 0
    for e in log:
        cause = e.cause
        if cause is not None:
            if pending:
                raise Mismatch(f"event {e.seq}: the replay has {_name(pending[0])} first")
            if isinstance(cause, GameStart):
                if state is not None:
                    raise Mismatch(f"event {e.seq}: the game starts a second time")
                try:
                    setup = new_game(
                        created.seat_count,
                        seed,
                        options,
                        created.chosen_rat_seat,
                        cause.collections,
                    )
                except (KeyError, TypeError, ValueError, AttributeError) as err:
                    raise Mismatch(f"event {e.seq}: the seed does not deal: {err}") from err
                state = setup.state
                pending = seal(setup.events, started.seed_commitment, started.practice)
            else:
                if state is None:
                    raise Mismatch(f"event {e.seq}: a command before the game started")
                try:
                    made = apply(state, cause.seat, cause.command)
                except (KeyError, TypeError, ValueError, AttributeError) as err:
                    raise Mismatch(
                        f"event {e.seq}: seat {cause.seat}'s {_name(cause.command)} "
                        f"is refused by the rules: {err}"
                    ) from err
                pending = reveal(made, seed, salt)
                commands += 1
        if type(e.public) in CLOCK_EVENTS:
            continue  # timeouts and takeovers: the server's, not the rules' (0046)
        if not pending:
            if state is None and type(e.public) in (*LOBBY_EVENTS, *INVITATION_EVENTS):
                continue  # the lobby: seats, bots, invitations (no deal yet)
            ended_now = state is not None and state.outcome is not None
            if ended_now and type(e.public) in AFTER_GAME_EVENTS:
                continue  # after the end: a rematch offered
            wait = None if state is None else awaiting(state)
            if wait is not None and isinstance(e.public, ActionRequired):
                _compare(e, wait)  # a change of seats restates the wait (0050)
                continue
            raise Mismatch(f"event {e.seq} ({_name(e.public)}) is not what the replay gives")
        _compare(e, pending.pop(0))
    if pending:
        raise Mismatch(f"the replay gives {_name(pending[0])} after the last event")
    if state is None or state.outcome is None:
        raise Mismatch("the replayed game has not ended")
    return Verified(
        created.seat_count,
        len(log),
        commands,
        started.practice,
        started.seed_commitment,
        state.outcome.winners,
    )


def _compare(logged: ExportedEvent, replayed: Event) -> None:
    """The replayed event, as each audience sees it, is the logged one (with
    what the server adds: a wait's deadline, a takeover's mark, 0046, 0050)."""
    served = as_served(replayed, logged.public)
    if served.seen_by(None) != logged.public:
        raise Mismatch(
            f"event {logged.seq} ({_name(logged.public)}) differs from the replay's "
            f"{_name(replayed)} for a spectator"
        )
    for seat, seen in enumerate(logged.seats):
        if served.seen_by(seat) != seen:
            raise Mismatch(
                f"event {logged.seq} ({_name(logged.public)}) differs from the replay's "
                f"{_name(replayed)} for seat {seat}"
            )
