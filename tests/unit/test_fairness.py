"""The seed's commitment, its reveal and the bots' stream (domain/fairness.py,
docs/decisions/0040)."""

from __future__ import annotations

import hashlib

from domain.fairness import commitment, reveal, seal
from domain.game.events import GameEnded, GameStarted, TrickStarted
from domain.game.setup import new_game
from domain.game.state import Termination


def test_the_commitment_is_sha256_of_the_documented_encoding() -> None:
    salt, seed = "00ff" * 16, "a1b2" * 8
    message = f"mmk-seed-commitment/1;{len(salt)}:{salt};{len(seed)}:{seed}".encode()
    assert commitment(seed, salt) == hashlib.sha256(message).hexdigest()
    assert len(commitment(seed, salt)) == 64


def test_the_encoding_is_unambiguous() -> None:
    """Moving characters between salt and seed changes the commitment; the
    lengths count UTF-8 bytes."""
    assert commitment("bc", "a") != commitment("c", "ab")
    assert commitment("1:x", "") != commitment("x", "1:")
    assert (
        commitment("s", "é") == hashlib.sha256(b"mmk-seed-commitment/1;2:\xc3\xa9;1:s").hexdigest()
    )


def test_seal_sets_commitment_and_practice_on_game_started_only() -> None:
    events = new_game(3, "x").events
    sealed = seal(events, "c0ffee", True)
    started = sealed[0]
    assert isinstance(started, GameStarted)
    assert (started.seed_commitment, started.practice) == ("c0ffee", True)
    assert sealed[1:] == events[1:] and isinstance(sealed[1], TrickStarted)
    assert started.seen_by(None).seed_commitment == "c0ffee"  # every audience
    assert started.seen_by(2).practice is True


def test_reveal_sets_seed_and_salt_on_game_ended_only() -> None:
    ended = GameEnded(Termination.NO_CARDS_LEFT, (1,), (), (0, 3, 1))
    other = new_game(3, "x").events
    assert reveal(other, "s", "t") == other
    revealed = reveal([*other, ended], "s", "t")
    assert revealed[:-1] == other
    last = revealed[-1]
    assert isinstance(last, GameEnded) and (last.seed, last.salt) == ("s", "t")
    assert last.seen_by(None) == last  # public
