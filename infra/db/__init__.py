"""SQL persistence adapters: tables, mappers, engine, unit of work, migrations."""
