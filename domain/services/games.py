"""Use cases: creating a game and the lobby (join, leave, bots, start)."""

from __future__ import annotations

from dataclasses import dataclass, field

from domain import lobby
from domain.bots.strategy import Strategy
from domain.errors import NotFound
from domain.game.boosters import BoosterPack
from domain.game.options import Format, GameOptions
from domain.lobby import Batch, Draft
from domain.ports import UnitOfWork
from domain.records import BoosterRecord, GameRecord
from domain.services.deps import Deps
from domain.services.mutation import (
    Committed,
    Request,
    after_commit,
    mutate,
    record_events,
    remember,
    replay,
    run_keyed,
)
from domain.services.results import EventView, MutationResult


@dataclass(frozen=True, slots=True)
class NewGame:
    """What a host chooses (API ``createGame``)."""

    seat_count: int
    options: GameOptions = field(default_factory=GameOptions)
    seed: str | None = None
    rat_seat: int | None = None
    take_seat: bool = True


async def create_game(deps: Deps, req: Request, spec: NewGame) -> MutationResult:
    """A lobby; the host takes seat 0 unless ``take_seat`` is false."""
    lobby.check_new_game(spec.seat_count, spec.rat_seat)

    def tx() -> tuple[MutationResult, Committed | None]:
        with deps.uow() as uow:
            stored = replay(uow, req)
            if stored is not None:
                return MutationResult.from_dict(stored), None
            host = uow.players.get(req.player_id)
            if host is None:
                raise NotFound("no such player")
            now = deps.clock.now()
            game = GameRecord(
                id=deps.ids.new_id(),
                host=host.id,
                seat_count=spec.seat_count,
                options=spec.options,
                seed=spec.seed or deps.ids.new_seed(),
                rat_choice=spec.rat_seat,
                seats=[None] * spec.seat_count,
                created_at=now,
                updated_at=now,
            )
            drafts: list[Draft] = [
                (
                    "GameCreated",
                    {
                        "host": host.id,
                        "seatCount": spec.seat_count,
                        "format": spec.options.format.value,
                        "abilityTrigger": spec.options.ability_trigger.value,
                        "refillHands": spec.options.refill_hands,
                        "ratSeat": spec.rat_seat,
                    },
                    {},
                )
            ]
            if spec.take_seat:
                drafts += lobby.join(game, host.id, host.name, 0)
            events = record_events(deps, game, Batch(drafts))
            uow.games.add(game)
            uow.events.append(events)
            seat = game.seat_of(host.id)
            result = MutationResult(
                game.id, game.version, tuple(EventView.of(e, seat) for e in events)
            )
            remember(uow, deps, req, result.to_dict)
            done = Committed.of(game, events, True)
            uow.commit()
        return result, done

    result, done = await run_keyed(deps, req, tx)
    if done is not None:
        await after_commit(deps, done)
    return result


async def join_game(deps: Deps, req: Request, game_id: str, seat: int | None) -> MutationResult:

    def change(uow: UnitOfWork, game: GameRecord) -> Batch:
        player = uow.players.get(req.player_id)
        if player is None:
            raise NotFound("no such player")
        return Batch(lobby.join(game, player.id, player.name, seat))

    return await mutate(deps, req, game_id, change)


async def leave_game(deps: Deps, req: Request, game_id: str) -> MutationResult:

    return await mutate(
        deps, req, game_id, lambda uow, game: Batch(lobby.leave(game, req.player_id))
    )


async def add_bot(
    deps: Deps, req: Request, game_id: str, strategy: Strategy, seat: int | None
) -> MutationResult:

    return await mutate(
        deps,
        req,
        game_id,
        lambda uow, game: Batch(lobby.add_bot(game, req.player_id, strategy, seat)),
    )


def _collections(uow: UnitOfWork, game: GameRecord) -> list[list[str]] | None:
    """R3.3: each seated person's opened packs; bots bring none."""
    if game.options.format is not Format.FORMER_SEALED:
        return None
    out: list[list[str]] = []
    for o in game.seats:
        if o is None or o.player_id is None:
            out.append([])
        else:
            out.append([d for r in uow.boosters.of_player(o.player_id) for d in r.pack.numbered])
    return out


def _keep_packs(
    deps: Deps, uow: UnitOfWork, game: GameRecord, packs: dict[int, BoosterPack]
) -> None:
    """R3.2: a seated person's sealed pack joins their collection."""
    for seat, pack in packs.items():
        o = game.seats[seat]
        if o is not None and o.player_id is not None:
            uow.boosters.add(
                BoosterRecord(deps.ids.new_id(), o.player_id, pack, deps.clock.now(), game.id)
            )


async def start_game(deps: Deps, req: Request, game_id: str) -> MutationResult:
    """The host starts a full game (R4)."""

    def change(uow: UnitOfWork, game: GameRecord) -> Batch:
        setup, batch = lobby.start(game, req.player_id, _collections(uow, game))
        _keep_packs(deps, uow, game, setup.packs)
        return batch

    return await mutate(deps, req, game_id, change)
