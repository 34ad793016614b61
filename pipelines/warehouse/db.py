"""DuckDB helpers shared by the assets: schema creation and short write transactions."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

from pipelines.warehouse.sql_files import sql_text

# Every connection to the pipeline's databases uses this configuration (DuckDB refuses a second,
# different one to the same file within a process). The newest DuckDB CLI on PyPI is 1.5.x, so
# files are created in the v1.5 storage format it can open; a memory ceiling makes DuckDB spill
# big sorts and joins to disk instead of growing without bound (a year of hourly history needs
# ~9 GB otherwise); GPUPRICES_DUCKDB_MEMORY overrides it.
DUCKDB_CONFIG = {"storage_compatibility_version": "v1.5.0",
                 "memory_limit": os.environ.get("GPUPRICES_DUCKDB_MEMORY", "3GB")}


def ensure_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create the tables the Python assets write (sql/schema.sql), if they are missing."""
    con.execute(sql_text(__file__, "schema"))


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """One atomic write: everything in the block lands, or nothing does."""
    con.execute("begin transaction")
    try:
        yield con
    except BaseException:
        con.execute("rollback")
        raise
    con.execute("commit")
