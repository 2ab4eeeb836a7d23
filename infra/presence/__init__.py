"""Seat presence adapters (domain.ports.Presence, docs/decisions/0047)."""
