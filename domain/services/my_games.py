"""Use cases: a player's own games and their record (issue #24), read from
the ``game_seats`` index (domain/my_games.py), never by decoding games."""

from __future__ import annotations

from domain.my_games import MyGame, MyGamesPage, SeatName, StatLine
from domain.records import GameStatus
from domain.services.deps import Deps
from domain.services.queries import check_limit


async def my_games(
    deps: Deps,
    player_id: str,
    status: GameStatus | None,
    your_turn: bool | None,
    after: tuple[str, str] | None,
    limit: int,
) -> MyGamesPage:
    """The games the player sits in: those waiting for them first, the
    nearest deadline first; then the others, the most recent change for
    them first; each with who sits where."""
    check_limit(limit)

    def tx() -> MyGamesPage:
        with deps.uow() as uow:
            rows = uow.games.player_games(player_id, status, your_turn, after, limit + 1)
            people = {o.player_id for _, _, seats in rows for o in seats if o and o.player_id}
            names = uow.players.names(people)
        items = [
            MyGame(
                entry,
                summary,
                tuple(
                    SeatName(
                        i,
                        None if o is None else o.player_id,
                        None if o is None or o.player_id is None else names.get(o.player_id),
                        None if o is None or o.bot is None else o.bot.value,
                    )
                    for i, o in enumerate(seats)
                ),
            )
            for entry, summary, seats in rows[:limit]
        ]
        return MyGamesPage(items, len(rows) > limit)

    return await deps.run(tx)


async def my_stats(deps: Deps, player_id: str) -> list[StatLine]:
    """The player's finished games by format and seat count."""

    def tx() -> list[StatLine]:
        with deps.uow() as uow:
            return uow.games.player_stats(player_id)

    return await deps.run(tx)
