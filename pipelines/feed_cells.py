"""CSV feeds that a spreadsheet can open safely: every text cell goes through the SQL macro
`csv_safe_cell` (sql/csv_safe_cell.sql) as DuckDB writes the CSV.

Scraped text reaches the marts verbatim (a sku, a region, a URL), and a spreadsheet evaluates a
cell starting with `=`, `+`, `-` or `@` as a formula (`=HYPERLINK(...)` links anywhere), shows
control and bidi characters as invisible or reordering marks, and chokes on a megabyte cell. So
in the CSV only: a formula-like cell gets a leading `'`, control and bidi characters become a
space or U+FFFD, and a cell is cut to 1,000 characters ending with `…[truncated]`. Numbers,
booleans, dates and times are written as they are. The Parquet feed and the database keep the
scraped text as scraped: they are data for programs, which never evaluate a cell.
"""

import re

import duckdb

from pipelines.warehouse.sql_files import sql_text

# DuckDB types written as they are: a number, a boolean, a date or a time is never a formula.
UNTOUCHED_TYPE = re.compile(r"U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT)|FLOAT|DOUBLE|"
                            r"DECIMAL\(\d+,\d+\)|BOOLEAN|DATE|INTERVAL|"
                            r"(TIME|TIMESTAMP(_S|_MS|_NS)?)( WITH TIME ZONE)?")


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def csv_safe_select(con, table: str) -> str:
    """The select that writes `table` as a CSV feed: its columns in order, each text (or list,
    or any other non-scalar) column through csv_safe_cell. Creates the macro (a temporary one,
    so a read-only connection works too)."""
    con.execute(sql_text(__file__, "csv_safe_cell"))
    columns = []
    for name, column_type, *_ in con.execute(f"describe {table}").fetchall():
        column = _quoted(name)
        columns.append(column if UNTOUCHED_TYPE.fullmatch(column_type)
                       else f"csv_safe_cell({column}::varchar) as {column}")
    return f"select {', '.join(columns)} from {table}"


def spreadsheet_safe(cells: list[str]) -> list[str]:
    """Text cells as `csv_safe_cell` writes them into a CSV feed, for CSV the CLI prints
    (`gpuprices prices --format csv`): the same rule, applied by the same macro, in one query."""
    with duckdb.connect() as con:
        con.execute(sql_text(__file__, "csv_safe_cell"))
        return con.execute("select list_transform(?::varchar[], lambda cell: csv_safe_cell(cell))",
                           [cells]).fetchone()[0]

