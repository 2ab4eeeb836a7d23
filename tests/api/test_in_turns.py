"""A long list is completed a few items at a time (api/graphql/in_turns.py,
issue #22): the event loop serves others between its items, and the result
is the list itself."""

from __future__ import annotations

import asyncio

import strawberry

from api.graphql.in_turns import EVERY, in_turns

TICKS = [0]


@strawberry.type
class Item:
    n: int

    @strawberry.field
    def tick(self) -> int:
        """The loop's turns counted when this item was completed."""
        return TICKS[0]


@strawberry.type
class Query:
    @strawberry.field
    def in_turns(self) -> list[Item]:
        return in_turns([Item(n=n) for n in range(10)])

    @strawberry.field
    def at_once(self) -> list[Item]:
        return [Item(n=n) for n in range(10)]


SCHEMA = strawberry.Schema(query=Query)


async def _executed(field: str) -> list[dict[str, int]]:
    done = asyncio.Event()

    async def ticker() -> None:
        while not done.is_set():
            TICKS[0] += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    result = await SCHEMA.execute(f"{{ {field} {{ n tick }} }}")
    done.set()
    await task
    assert result.errors is None, result.errors
    assert result.data is not None
    items: list[dict[str, int]] = result.data[field.replace("_", "")]
    return items


async def test_a_long_list_lets_the_loop_run_between_its_items() -> None:
    items = await _executed("inTurns")
    assert [i["n"] for i in items] == list(range(10))
    ticks = [i["tick"] for i in items]
    assert ticks == sorted(ticks)
    assert ticks[-1] - ticks[0] >= 10 // EVERY - 1  # the loop ran between them


async def test_a_list_returned_whole_is_completed_in_one_go() -> None:
    """The control: without turns every item is completed in the same turn."""
    items = await _executed("atOnce")
    assert [i["n"] for i in items] == list(range(10))
    assert len({i["tick"] for i in items}) == 1


def test_a_short_list_is_the_list_itself() -> None:
    assert in_turns([1, 2][:EVERY]) == [1, 2][:EVERY]
