"""Event buses: in-process (embedded default) and Redis pub/sub (scale-out)."""
