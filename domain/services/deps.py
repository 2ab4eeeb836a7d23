"""The ports a use case needs, wired once by the composition root."""

from __future__ import annotations

from dataclasses import dataclass

from domain.ports import BlockingRunner, BotScheduler, Clock, EventBus, Ids, UnitOfWorkFactory


@dataclass(frozen=True, slots=True)
class Deps:
    uow: UnitOfWorkFactory
    run: BlockingRunner
    bus: EventBus
    clock: Clock
    ids: Ids
    schedule_bots: BotScheduler
