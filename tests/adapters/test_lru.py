"""The one bounded LRU behind the server's caches (infra/lru.py)."""

from __future__ import annotations

import threading

import pytest

from infra.lru import LRU


def test_it_forgets_the_least_recently_used_entry_first() -> None:
    lru: LRU[str, int] = LRU(2)
    lru.put("a", 1)
    lru.put("b", 2)
    assert lru.get("a") == 1  # "a" is now the most recent
    lru.put("c", 3)
    assert lru.get("b") is None
    assert (lru.get("a"), lru.get("c"), len(lru)) == (1, 3, 2)


def test_a_put_replaces_and_refreshes_an_entry() -> None:
    lru: LRU[str, int] = LRU(2)
    lru.put("a", 1)
    lru.put("b", 2)
    lru.put("a", 10)
    lru.put("c", 3)
    assert (lru.get("a"), lru.get("b"), lru.get("c")) == (10, None, 3)


def test_hits_count_the_lookups_that_found_their_key() -> None:
    lru: LRU[str, int] = LRU(4)
    lru.put("a", 1)
    lru.get("a")
    lru.get("zzz")
    lru.get("a")
    assert lru.hits == 2


def test_it_holds_at_least_one_entry() -> None:
    with pytest.raises(ValueError):
        LRU(0)


def test_threads_never_grow_it_past_its_size() -> None:
    lru: LRU[int, int] = LRU(50)

    def work(base: int) -> None:
        for i in range(2_000):
            lru.put(base + i % 97, i)
            lru.get(base + (i * 7) % 97)

    threads = [threading.Thread(target=work, args=(k * 1000,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(lru) == 50


def test_a_conditional_put_keeps_what_it_is_told_to() -> None:
    lru: LRU[str, int] = LRU(4)
    lru.put("a", 5)
    lru.put("a", 3, replaces=lambda kept: kept <= 3)
    assert lru.get("a") == 5
    lru.put("a", 7, replaces=lambda kept: kept <= 7)
    lru.put("b", 1, replaces=lambda kept: False)  # nothing kept yet: put
    assert (lru.get("a"), lru.get("b")) == (7, 1)
