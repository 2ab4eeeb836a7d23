"""The GraphQL API (Strawberry): schema, types per audience, resolvers."""
