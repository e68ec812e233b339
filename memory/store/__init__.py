"""Storage: the store interface (interface.py), connections, transactions, migrations; `repository` holds the SQL.
SQLite by default; `open_store` gives a `postgresql://` location the same interface on PostgreSQL (postgresql.py)."""

from ..clock import utc_now  # the clock lives in memory/clock.py; stored times are read through it
from .connection import Store, open_connection
from .interface import MemoryStore, StoreConnection, open_store
from .location import (IN_MEMORY, DatabaseLocation, absolute, global_data_dir, global_db_path, resolve_db_path,
                       resolve_location, shown)
from .migrations import current_version, load_migrations, migrate, plain_ddl, schema_sql_path

__all__ = [
    "DatabaseLocation", "IN_MEMORY", "MemoryStore", "Store", "StoreConnection", "open_store", "absolute", "current_version", "global_data_dir", "global_db_path", "load_migrations",
    "migrate", "open_connection", "plain_ddl", "resolve_db_path", "resolve_location", "schema_sql_path", "shown",
    "utc_now",
]
