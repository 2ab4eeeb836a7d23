"""Generated worst cases for the request limits (issue #14): documents built
from the shapes that make graphql-core's validation or the executor work
hard (same-name fields, aliased costly fields, fragments spreading
fragments, side-by-side spreads, big pages, deep nesting), in random sizes
around the limits. Used by tests/property/test_costly_documents.py and
tests/bench/test_abuse_bench.py."""

from __future__ import annotations

import random

LEAVES = ("__typename", "me { id }", "me { player { id name } }", "cardCatalog { id }")
PAGES = (
    'gameEvents(gameId: "g", first: {n}) {{ ... on GameEventPage {{ events {{ seq at }} }} }}',
    "games(first: {n}) {{ ... on GameConnection {{ edges {{ node {{ id status }} }} }} }}",
)


def _field(rng: random.Random) -> str:
    if rng.random() < 0.3:
        return rng.choice(PAGES).format(n=rng.choice((1, 10, 50, 100)))
    return rng.choice(LEAVES)


def document(seed: int) -> str:
    """One generated document (the same for the same seed)."""
    rng = random.Random(seed)
    kind = rng.randrange(6)
    if kind == 0:  # one field, many times
        return "{ " + (_field(rng) + " ") * rng.randint(10, 200) + "}"
    if kind == 1:  # aliased copies of costly fields
        n = rng.randint(2, 20)
        return "{ " + " ".join(f"a{i}: {_field(rng)}" for i in range(n)) + " }"
    if kind == 2:  # fragments spreading the next one, fan-out f, d deep
        fan, depth = rng.randint(2, 10), rng.randint(2, 12)
        body = " ".join(
            f"fragment F{i} on Query {{ " + f"...F{i + 1} " * fan + "}" for i in range(depth)
        )
        return f"{{ ...F0 }} {body} fragment F{depth} on Query {{ {_field(rng)} }}"
    if kind == 3:  # many fragments side by side, alike
        n = rng.randint(2, 40)
        spreads = " ".join(f"...F{i}" for i in range(n))
        fragments = " ".join(f"fragment F{i} on Query {{ {_field(rng)} }}" for i in range(n))
        return f"{{ {spreads} }} {fragments}"
    if kind == 4:  # many operations over one fragment
        n = rng.randint(2, 300)
        fragment = f"fragment F on Query {{ {_field(rng)} {_field(rng)} }}"
        return fragment + " " + " ".join(f"query Q{i} {{ ...F }}" for i in range(n))
    depth = rng.randint(1, 30)  # nesting (a type reference's ofType, d deep)
    return '{ __type(name: "Game") { ' + "ofType { " * depth + "name" + " }" * depth + " } }"
