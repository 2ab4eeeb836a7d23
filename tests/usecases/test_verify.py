"""``mmk verify`` over exported games (domain/verify.py, infra/game_export.py,
docs/decisions/0040): every finished game checks out; a tampered log fails
at its first mismatch."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from api.cli import main
from domain.bots.strategy import Strategy
from domain.errors import BadRequest
from domain.fairness import commitment
from domain.game.events import Event, GameStarted
from domain.game.options import Format, GameOptions
from domain.records import Visibility
from domain.services import invitations
from domain.services.export import export_log
from domain.services.games import NewGame, add_bot, create_game, start_game
from domain.services.players import create_player
from domain.verify import Mismatch, verify
from infra.game_export import export_from_json, export_to_json
from tests.fakes import FakeUnitOfWork, Harness, harness
from tests.usecases.conftest import people_game_with_messages, play_first_legal, req
from tests.usecases.test_fair_deals import bots_game

Doc = dict[str, Any]


async def exported(h: Harness, game_id: str) -> Doc:
    """The export document of a finished game, through JSON text."""
    log = export_log(FakeUnitOfWork(h.store), game_id)
    doc: Doc = json.loads(json.dumps(export_to_json(game_id, log)))
    return doc


def run_verify(tmp_path: Path, doc: Doc, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """``mmk verify FILE``: its exit status and what it printed."""
    path = tmp_path / "game.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    status = main(["verify", str(path)])
    out = capsys.readouterr()
    return status, out.out + out.err


@pytest.mark.parametrize(
    ("seats", "fmt", "practice"),
    [
        (3, Format.SINGLETON, False),
        (4, Format.SEALED, False),
        (5, Format.SINGLETON, True),
        (8, Format.SEALED, False),
    ],
)
async def test_verify_accepts_every_finished_game(
    seats: int,
    fmt: Format,
    practice: bool,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    h = harness()
    seed = f"verify-{seats}" if practice else None
    options = GameOptions(fmt)
    game_id = await bots_game(h, seats, seed=seed, practice=practice, options=options)
    doc = await exported(h, game_id)
    status, out = run_verify(tmp_path, doc, capsys)
    assert status == 0, out
    game = h.store.games[game_id]
    assert out.startswith(f"ok: game {game_id}")
    assert f"{seats} seats" in out and commitment(game.seed, game.salt) in out
    assert ("(practice)" in out) is practice
    _, log = export_from_json(doc)
    checked = verify(log)
    assert checked.events == game.last_seq
    assert game.state is not None and game.state.outcome is not None
    assert checked.winners == game.state.outcome.winners


async def test_verify_accepts_a_game_of_people_with_messages(
    h: Harness, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Message texts are private to their readers (R5.4): each audience's
    projection is checked, the commands (texts included) replayed."""
    game_id = await people_game_with_messages(h, "step")
    log = h.store.log(game_id)
    kinds = {e.type for e in log}
    assert {"MessageSent", "GameEnded"} <= kinds
    assert kinds & {"MessageDelivered", "MessageDeclined", "MessageExpired"}
    status, out = run_verify(tmp_path, await exported(h, game_id), capsys)
    assert status == 0, out


def first(doc: Doc, kind: str) -> Doc:
    found: Doc = next(e for e in doc["events"] if e["type"] == kind)
    return found


def change_a_dealt_card(doc: Doc) -> None:
    started = first(doc, "GameStarted")
    own, other = started["seats"]["0"]["hand"], started["seats"]["1"]["hand"]
    own[0], other[0] = other[0], own[0]


def change_a_played_card(doc: Doc) -> None:
    won = first(doc, "TrickWon")["public"]
    play = won["plays"][0]
    play["card"] = next(p["card"] for p in won["plays"][1:] if p["card"] != play["card"])


def change_the_seed(doc: Doc) -> None:
    first(doc, "GameEnded")["public"]["seed"] += "0"


def change_the_salt(doc: Doc) -> None:
    first(doc, "GameEnded")["public"]["salt"] = "00" * 32


def change_seed_and_commitment_together(doc: Doc) -> None:
    """A consistent forgery of the reveal: the re-deal is not the logged one."""
    ended = first(doc, "GameEnded")["public"]
    ended["seed"] = "another seed"
    started = first(doc, "GameStarted")
    value = commitment("another seed", ended["salt"])
    for view in (started["public"], *started["seats"].values()):
        view["seedCommitment"] = value


def swap_two_events(doc: Doc) -> None:
    events = doc["events"]
    i = next(i for i, e in enumerate(events) if e["type"] == "TrickWon")
    events[i], events[i - 1] = events[i - 1], events[i]


def swap_two_events_keeping_seqs(doc: Doc) -> None:
    events = doc["events"]
    i = next(i for i, e in enumerate(events) if e["type"] == "TrickWon")
    a, b = events[i - 1], events[i]
    a["seq"], b["seq"] = b["seq"], a["seq"]
    events[i - 1], events[i] = b, a


def drop_an_event(doc: Doc) -> None:
    """The first prize's reveal is left out, the seqs renumbered."""
    events = doc["events"]
    i = next(i for i, e in enumerate(events) if e["type"] == "TrickStarted")
    del events[i]
    for seq, e in enumerate(events, start=1):
        e["seq"] = seq


def make_a_command_illegal(doc: Doc) -> None:
    """A logged play of a card the seat never held."""
    started = first(doc, "GameStarted")
    causes = [e for e in doc["events"] if e["cause"] and "command" in e["cause"]]
    play = next(e for e in causes if e["cause"]["command"].get("card"))
    seat = play["cause"]["seat"]
    not_held = next(
        c for s, view in started["seats"].items() if int(s) != seat for c in view["hand"]
    )
    play["cause"]["command"]["card"] = not_held


@pytest.mark.parametrize(
    ("tamper", "expected"),
    [
        (change_a_dealt_card, "GameStarted"),
        (change_a_played_card, "TrickWon"),
        (change_the_seed, "commitment"),
        (change_the_salt, "commitment"),
        (change_seed_and_commitment_together, "GameStarted"),
        (swap_two_events, "out of order"),
        (swap_two_events_keeping_seqs, "not what the replay gives"),
        (drop_an_event, "the replay's TrickStarted"),
        (make_a_command_illegal, "refused by the rules"),
    ],
)
async def test_verify_rejects_a_tampered_log_at_its_first_mismatch(
    tamper: Callable[[Doc], None],
    expected: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    h = harness()
    doc = await exported(h, await bots_game(h, 4, options=GameOptions(Format.SEALED)))
    assert run_verify(tmp_path, doc, capsys)[0] == 0
    tamper(doc)
    status, out = run_verify(tmp_path, doc, capsys)
    assert status == 1, out
    assert "MISMATCH" in out and expected in out, out
    with pytest.raises(Mismatch, match=expected):
        verify(export_from_json(doc)[1])


async def test_verify_refuses_a_file_that_is_not_an_export(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_verify(tmp_path, {"format": "something else"}, capsys)[0] == 2
    path = tmp_path / "broken.json"
    path.write_text("{", encoding="utf-8")
    assert main(["verify", str(path)]) == 2
    assert main(["verify", str(tmp_path / "missing.json")]) == 2


async def test_a_game_that_has_not_ended_is_not_exported(h: Harness) -> None:
    game_id = await bots_game(h, 3, play=False)
    with pytest.raises(BadRequest, match="has not ended"):
        export_log(FakeUnitOfWork(h.store), game_id)


async def test_a_log_made_before_fair_deals_does_not_verify(h: Harness) -> None:
    """No commitment in GameStarted: nothing to check the seed against."""
    log = export_log(FakeUnitOfWork(h.store), await bots_game(h, 3))
    old = [
        replace(e, public=_uncommitted(e.public), seats=tuple(map(_uncommitted, e.seats)))
        for e in log
    ]
    with pytest.raises(Mismatch, match="predates fair deals"):
        verify(old)


def _uncommitted(e: Event) -> Event:
    return replace(e, seed_commitment=None) if isinstance(e, GameStarted) else e


async def test_verify_accepts_a_private_game_with_its_invitations(
    h: Harness, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The lobby of a private game logs invitations, answers and code
    changes before the deal (docs/decisions/0062): the replay passes them."""
    host, bob, cy = [(await create_player(h.deps, n)).player.id for n in ("ann", "bob", "cy")]
    spec = NewGame(3, visibility=Visibility.PRIVATE)
    game_id = (await create_game(h.deps, req(host), spec)).game_id
    await invitations.invite_players(h.deps, req(host), game_id, [bob, cy])
    await invitations.decline_invitation(h.deps, req(cy), game_id)
    await invitations.rotate_invite_code(h.deps, req(host), game_id)
    await invitations.accept_invitation(h.deps, req(bob), game_id, None)
    await add_bot(h.deps, req(host), game_id, Strategy.GREEDY, None)
    await start_game(h.deps, req(host), game_id)
    await play_first_legal(h, game_id, {0: host, 1: bob})
    kinds = {e.type for e in h.store.log(game_id)}
    assert {"PlayersInvited", "InvitationDeclined", "InviteCodeChanged"} <= kinds
    status, out = run_verify(tmp_path, await exported(h, game_id), capsys)
    assert status == 0, out
