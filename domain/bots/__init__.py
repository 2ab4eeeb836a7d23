"""Bots: pick a command from a seat's view and legal actions only, never
from the full state (R11)."""
