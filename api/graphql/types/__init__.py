"""GraphQL types, one concept per module, each built from domain values."""
