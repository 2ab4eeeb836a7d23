"""R11: views are built lazily (docs/decisions/0037), yet each is what its
viewer could see when it was made: later changes of the state never show
through a field first read after them, and a lazily built view reads,
compares, hashes and prints as one built whole."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from domain.game.engine import apply
from domain.game.setup import new_game
from domain.game.views import PlayerView, PublicView, player_view, spectator_view
from tests.golden.regenerate import GAMES, GoldenDriver, new
from tests.jsonable import to_jsonable


def test_r11_a_view_read_after_later_changes_shows_the_state_when_it_was_made() -> None:
    """A golden game (messages sent, delivered, declined and expired; face-down
    plays; decisions): at every step each audience's view is made and left
    unread, and read only after the next change; it must equal a view of
    that step read at once."""
    game = GAMES[1]
    state = new(game).state
    driver = GoldenDriver(game)
    steps = 0
    while (move := driver.next(state)) is not None:
        unread: list[Any] = [spectator_view(state)]
        unread += [player_view(state, s) for s in range(state.n)]
        at_once = [to_jsonable(spectator_view(state))]
        at_once += [to_jsonable(player_view(state, s)) for s in range(state.n)]
        apply(state, *move)
        assert [to_jsonable(v) for v in unread] == at_once
        steps += 1
    assert steps > 100


def _whole(view: Any) -> Any:
    """The same view built whole, through its constructor."""
    kind = type(view)
    return kind(**{f.name: getattr(view, f.name) for f in dataclasses.fields(kind)})


@pytest.mark.parametrize("seat", [None, 0, 2])
def test_r11_a_lazy_view_is_a_view_built_whole(seat: int | None) -> None:
    state = new_game(4, seed=21, rat=0).state
    make = (lambda: spectator_view(state)) if seat is None else (lambda: player_view(state, seat))
    view = make()
    whole = _whole(make())
    assert type(view) is type(whole) is (PublicView if seat is None else PlayerView)
    assert view == whole and hash(make()) == hash(whole) and repr(make()) == repr(whole)
    assert dataclasses.replace(make()) == whole
    unread: Any = make()
    with pytest.raises(dataclasses.FrozenInstanceError):
        unread.seats = ()
    with pytest.raises(AttributeError):
        unread.no_such_field  # noqa: B018 (the attribute read is the test)
