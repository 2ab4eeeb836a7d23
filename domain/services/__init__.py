"""Use cases: one per API operation. The only code that talks to ports."""
