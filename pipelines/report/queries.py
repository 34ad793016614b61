"""What the report reads from the database: every query the page runs (their SQL in sql/), as
lists of row dicts. Only reads, so a read-only connection to the published database works."""

from collections.abc import Sequence
from datetime import date
from typing import Any

import duckdb

from pipelines.query.rows import records
from pipelines.warehouse.sql_files import sql_text
from pipelines.warehouse.sql_reads import tables_read_by_sql_dir
from pipelines.warehouse.tables import ADVICE_TABLE, INDEX_TABLE

__all__ = ["ADVICE_TABLE", "OPTIONAL_TABLES", "REPORT_TABLES", "named_query", "table_names"]

# advisor.workload_advice is written by the advisor asset; optional: the page says so when it is
# not there yet.
# Read when there: a simulated database's truth (the banner); the advice; the price index
# (written by its own step, after the models).
OPTIONAL_TABLES = frozenset({ADVICE_TABLE, "truth.scenario", INDEX_TABLE})
# Counted in Python (check_tables), not read by the page's SQL.
COUNTED_TABLES = frozenset({"observations", "quarantine"})
# Every table the page reads, as its SQL files say (the asset depends on exactly these): derived,
# never listed by hand (pipelines/warehouse/sql_reads.py).
REPORT_TABLES = tuple(sorted((tables_read_by_sql_dir(__file__) - OPTIONAL_TABLES)
                             | COUNTED_TABLES))


class ReportError(RuntimeError):
    pass


def named_query(con: duckdb.DuckDBPyConnection, name: str,
                params: Sequence[Any] = ()) -> list[dict]:
    """The rows of sql/<name>.sql."""
    return records(con, sql_text(__file__, name), params)


def table_names(con: duckdb.DuckDBPyConnection) -> set[str]:
    """Every table, named as the report names it: `observations`, `marts.cheapest_offers`."""
    rows = con.execute("select table_schema, table_name from information_schema.tables")
    return {name if schema == "main" else f"{schema}.{name}" for schema, name in rows.fetchall()}


def check_tables(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Row count of every table the page reads; a missing one is an error naming it."""
    existing = table_names(con)    # one catalog query, not one per table
    missing = [t for t in REPORT_TABLES if t not in existing]
    if missing:
        raise ReportError(f"the report reads tables that do not exist: {', '.join(missing)} "
                          "(build the SQL models of dbt_like_sql/ first)")
    # table names come from REPORT_TABLES above, never from data
    return {t: con.execute(f"select count(*) from {t}").fetchone()[0] for t in REPORT_TABLES}


def has_advice(con: duckdb.DuckDBPyConnection) -> bool:
    return ADVICE_TABLE in table_names(con)


def latest_day(con: duckdb.DuckDBPyConnection, table: str) -> date | None:
    """The latest `day` of a signal mart (one of REPORT_TABLES), None when it is empty."""
    return con.execute(f"select max(day) from {table}").fetchone()[0]


def advice_computed_at(con: duckdb.DuckDBPyConnection) -> Any:
    return con.execute(f"select max(computed_at) from {ADVICE_TABLE}").fetchone()[0]
