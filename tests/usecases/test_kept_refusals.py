"""Refusals are first results too (docs/clients.md "Playing from the stream", decision
0042): under an idempotency key, a refusal is kept, and every repeat with the
same input is refused alike (same code, same message) and changes nothing,
even after the game moved on so that the request would now succeed.
``RATE_LIMITED`` and ``INTERNAL`` are transient and keep nothing; a reused
key with other input is ``IDEMPOTENCY_KEY_REUSED``, itself never kept."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from domain.bots.strategy import Strategy
from domain.errors import DomainError, ErrorCode
from domain.game.commands import Command, DeclineMessage, PlayCard, SendMessage
from domain.game.engine import to_act
from domain.game.legal import legal_actions
from domain.records import BoosterRecord, IdempotencyRecord, MutationResult, Refused, Remembered
from domain.services.boosters import open_booster_pack
from domain.services.games import NewGame, add_bot, create_game, join_game, leave_game, start_game
from domain.services.play import act
from domain.services.transaction import NOT_KEPT, Request, Steps, Tx, no_load, transact
from tests.fakes import Harness
from tests.usecases.conftest import player, req, started_game


async def refusal(coro: Awaitable[object]) -> DomainError:
    with pytest.raises(DomainError) as e:
        await coro
    return e.value


def mark(h: Harness, gid: str) -> tuple[object, ...]:
    """What a game is in the store: equal marks mean it did not change."""
    g = h.store.games[gid]
    return g.version, g.last_seq, list(g.seats), len(h.store.log(gid)), len(h.store.boosters)


def keyed(player_id: str, op: str, key: str, expected: int | None = None, **args: Any) -> Request:
    return Request(player_id, op, dict(args), idempotency_key=key, expected_version=expected)


def kept(h: Harness, player_id: str, key: str) -> Remembered:
    return h.store.keys[(player_id, key)].result


# ---------------------------------------------------------------- the probe
async def test_a_refused_message_stays_refused_when_retried_after_it_became_legal(
    h: Harness,
) -> None:
    """The probe: ``sendMessage`` refused ``ILLEGAL_ACTION`` (three pending,
    R5.5), the Rat declines one, the same request with the same key is still
    refused and no message is sent; under a new key it is sent."""
    gid, ids = await started_game(h, people=4, seats=4, rat_seat=0)
    for text in ("a", "b", "c"):
        await act(h.deps, req(ids[1]), gid, SendMessage(2, text))
    fourth = keyed(ids[1], "sendMessage", "msg-4", to=2, text="d")
    first = await refusal(act(h.deps, fourth, gid, SendMessage(2, "d")))
    assert first.code is ErrorCode.ILLEGAL_ACTION
    await act(h.deps, req(ids[0]), gid, DeclineMessage("m1"))  # now a fourth fits
    before, published = mark(h, gid), h.bus.published
    again = await refusal(act(h.deps, fourth, gid, SendMessage(2, "d")))
    assert (again.code, again.message) == (first.code, first.message)
    assert mark(h, gid) == before and h.bus.published == published
    state = h.store.games[gid].state
    assert state is not None and [m.text for m in state.messages] == ["a", "b", "c"]
    fresh = keyed(ids[1], "sendMessage", "msg-5", to=2, text="d")
    version = h.store.games[gid].version
    assert (await act(h.deps, fresh, gid, SendMessage(2, "d"))).version == version + 1


# ---------------------------------------------------------------- every code the rules give
def _to_act(h: Harness, gid: str) -> tuple[int, Command]:
    """The seat to act, and its first card to play."""
    state = h.store.games[gid].state
    assert state is not None
    seat = to_act(state)
    assert seat is not None
    return seat, next(c for c in legal_actions(state, seat) if isinstance(c, PlayCard))


async def test_not_your_turn_is_replayed_with_its_first_message_after_the_turn_moved(
    h: Harness,
) -> None:
    gid, ids = await started_game(h, people=4, seats=4, rat_seat=0)
    seat, cmd = _to_act(h, gid)
    nxt = (seat + 1) % 4
    state = h.store.games[gid].state
    assert state is not None
    early = PlayCard(state.seats[nxt].hand[0])
    request = keyed(ids[nxt], "playCard", "early", card=early.card)
    first = await refusal(act(h.deps, request, gid, early))
    assert first.code is ErrorCode.NOT_YOUR_TURN and f"seat {seat}" in first.message
    await act(h.deps, req(ids[seat]), gid, cmd)  # the game moves on
    before = mark(h, gid)
    again = await refusal(act(h.deps, request, gid, early))
    assert (again.code, again.message) == (first.code, first.message), "the first message, stale"
    assert mark(h, gid) == before


async def test_game_not_started_is_replayed_after_the_start(h: Harness) -> None:
    ids = [await player(h, f"p{i}") for i in range(3)]
    gid = (await create_game(h.deps, req(ids[0]), NewGame(3, rat_seat=0))).game_id
    for pid in ids[1:]:
        await join_game(h.deps, req(pid), gid, None)
    message = keyed(ids[1], "sendMessage", "too-soon", to=2, text="hi")
    first = await refusal(act(h.deps, message, gid, SendMessage(2, "hi")))
    assert first.code is ErrorCode.GAME_NOT_STARTED
    await start_game(h.deps, req(ids[0]), gid)
    before = mark(h, gid)
    again = await refusal(act(h.deps, message, gid, SendMessage(2, "hi")))
    assert (again.code, again.message) == (first.code, first.message)
    assert mark(h, gid) == before


async def test_a_refused_join_stays_refused_when_a_seat_frees_up(h: Harness) -> None:
    ids = [await player(h, f"p{i}") for i in range(4)]
    gid = (await create_game(h.deps, req(ids[0]), NewGame(3))).game_id
    for pid in ids[1:3]:
        await join_game(h.deps, req(pid), gid, None)
    join = keyed(ids[3], "joinGame", "join", gameId=gid)
    first = await refusal(join_game(h.deps, join, gid, None))
    assert first.code is ErrorCode.ILLEGAL_ACTION
    await leave_game(h.deps, req(ids[2]), gid)
    before = mark(h, gid)
    again = await refusal(join_game(h.deps, join, gid, None))
    assert (again.code, again.message) == (first.code, first.message)
    assert mark(h, gid) == before
    assert ids[3] not in {o.player_id for o in h.store.games[gid].seats if o is not None}
    await join_game(h.deps, keyed(ids[3], "joinGame", "join-2", gameId=gid), gid, None)


Refuse = Callable[[Harness, str, list[str], Request], Awaitable[object]]


async def _forbidden(h: Harness, gid: str, ids: list[str], r: Request) -> object:
    return await add_bot(h.deps, r, gid, Strategy.RANDOM, None)


async def _not_found(h: Harness, gid: str, ids: list[str], r: Request) -> object:
    return await join_game(h.deps, r, "no-such-game", None)


async def _stale(h: Harness, gid: str, ids: list[str], r: Request) -> object:
    return await act(h.deps, r, gid, SendMessage(2, "hi"))


async def _bad_seat(h: Harness, gid: str, ids: list[str], r: Request) -> object:
    return await act(h.deps, r, gid, SendMessage(9, "hi"))


async def _to_oneself(h: Harness, gid: str, ids: list[str], r: Request) -> object:
    return await act(h.deps, r, gid, SendMessage(1, "hi"))


@pytest.mark.parametrize(
    ("code", "refuse", "expected"),
    [
        (ErrorCode.FORBIDDEN, _forbidden, None),  # the game has started: not the host's bot
        (ErrorCode.NOT_FOUND, _not_found, None),  # refused while loading, before the key
        (ErrorCode.STALE_STATE, _stale, 1),
        (ErrorCode.BAD_INPUT, _bad_seat, None),  # the engine's input check, in the decision
        (ErrorCode.ILLEGAL_ACTION, _to_oneself, None),
    ],
    ids=lambda v: v.name if isinstance(v, ErrorCode) else None,
)
async def test_each_refusal_of_a_decision_is_kept_and_replayed(
    h: Harness, code: ErrorCode, refuse: Refuse, expected: int | None
) -> None:
    gid, ids = await started_game(h, people=4, seats=4, rat_seat=0)
    request = keyed(ids[1], "op", "k", expected, n=1)
    first = await refusal(refuse(h, gid, ids, request))
    assert first.code is code
    assert kept(h, ids[1], "k") == Refused(code, first.message)
    await act(h.deps, req(ids[2]), gid, SendMessage(3, "the game moves on"))
    before, keys = mark(h, gid), dict(h.store.keys)
    again = await refusal(refuse(h, gid, ids, request))
    assert (again.code, again.message) == (first.code, first.message)
    assert mark(h, gid) == before and h.store.keys == keys, "nothing written again"


# ---------------------------------------------------------------- the key itself
async def test_a_kept_refusal_under_other_input_is_idempotency_key_reused(h: Harness) -> None:
    gid, ids = await started_game(h, people=4, seats=4, rat_seat=0)
    first = await refusal(
        act(h.deps, keyed(ids[1], "sendMessage", "k", to=1, text="me"), gid, SendMessage(1, "me"))
    )
    record = h.store.keys[(ids[1], "k")]
    before = mark(h, gid)
    other = keyed(ids[1], "sendMessage", "k", to=2, text="you")
    reused = await refusal(act(h.deps, other, gid, SendMessage(2, "you")))
    assert reused.code is ErrorCode.IDEMPOTENCY_KEY_REUSED
    assert h.store.keys[(ids[1], "k")] == record, "the mismatch is never kept"
    assert mark(h, gid) == before
    again = await refusal(
        act(h.deps, keyed(ids[1], "sendMessage", "k", to=1, text="me"), gid, SendMessage(1, "me"))
    )
    assert (again.code, again.message) == (first.code, first.message)


async def test_a_refusal_before_the_key_is_read_gives_way_to_the_keys_first_result(
    h: Harness,
) -> None:
    """A load refused (no such game) under a key that already has a result
    is refused as a reuse, and the first result stays."""
    gid, ids = await started_game(h, people=4, seats=4, rat_seat=0)
    sent = await act(
        h.deps, keyed(ids[1], "sendMessage", "k", to=2, text="hi"), gid, SendMessage(2, "hi")
    )
    elsewhere = keyed(ids[1], "sendMessage", "k", to=2, text="there")
    reused = await refusal(act(h.deps, elsewhere, "no-such-game", SendMessage(2, "there")))
    assert reused.code is ErrorCode.IDEMPOTENCY_KEY_REUSED
    assert kept(h, ids[1], "k") == sent


async def test_a_refusal_without_a_key_keeps_nothing(h: Harness) -> None:
    gid, ids = await started_game(h, people=4, seats=4, rat_seat=0)
    keys = dict(h.store.keys)
    await refusal(act(h.deps, req(ids[1]), gid, SendMessage(1, "me")))
    assert h.store.keys == keys


# ---------------------------------------------------------------- not kept
class _Transient(DomainError):
    def __init__(self, code: ErrorCode) -> None:
        super().__init__(f"transient {code.value}")
        self.code = code


def _opening(fail_first: Callable[[], None]) -> Steps[None, BoosterRecord]:
    """Opens a pack after ``fail_first`` raised once."""
    failed: list[bool] = []

    def decide(tx: Tx, _: None) -> BoosterRecord:
        if not failed:
            failed.append(True)
            fail_first()
        from domain.game.boosters import open_booster
        from domain.game.rng import Rng, seed_state

        record = BoosterRecord(tx.new_id(), "p", open_booster(Rng(seed_state("s"))), tx.now())
        tx.add_booster(record)
        return record

    def repeat(tx: Tx, first: Remembered) -> BoosterRecord:
        assert isinstance(first, BoosterRecord)
        return first

    return Steps(no_load, decide, lambda r: r, repeat)


@pytest.mark.parametrize(
    "code", sorted(NOT_KEPT - {ErrorCode.IDEMPOTENCY_KEY_REUSED}), ids=lambda c: c.value
)
async def test_transient_refusals_keep_nothing_and_a_retry_is_decided_anew(
    h: Harness, code: ErrorCode
) -> None:
    assert {ErrorCode.RATE_LIMITED, ErrorCode.INTERNAL} <= NOT_KEPT
    pid = await player(h)

    def fail() -> None:
        raise _Transient(code)

    steps = _opening(fail)
    request = keyed(pid, "openBoosterPack", "k")
    refused: Awaitable[BoosterRecord] = transact(h.deps, request, steps)
    assert (await refusal(refused)).code is code
    assert (pid, "k") not in h.store.keys and h.store.boosters == []
    opened = await transact(h.deps, request, steps)
    assert h.store.boosters == [opened] and kept(h, pid, "k") == opened


async def test_an_internal_failure_keeps_nothing_and_a_retry_is_applied(h: Harness) -> None:
    pid = await player(h)
    request = Request(pid, "openBoosterPack", {}, "k")

    def database_gone() -> None:
        h.store.fail_before_commit = None
        raise RuntimeError("connection lost")

    h.store.fail_before_commit = database_gone
    with pytest.raises(RuntimeError):
        await open_booster_pack(h.deps, request)
    assert h.store.keys.get((pid, "k")) is None and h.store.boosters == []
    opened = await open_booster_pack(h.deps, request)
    assert h.store.boosters == [opened]


async def test_a_refusal_whose_keeping_fails_is_not_kept(h: Harness) -> None:
    """The refusal is kept in a transaction of its own; if that fails, the
    caller gets the failure (not a refusal that was never kept) and a retry
    is decided anew."""
    gid, ids = await started_game(h, people=4, seats=4, rat_seat=0)
    request = keyed(ids[1], "sendMessage", "k", to=1, text="me")

    def database_gone() -> None:
        h.store.fail_before_commit = None
        raise RuntimeError("connection lost")

    h.store.fail_before_commit = database_gone
    with pytest.raises(RuntimeError):
        await act(h.deps, request, gid, SendMessage(1, "me"))
    assert (ids[1], "k") not in h.store.keys
    assert (await refusal(act(h.deps, request, gid, SendMessage(1, "me")))).code is (
        ErrorCode.ILLEGAL_ACTION
    )
    assert isinstance(kept(h, ids[1], "k"), Refused)


# ---------------------------------------------------------------- twins
@pytest.mark.parametrize("twin_won", ["applied", "refused"])
async def test_a_twin_that_kept_its_result_first_wins(h: Harness, twin_won: str) -> None:
    """Between this request's refusal and its keeping, a twin (the same key
    and input, say through another instance) kept its own first result: this
    request answers with the twin's, as a repeat would."""
    gid, ids = await started_game(h, people=4, seats=4, rat_seat=0)
    request = keyed(ids[1], "sendMessage", "k", to=1, text="me")
    twin: Remembered = (
        MutationResult(gid, h.store.games[gid].version + 1, ())
        if twin_won == "applied"
        else Refused(ErrorCode.NOT_YOUR_TURN, "the twin's refusal")
    )

    def twin_commits() -> None:
        h.store.fail_before_commit = None
        now = h.deps.clock.now()
        h.store.keys[(ids[1], "k")] = IdempotencyRecord(
            ids[1], "k", request.fingerprint(), twin, now, now + h.deps.keys.retention
        )

    h.store.fail_before_commit = twin_commits  # just before this one's keeping commits
    if isinstance(twin, MutationResult):
        assert await act(h.deps, request, gid, SendMessage(1, "me")) == twin
    else:
        assert isinstance(twin, Refused)
        got = await refusal(act(h.deps, request, gid, SendMessage(1, "me")))
        assert (got.code, got.message) == (twin.code, twin.message)
    assert kept(h, ids[1], "k") == twin


def _racing(h: Harness, gid: str) -> None:
    """Before the next commit, another writer moves the stored game on."""

    def racer() -> None:
        h.store.fail_before_commit = None
        game = h.store.games[gid].clone()
        game.version += 1
        h.store.games[gid] = game

    h.store.fail_before_commit = racer


async def test_a_lost_race_with_expected_version_keeps_conflict(h: Harness) -> None:
    """``CONFLICT`` is the first result too: the repeat is not ``STALE_STATE``."""
    gid, ids = await started_game(h, people=4, seats=4, rat_seat=0)
    seat, cmd = _to_act(h, gid)
    version = h.store.games[gid].version
    request = keyed(ids[seat], "playCard", "k", version, n=1)
    _racing(h, gid)
    first = await refusal(act(h.deps, request, gid, cmd))
    assert first.code is ErrorCode.CONFLICT
    assert kept(h, ids[seat], "k") == Refused(ErrorCode.CONFLICT, first.message)
    again = await refusal(act(h.deps, request, gid, cmd))
    assert (again.code, again.message) == (first.code, first.message)
    assert h.store.games[gid].version == version + 1, "only the racer's change"
