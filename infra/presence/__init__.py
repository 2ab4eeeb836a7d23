"""Seat presence adapters (domain.ports.PresenceStore, docs/decisions/0047)."""
