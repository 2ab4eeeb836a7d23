"""Spectator counts per game (issue #28, domain.ports.SpectatorCounts)."""
