"""The document cache cannot be flushed by one-off keys (issue #14)."""

from __future__ import annotations

import pytest

from infra.admission_cache import AdmissionCache


def test_a_key_asked_for_twice_is_kept_and_a_flood_of_new_keys_does_not_evict_it() -> None:
    cache: AdmissionCache[str, int] = AdmissionCache(size=4, probation=2)
    for key in ("a", "b", "c", "d"):
        cache.put(key, 1)
        assert cache.get(key) == 1  # asked again: kept
    for i in range(1_000):  # an attacker's unique documents, each once
        cache.put(f"x{i}", i)
    assert all(cache.get(k) == 1 for k in "abcd")
    assert len(cache) == 4 + 2


def test_a_newcomer_displaces_the_least_recent_kept_key_only_when_asked_for_more_often() -> None:
    cache: AdmissionCache[str, int] = AdmissionCache(size=2, probation=4)
    for key in ("a", "b"):
        cache.put(key, 0)
        cache.get(key)  # kept; the second admission halves the counts: a=1, b=1
    for _ in range(3):
        cache.get("a")  # a=4
    cache.get("b")  # b=2, and "a" is now the least recently used
    cache.put("c", 1)
    for _ in range(3):
        assert cache.get("c") == 1  # c=2, 3, 4: not more than a's 4, still on probation
        assert "a" in cache
    assert cache.get("c") == 1  # c=5: it takes a's place
    assert "a" not in cache and "b" in cache and "c" in cache


def test_unseen_keys_live_in_probation_only() -> None:
    cache: AdmissionCache[str, int] = AdmissionCache(size=2, probation=1)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") is None and cache.get("b") == 2


def test_sizes_are_checked() -> None:
    with pytest.raises(ValueError):
        AdmissionCache(size=0, probation=1)
