"""dbt_like_sql/: every `<layer>/<model>.sql` file is a table `<layer>.<model>` and an asset.

Dependencies come from the SQL itself (parsed with sqlglot, DuckDB dialect): a model reads
`observations` or another model by its qualified name, and no list is kept by hand. A file that
does not parse, or reads a table nobody builds, fails at load time naming the file and the line.
The first comment of a file is its description; a line `-- materialized: view` makes it a view,
`-- alias: <name>` also publishes it as the view `main.<name>` (so `select * from market_claims`
works in the DuckDB shell), and `-- incremental: <date column>` makes it a table rebuilt only from
the earliest day that has newly loaded observations (delete those days, insert them again): the
result equals a full rebuild as long as each output row depends only on observations of its own
day. The bookkeeping SQL this module runs is in sql/ beside it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import sqlglot
from sqlglot import exp

from pipelines.warehouse.sql_files import sql_text

LAYERS = ("staging", "intermediate", "marts")


class SqlModelError(ValueError):
    pass


@dataclass(frozen=True)
class SqlModel:
    layer: str
    name: str
    path: Path
    sql: str
    description: str
    materialized: str           # "table" | "view"
    reads: tuple[str, ...]      # qualified names of the tables it reads: "observations", "marts.x"
    incremental_by: str | None = None   # the date column an incremental model is rebuilt by
    alias: str | None = None            # also published as the view main.<alias>

    @property
    def table(self) -> str:
        return f"{self.layer}.{self.name}"

    @property
    def select(self) -> str:
        return self.sql.rstrip().rstrip(";")

    def create_statement(self) -> str:
        kind = "view" if self.materialized == "view" else "table"
        return f"create or replace {kind} {self.table} as\n{self.select}"

    def incremental_statements(self, since: str) -> list[str]:
        """Rebuild the days from `since` (an ISO date) on; earlier days stay as they are."""
        column = self.incremental_by
        return [f"delete from {self.table} where {column} >= date '{since}'",
                sql_text(__file__, "incremental_insert").format(
                    table=self.table, select=self.select, column=column, since=since)]


def _description(sql: str, path: Path) -> str:
    match = re.match(r"\s*/\*(.*?)\*/", sql, re.S) or re.match(r"\s*--(.*)", sql)
    if not match:
        raise SqlModelError(f"{path}:1: a model starts with a comment saying what the table is")
    return " ".join(match.group(1).split())


def parse_model(path: Path, root: Path) -> SqlModel:
    layer = path.parent.name
    if layer not in LAYERS or path.parent.parent != root:
        raise SqlModelError(f"{path}: models live in {root}/<{'|'.join(LAYERS)}>/<model>.sql")
    sql = path.read_text(encoding="utf-8")
    try:
        tree = sqlglot.parse_one(sql, dialect="duckdb")
    except sqlglot.errors.ParseError as exc:
        first = exc.errors[0] if exc.errors else {}
        raise SqlModelError(f"{path}:{first.get('line', '?')}: SQL syntax error: "
                            f"{first.get('description', exc)}") from exc
    ctes = {cte.alias_or_name for cte in tree.find_all(exp.CTE)}
    reads = []
    for table in tree.find_all(exp.Table):
        if not table.db and table.name in ctes:
            continue
        name = f"{table.db}.{table.name}" if table.db and table.db != "main" else table.name
        reads.append((name, table.this.meta.get("line", "?")))
    mat = re.search(r"^--\s*materialized:\s*(\w+)", sql, re.M)
    inc = re.search(r"^--\s*incremental:\s*(\w+)", sql, re.M)
    alias = re.search(r"^--\s*alias:\s*(\w+)", sql, re.M)
    model = SqlModel(layer, path.stem, path, sql, _description(sql, path),
                     mat.group(1) if mat else "table", tuple(sorted({n for n, _ in reads})),
                     inc.group(1) if inc else None, alias.group(1) if alias else None)
    object.__setattr__(model, "_lines", dict(reads))
    return model


def load_models(root: Path, external_tables: set[str]) -> list[SqlModel]:
    """Every model under `root` in dependency order, checked: known tables only, no cycles."""
    models = [parse_model(p, root) for p in sorted(root.glob("*/*.sql"))]
    known = {m.table for m in models} | external_tables
    for model in models:
        for name in model.reads:
            if name not in known:
                line = model._lines.get(name, "?")  # type: ignore[attr-defined]
                raise SqlModelError(f"{model.path}:{line}: unknown table {name!r} (known: "
                                    f"{', '.join(sorted(known))})")
    return topological_order(models)


def topological_order(models: list[SqlModel]) -> list[SqlModel]:
    """Models ordered so that each comes after the models it reads; refuses cycles."""
    by_table = {m.table: m for m in models}
    state: dict[str, str] = {}
    ordered: list[SqlModel] = []

    def visit(table: str, trail: list[str]) -> None:
        if state.get(table) == "done":
            return
        if state.get(table) == "visiting":
            raise SqlModelError(f"cycle between models: {' -> '.join([*trail, table])}")
        state[table] = "visiting"
        for dep in by_table[table].reads:
            if dep in by_table:
                visit(dep, [*trail, table])
        state[table] = "done"
        ordered.append(by_table[table])

    for table in sorted(by_table):
        visit(table, [])
    return ordered


def rebuild_from(con, model: SqlModel) -> str | None:
    """For an incremental model that exists: the earliest day with observations loaded since its
    last build (None: nothing new). Observations are loaded by crawl; a crawl's normalized_at says
    when its rows joined `observations`."""
    built = con.execute("select built_at from raw.model_state where model = ?",
                        [model.table]).fetchone()
    if built is None:
        return None
    since = con.execute(sql_text(__file__, "first_new_day"), {"built_at": built[0]}).fetchone()[0]
    return since.isoformat() if since else None


def _same_columns(con, model: SqlModel) -> bool:
    """The stored table has the columns the model's SQL now selects (else an upgrade changed the
    model, and an incremental insert would fail or leave old rows without the new columns)."""
    stored = [r[0] for r in con.execute(sql_text(__file__, "stored_columns"),
                                        {"schema": model.layer, "table": model.name}).fetchall()]
    selected = [d[0] for d in
                con.execute(sql_text(__file__, "select_columns").format(select=model.select))
                .description]
    return stored == selected


def run_model(con, model: SqlModel, full: bool = False) -> str:
    """Build one model inside DuckDB; returns how ("view", "full", "incremental from <day>",
    "up to date")."""
    con.execute("set TimeZone = 'UTC'")  # days are UTC days, whatever the session's zone was
    con.execute(f"create schema if not exists {model.layer}")
    con.execute(sql_text(__file__, "create_model_state"))
    if model.materialized == "view":
        con.execute(model.create_statement())
        if model.alias:
            con.execute(f"create or replace view main.{model.alias} as select * from {model.table}")
        return "view"
    started = con.execute("select now()").fetchone()[0]
    exists = con.execute(sql_text(__file__, "table_exists"),
                         {"schema": model.layer, "table": model.name}).fetchone()[0]
    state = con.execute("select count(*) from raw.model_state where model = ?",
                        [model.table]).fetchone()[0]
    if model.incremental_by and exists and state and not full and _same_columns(con, model):
        since = rebuild_from(con, model)
        how = "up to date"
        if since:
            # models may read it to limit their own scans (getvariable('since'))
            con.execute(f"set variable since = date '{since}'")
            try:
                for statement in model.incremental_statements(since):
                    con.execute(statement)
            finally:
                con.execute("reset variable since")
            how = f"incremental from {since}"
    else:
        con.execute(model.create_statement())
        how = "full"
    con.execute("insert or replace into raw.model_state values (?, ?)", [model.table, started])
    if model.alias:
        con.execute(f"create or replace view main.{model.alias} as select * from {model.table}")
    return how
