"""What a model promises about its rows, declared in its header and checked after it is built,
before anything is published (SQLMesh-style audits):

* `-- grain: <column>, <column>, ...`: the columns that make a row unique; a key held by two
  rows is a failure;
* `-- audit: <name>: <condition>`: a bad row is one where the SQL condition is true (the audit's
  query is `select * from <table> where <condition>`); any row is a failure. One line per audit.

Every mart declares a grain and at least one audit (tests/sql/test_model_contracts.py); the other
layers may. A mart Python writes declares them in the header of its DDL file (`DeclaredTable`:
marts.price_index in pipelines/index/sql/create_price_index.sql), and its asset runs the same
blocking check after it writes (pipelines/defs/index.py). The runner (pipelines/defs/models.py)
reports each model's contract as a blocking asset check: a failure names the model and the audit,
with the bad rows' count and a sample, and stops the publish (the published database is one copy
of the whole working one). The SQL that checks the grain is sql/grain_duplicates.sql beside this
module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import sqlglot

from pipelines.warehouse.contract_scope import ALL_ROWS, Rows
from pipelines.warehouse.sql_files import sql_text
from pipelines.warehouse.sql_models import SqlModel, SqlModelError

GRAIN = re.compile(r"^--\s*grain:(.*)$", re.M)
AUDIT = re.compile(r"^--\s*audit:(.*)$", re.M)
AUDIT_BODY = re.compile(r"\s*(\w+)\s*:\s*(\S.*?)\s*")
# The name of the grain's own check among a model's audits.
GRAIN_AUDIT = "grain"
# How many bad rows a failure shows.
SAMPLE_ROWS = 5


@dataclass(frozen=True)
class DeclaredTable:
    """A table a Python asset writes, whose DDL file's header declares its grain and audits as a
    model's header does."""
    table: str
    path: Path
    sql: str


def declared_table(table: str, ddl: Path) -> DeclaredTable:
    return DeclaredTable(table, ddl, ddl.read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Audit:
    name: str
    condition: str      # SQL: true for a bad row

    def bad_rows_sql(self, table: str) -> str:
        return f"select * from {table} where ({self.condition})"


@dataclass(frozen=True)
class ModelContract:
    grain: tuple[str, ...]
    audits: tuple[Audit, ...]


@dataclass(frozen=True)
class AuditFailure:
    table: str
    audit: str            # an audit's name, or "grain"
    bad_rows: int         # for the grain: the keys held by more than one row
    sample: list[dict]    # the first SAMPLE_ROWS bad rows (for the grain: the key and its copies)

    @property
    def message(self) -> str:
        what = "keys held by more than one row" if self.audit == GRAIN_AUDIT else "bad rows"
        return f"{self.table}: audit {self.audit!r} failed: {self.bad_rows} {what}"


def _line(sql: str, match: re.Match) -> int:
    return sql.count("\n", 0, match.start()) + 1


def _checked_condition(condition: str, where: str) -> str:
    try:
        sqlglot.parse_one(f"select 1 where {condition}", dialect="duckdb")
    except sqlglot.errors.ParseError as exc:
        raise SqlModelError(f"{where}: the audit's condition is not SQL: {exc}") from exc
    return condition


@lru_cache(maxsize=256)
def model_contract(model: SqlModel | DeclaredTable) -> ModelContract:
    """The grain and audits `model`'s header declares (empty when it declares none); a header line
    that does not read raises SqlModelError naming the file and the line."""
    grains = list(GRAIN.finditer(model.sql))
    if len(grains) > 1:
        raise SqlModelError(f"{model.path}:{_line(model.sql, grains[1])}: one `-- grain:` line "
                            "per model")
    grain: tuple[str, ...] = ()
    if grains:
        grain = tuple(c.strip() for c in grains[0].group(1).split(","))
        if not all(re.fullmatch(r"\w+", c) for c in grain):
            raise SqlModelError(f"{model.path}:{_line(model.sql, grains[0])}: expected "
                                f"'-- grain: <column>, <column>', got {grains[0].group(0)!r}")
    audits: list[Audit] = []
    for match in AUDIT.finditer(model.sql):
        where = f"{model.path}:{_line(model.sql, match)}"
        body = AUDIT_BODY.fullmatch(match.group(1))
        if not body:
            raise SqlModelError(f"{where}: expected '-- audit: <name>: <condition of a bad row>',"
                                f" got {match.group(0)!r}")
        if body.group(1) in {a.name for a in audits} | {GRAIN_AUDIT}:
            raise SqlModelError(f"{where}: audit {body.group(1)!r} is named twice")
        audits.append(Audit(body.group(1), _checked_condition(body.group(2), where)))
    return ModelContract(grain, tuple(audits))


def _rows(cursor) -> list[dict]:
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, (str(v) if v is not None else None for v in row), strict=True))
            for row in cursor.fetchall()]


def _counts_sql(model: SqlModel | DeclaredTable, contract: ModelContract, rows: Rows) -> str:
    grain = "select 0"
    if contract.grain:
        # the grain on the checked rows only when its key holds the bounding column
        grain_table = "checked" if rows.column in contract.grain else model.table
        duplicates = sql_text(__file__, "grain_duplicates").format(
            table=grain_table, keys=", ".join(contract.grain))
        grain = f"select count(*) from ({duplicates})"
    audits = ",\n    ".join(f"count(*) filter (where ({a.condition}))"
                            for a in contract.audits) or "0 as no_audits"
    view = getattr(model, "materialized", "table") == "view"
    return sql_text(__file__, "contract_counts").format(
        materialized="materialized" if view else "not materialized", table=model.table,
        kept=rows.where(), grain=grain, audits=audits)


def check_contract(con, model: SqlModel | DeclaredTable, rows: Rows = ALL_ROWS
                   ) -> tuple[int, list[AuditFailure]]:
    """Run `model`'s grain check and audits on `rows` of its built table (contract_scope.py says
    which; the grain on the whole table unless its key holds the rows' column), in one
    statement; how many rows were read, and the failures (none: it keeps its contract)."""
    contract = model_contract(model)
    checked_rows, duplicates, *bad = con.execute(_counts_sql(model, contract, rows)).fetchone()
    failures = []
    if duplicates:
        grain_table = model.table
        if rows.column in contract.grain:
            grain_table = f"(select * from {model.table} where {rows.where()})"
        keys = ", ".join(contract.grain)
        sample = _rows(con.execute(sql_text(__file__, "grain_duplicates").format(
            table=grain_table, keys=keys) + f" limit {SAMPLE_ROWS}"))
        failures.append(AuditFailure(model.table, GRAIN_AUDIT, duplicates, sample))
    for audit, count in zip(contract.audits, bad, strict=False):
        if count:
            sample = _rows(con.execute(f"{audit.bad_rows_sql(model.table)} and ({rows.where()})"
                                       f" limit {SAMPLE_ROWS}"))
            failures.append(AuditFailure(model.table, audit.name, count, sample))
    return checked_rows, failures


def audit_failures(con, model: SqlModel | DeclaredTable, rows: Rows = ALL_ROWS
                   ) -> list[AuditFailure]:
    """Run `model`'s grain check and audits on its built table (or on `rows` of it); the
    failures (none: it keeps its contract)."""
    return check_contract(con, model, rows)[1]
