"""The bounded map of fair shares behind the persisted queries
(infra/fair_lru.py, docs/decisions/0052): an owner evicts its own entries,
or those of an owner holding more than it, never anyone else's."""

from __future__ import annotations

import pytest

from infra.fair_lru import FairLRU


def test_an_owner_over_its_share_loses_its_own_least_recently_used() -> None:
    fair: FairLRU[str, int] = FairLRU(size=10, per_owner=2)
    fair.put("b1", 0, "bob")
    fair.put("a1", 1, "ann")
    fair.put("a2", 2, "ann")
    assert fair.get("a1") == 1  # now ann's most recent
    fair.put("a3", 3, "ann")
    assert ("a2" in fair, fair.get("a1"), fair.get("a3")) == (False, 1, 3)
    assert fair.held_by("ann") == 2 and fair.get("b1") == 0


def test_when_full_the_owner_holding_most_gives_way() -> None:
    fair: FairLRU[str, int] = FairLRU(size=4, per_owner=3)
    for key in ("a1", "a2", "a3"):
        fair.put(key, 0, "ann")
    fair.put("b1", 0, "bob")
    fair.put("c1", 0, "cid")  # full: ann holds most, her oldest goes
    assert "a1" not in fair and len(fair) == 4
    assert [fair.held_by(o) for o in ("ann", "bob", "cid")] == [2, 1, 1]
    fair.put("c2", 0, "cid")  # ann still holds most (2 against 1 and 1)
    assert "a2" not in fair and fair.held_by("cid") == 2


def test_one_owner_cannot_flush_the_others() -> None:
    """The trial's: 700 registrations from one client pushed the first one
    out of a 512-entry LRU."""
    fair: FairLRU[str, str] = FairLRU(size=512, per_owner=64)
    others = {f"q{i}": f"client{i % 20}" for i in range(200)}
    for key, owner in others.items():
        fair.put(key, key, owner)
    for i in range(700):
        fair.put(f"flood{i}", "x", "attacker")
    assert all(fair.get(key) == key for key in others)
    assert fair.held_by("attacker") == 64 and len(fair) == 264
    # Many attackers (one each address) fill the store: they give way to
    # each other, not to the owners of fewer entries.
    for n in range(10):
        for i in range(64):
            fair.put(f"flood{n}.{i}", "x", f"attacker{n}")
    assert len(fair) == 512 and all(fair.get(key) == key for key in others)


def test_a_key_kept_stays_its_first_owners() -> None:
    fair: FairLRU[str, int] = FairLRU(size=4, per_owner=1)
    fair.put("q", 1, "ann")
    fair.put("q", 2, "bob")  # bob registers what ann did: nothing of his
    assert fair.get("q") == 2 and fair.held_by("ann") == 1 and fair.held_by("bob") == 0


def test_a_share_fits_the_whole() -> None:
    with pytest.raises(ValueError, match="at most all"):
        FairLRU(size=2, per_owner=3)
