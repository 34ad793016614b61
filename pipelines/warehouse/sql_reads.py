"""Which tables a SQL text reads, from the SQL itself (sqlglot, DuckDB dialect), as the models'
dependencies are found (sql_models.py): so the inputs of an asset that runs SQL files (the
report's tables, the alerts' inputs) can be derived from its sql/ folder instead of listed by
hand. The SQL that Python runs binds `?` and `$name` parameters, which stand as NULL here; a
str.format template (`{select}`) is read once filled in."""

from __future__ import annotations

import re
from pathlib import Path

import sqlglot
from sqlglot import exp

# `?` and `$name` (not `$$`, nor a `$` inside a word); a value either way, never a table
PARAMETER = re.compile(r"\?|(?<![\w$])\$[A-Za-z_]\w*")
# statements whose `this` is the table they write
WRITES = (exp.Create, exp.Insert, exp.Update, exp.Delete, exp.Drop, exp.Alter)


class SqlReadsError(ValueError):
    pass


def table_name(table: exp.Table) -> str:
    """A table as the models name it: `observations`, `marts.latest_prices` (main is no schema)."""
    return f"{table.db}.{table.name}" if table.db and table.db != "main" else table.name


def _statements(sql: str, where: str) -> list[exp.Expression]:
    if re.search(r"(?<!\{)\{[a-z_]+\}", sql):
        raise SqlReadsError(f"{where}: a str.format template; pass the SQL once filled in")
    try:
        return [s for s in sqlglot.parse(PARAMETER.sub("NULL", sql), dialect="duckdb") if s]
    except sqlglot.errors.ParseError as exc:
        raise SqlReadsError(f"{where}: SQL syntax error: {exc}") from exc


def _written(statement: exp.Expression) -> set[str]:
    if not isinstance(statement, WRITES):
        return set()
    if isinstance(statement, exp.Create | exp.Drop) and str(
            statement.args.get("kind", "")).upper() not in ("TABLE", "VIEW"):
        return set()     # a schema, a macro, an index: no table
    target = statement.this
    table = target if isinstance(target, exp.Table) else target.find(exp.Table)
    return {table_name(table)} if table is not None else set()


def reads_and_writes(sql: str, where: str = "<sql>") -> tuple[frozenset[str], frozenset[str]]:
    """(tables read, tables written) by every statement of `sql`: a CTE is no table, and the
    target of a create, insert, update, delete, drop or alter is written, not read."""
    read: set[str] = set()
    written: set[str] = set()
    for statement in _statements(sql, where):
        ctes = {cte.alias_or_name for cte in statement.find_all(exp.CTE)}
        targets = _written(statement)
        written |= targets
        for table in statement.find_all(exp.Table):
            name = table_name(table)
            if not table.name or (not table.db and table.name in ctes) or name in targets:
                continue
            read.add(name)
    return frozenset(read), frozenset(written)


def tables_read(sql: str, where: str = "<sql>") -> frozenset[str]:
    """Every table `sql` reads (see reads_and_writes)."""
    return reads_and_writes(sql, where)[0]


def tables_read_by_sql_dir(module_file: str) -> frozenset[str]:
    """Every table the SQL files of `sql/` beside `module_file` (pass `__file__`) read, but those
    the same files make (a temporary table one file creates and the next reads): the inputs of
    the module that runs them. Templates are left out (their tables come with what fills them)."""
    folder = Path(module_file).resolve().parent / "sql"
    read: set[str] = set()
    made: set[str] = set()
    for path in sorted(folder.glob("*.sql")):
        sql = path.read_text(encoding="utf-8")
        try:
            file_reads, file_writes = reads_and_writes(sql, str(path))
        except SqlReadsError:
            if re.search(r"(?<!\{)\{[a-z_]+\}", sql):
                continue
            raise
        read |= file_reads
        made |= file_writes
    return frozenset(read - made)
