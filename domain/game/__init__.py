"""The rules engine of Muffin's Magical Kingdom (docs/rules.md, R1-R11).

Commands in, events out: :func:`domain.game.engine.apply` validates a command
for a seat and mutates the state only when it is legal; every refusal raises a
:class:`domain.game.errors.GameError` and leaves the state unchanged.
Hidden information leaves the state only through :mod:`domain.game.views` and
the per-audience projections of :mod:`domain.game.events`.
"""
