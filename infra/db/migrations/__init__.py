"""Alembic migrations (applied by :func:`infra.db.migrate.upgrade`)."""
