"""The composition root: settings in, wired use-case dependencies out."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from sqlalchemy import Engine

from domain.services.bots import drive_bots, resume_stalled_bots
from domain.services.deps import Deps
from infra.bot_scheduler import BotScheduler, StalledBotSweeper
from infra.bus.memory import InProcessBus
from infra.bus.redis import RedisBus
from infra.clock import SystemClock
from infra.db.engine import make_engine
from infra.db.migrate import upgrade
from infra.db.uow import SqlUnitOfWorkFactory
from infra.ids import RandomIds
from infra.settings import Settings

T = TypeVar("T")


async def run_in_thread(fn: Callable[[], T]) -> T:
    """One hop to a worker thread per transaction (domain.ports.BlockingRunner)."""
    return await asyncio.to_thread(fn)


@dataclass
class Container:
    """Everything a running server holds; ``aclose`` releases it."""

    settings: Settings
    deps: Deps
    engine: Engine
    bus: InProcessBus | RedisBus
    bots: BotScheduler
    sweeper: StalledBotSweeper

    def start(self) -> None:
        """Background work of a running server (call inside its event loop)."""
        self.sweeper.start()

    async def aclose(self) -> None:
        await self.sweeper.aclose()
        await self.bots.aclose()
        await self.bus.aclose()
        self.engine.dispose()


def build(settings: Settings, *, migrate: bool = True) -> Container:
    """Wire the adapters the settings name; apply migrations first."""
    engine = make_engine(settings.database_url)
    if migrate:
        upgrade(engine)
    bus: InProcessBus | RedisBus
    if settings.redis_url:
        bus = RedisBus(settings.redis_url, settings.channel_prefix, settings.bus_queue_limit)
    else:
        bus = InProcessBus(settings.bus_queue_limit)
    bots = BotScheduler()
    deps = Deps(
        uow=SqlUnitOfWorkFactory(engine),
        run=run_in_thread,
        bus=bus,
        clock=SystemClock(),
        ids=RandomIds(),
        schedule_bots=bots,
    )
    bots.bind(lambda game_id: drive_bots(deps, game_id))
    sweeper = StalledBotSweeper(lambda idle: resume_stalled_bots(deps, idle))
    return Container(settings, deps, engine, bus, bots, sweeper)
