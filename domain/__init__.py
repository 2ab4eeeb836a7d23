"""MMK domain: the pure game (rules engine, bots). No framework, no I/O."""
