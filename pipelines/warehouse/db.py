"""DuckDB helpers shared by the assets: schema creation and short write transactions."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

if TYPE_CHECKING:   # the run's preflight reads DUCKDB_CONFIG before anything needs pandas
    import pandas as pd

from pipelines.warehouse.sql_files import sql_text

# Every connection to the pipeline's databases uses this configuration (DuckDB refuses a second,
# different one to the same file within a process). The newest DuckDB CLI on PyPI is 1.5.x, so
# files are created in the v1.5 storage format it can open; a memory ceiling makes DuckDB spill
# big sorts and joins to disk instead of growing without bound (a year of hourly history needs
# ~9 GB otherwise); GPUPRICES_DUCKDB_MEMORY overrides it. At 2.5 GB a full rebuild of a year
# of 2,000 offers peaks at 2.5 GiB of the process (3.0 GiB at 3 GB) and runs no slower.


def temp_limit(data_dir: str | os.PathLike | None = None) -> str:
    """The most DuckDB may spill (max_temp_directory_size): GPUPRICES_DUCKDB_TEMP_MAX, else half
    the space free where the data lives (GPUPRICES_DATA_DIR, else the working directory, whose
    data/ is the default), read once at import: a spill past it fails at once, naming the
    setting, instead of filling the disk (DuckDB's own default, 90 % of the free space, left
    nothing for the database itself when the 20,000-offer year's rebuild spilled ~40 GB)."""
    if os.environ.get("GPUPRICES_DUCKDB_TEMP_MAX"):
        return os.environ["GPUPRICES_DUCKDB_TEMP_MAX"]
    place = Path(data_dir or os.environ.get("GPUPRICES_DATA_DIR") or os.getcwd())
    while not place.exists() and place != place.parent:
        place = place.parent
    return f"{max(shutil.disk_usage(place).free // 2 // 2**20, 1)}MiB"


# The temporary files go where DuckDB puts them by default, `<database>.tmp` beside the database
# (so on the disk the limit above was measured on), and are removed when the connection closes.
DUCKDB_CONFIG = {"storage_compatibility_version": "v1.5.0",
                 "memory_limit": os.environ.get("GPUPRICES_DUCKDB_MEMORY", "2.5GB"),
                 "max_temp_directory_size": temp_limit()}


# The history tables that grow by an hour's rows every run. They carry no primary key: DuckDB
# rewrites a table's whole key index at every checkpoint, which at a year of hourly history
# (17.5 M rows) cost 2.3 s of every run's 2.7 s load and half the file that is published. The
# pipeline keeps them unique instead: one run at a time (the run lock), and every insert skips
# what is already there (publish_batch.sql; a crawl's offers load in the transaction that records
# the crawl, whose crawl_id is raw.crawls' key); a check watches the recent hours.
# raw.crawls (one row per source and hour: its key index cost 0.14 s of a checkpoint at a week of
# 83 sources, 0.5-0.7 s at 56 days) and raw.crawl_first_days, the model runner's cache of one row
# per crawl, grow as they do; a crawl_id is a fresh id per crawl, and the inserts that may meet
# one again (a re-simulated hour, a re-read archive version) skip it.
UNKEYED_HISTORY = (("main", "observations"), ("raw", "offers"), ("raw", "crawls"),
                   ("raw", "crawl_first_days"))


def ensure_schema(con: duckdb.DuckDBPyConnection) -> None:
    """The tables the Python assets write (sql/schema.sql), made if they are missing; a database
    made when the history tables had primary keys gets them rebuilt without, once."""
    keyed = keyed_history_tables(con)
    if keyed:
        drop_history_keys(con, keyed)
    con.execute(sql_text(__file__, "schema"))


def keyed_history_tables(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """The history tables that still carry the primary key of an older version."""
    keyed = {tuple(row) for row in con.execute(sql_text(__file__, "keyed_tables")).fetchall()}
    return [table for table in UNKEYED_HISTORY if table in keyed]


def drop_history_keys(con: duckdb.DuckDBPyConnection, keyed: list[tuple[str, str]]) -> None:
    """Rebuild each table without its key, in one transaction (a rename, the new definition from
    schema.sql, a copy in the stored order): O(table) once, on the first run of this version."""
    con.execute("set enable_progress_bar = false")   # no bar drawn into a run's log
    with transaction(con):
        for schema, table in keyed:
            con.execute(f"alter table {schema}.{table} rename to {table}__keyed")
        con.execute(sql_text(__file__, "schema"))
        for schema, table in keyed:
            con.execute(f"insert into {schema}.{table} by name "
                        f"select * from {schema}.{table}__keyed")
            con.execute(f"drop table {schema}.{table}__keyed")


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


def as_insertable(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with its Decimal values as text, for `insert ... by name select * from frame`.

    DuckDB types an object column of Decimals that holds nulls from a sample of its rows: a
    batch whose sampled prices are all below 10 becomes DECIMAL(7,6), and an unsampled 10.000000
    fails the whole insert ("value is out of range"). As text, each value is cast to the
    column's declared type (DECIMAL(18,6)) exactly."""
    frame = frame.copy()
    for column in frame.select_dtypes(include="object").columns:
        if frame[column].map(lambda v: isinstance(v, Decimal)).any():
            frame[column] = frame[column].map(
                lambda v: format(v, "f") if isinstance(v, Decimal) else v)
    return frame
