"""dbt_like_sql/: every `<layer>/<model>.sql` file is a table `<layer>.<model>` and an asset.

Dependencies come from the SQL itself (parsed with sqlglot, DuckDB dialect): a model reads
`observations` or another model by its qualified name, and no list is kept by hand. A file that
does not parse, or reads a table nobody builds, fails at load time naming the file and the line.
The first comment of a file is its description; a line `-- materialized: view` makes it a view,
`-- alias: <name>` also publishes it as the view `main.<name>` (so `select * from market_claims`
works in the DuckDB shell), and `-- incremental: ...` makes it a table that new observations
update in place instead of rebuilding it (the first new day below is the earliest UTC day with
observations loaded since the model's last build):

* `-- incremental: <date column>`: the rows from the first new day on are deleted and inserted
  again;
* `-- incremental: <month column> by month`: the same from the first day of its month;
* `... lookback <n> days` (either grain): from n days before the first new day (then its month):
  for rows that also read the n days after their own period (a month that reads the next one's
  start);
* `-- incremental: <column> by key`: the rows whose <column> (a column of `observations`, e.g.
  offer_id) appears in the newly loaded observations are deleted and inserted again.
* `-- incremental: <key> by merge` (a lookback allowed): the select, run with since_day() at the
  first new day, reads only the rebuilt days and returns one row per <key> seen on them; each
  replaces the stored row of its key, and the keys it does not return keep theirs. A line
  `-- merge: <column> least|greatest` keeps the least (greatest) of the new and the stored
  value (a first sighting stays the first); `-- merge: <column> = <expression>` sets it from
  the new row `n` and the stored row `o` (it may go on over `--` lines indented three spaces or
  more). A full build is the same select over every day, so no model reads its own table.

A model limits its own scans with the macros `since_day()` (the first day rebuilt,
`rebuild_start`; for a key, the first new day; 0001-01-01 in a full build) and
`since_hour(<n days before>)` (that day's first UTC hour, n days earlier), which the runner
creates in the database (sql/since_macros.sql: the one place that reads the variable `since` the
runner sets); the runner keeps only the rebuilt rows of its result. The result equals a full
rebuild as long as no other row depends on the new observations:
tests/sql/test_incremental_marts.py checks every model on a simulated history.

A model is rebuilt in full (and its downstream models with it) when its SQL or its columns
changed, when a model it reads was so rebuilt after it, or when asked (`full`). A table model
that reads no table (a constant, such as the sign-test table) is built once per version of its
SQL. The bookkeeping SQL this module runs is in sql/ beside it.

A build costs its work and little else: the macros (model_macros.py) and raw.model_state are
made only when their text changed (a stamp of it is the comment on raw.model_state), the
stored columns are compared with the select's only then too, the first day of a new crawl is
found once per crawl, a view or alias view is created again only when missing or rebuilt, and a
model found up to date writes nothing.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache
from pathlib import Path

import sqlglot
from sqlglot import exp

# create_mission_families_macro stays importable from here, beside the runner that uses it
from pipelines.warehouse.model_macros import (
    create_mission_families_macro as create_mission_families_macro,
)
from pipelines.warehouse.model_macros import create_model_macros, model_macro_statements
from pipelines.warehouse.sql_files import sql_text

LAYERS = ("staging", "intermediate", "marts")
# `-- incremental: <column> [by day|month|key|merge] [lookback <n> days]`
INCREMENTAL = re.compile(
    r"(\w+)(?:\s+by\s+(day|month|key|merge))?(?:\s+lookback\s+(\d+)\s+days?)?\s*")
# `-- merge: <column> least|greatest` or `-- merge: <column> = <expression over n. and o.>` (it
# may go on over the next `--` lines indented by three spaces or more): how a merge grain's column
# combines the new row (n) with the stored row (o) of the same key
MERGE_RULE = re.compile(r"^--\s*merge:\s*(\w+)\s*(least|greatest|=\s*\S.*(?:\n-- {3,}\S.*)*)$",
                        re.M)


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
    incremental_by: str | None = None   # the column an incremental model is rebuilt by
    alias: str | None = None            # also published as the view main.<alias>
    incremental_grain: str = "day"      # "day" | "month" | "key" | "merge" (module docstring)
    lookback_days: int = 0              # rebuild from this many days before the first new day
    merge_rules: tuple[tuple[str, str], ...] = ()   # merge grain: (column, its SQL over n, o)

    @property
    def table(self) -> str:
        return f"{self.layer}.{self.name}"

    @property
    def select(self) -> str:
        return self.sql.rstrip().rstrip(";")

    @property
    def sql_sha256(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()

    def create_statement(self) -> str:
        kind = "view" if self.materialized == "view" else "table"
        return f"create or replace {kind} {self.table} as\n{self.select}"

    def rebuild_start(self, first_new_day: str) -> str:
        """The first value of the incremental column rebuilt when observations from
        `first_new_day` (an ISO date) on are new: that day, `lookback_days` earlier, then the
        first day of its month for a month grain (a key grain: the day itself)."""
        start = date.fromisoformat(first_new_day)
        if self.incremental_grain != "key":
            start -= timedelta(days=self.lookback_days)
        if self.incremental_grain == "month":
            start = start.replace(day=1)
        return start.isoformat()

    def incremental_statements(self, since: str) -> list[str]:
        """Rebuild the rows from `since` (an ISO date, from rebuild_start) on, or those of the
        keys in the temporary table incremental_keys; the other rows stay as they are. A merge
        grain replaces the stored row of each key its select returns (from the rebuilt days
        only), a column with a rule keeping the least or greatest of the stored and new value."""
        column = self.incremental_by
        if self.incremental_grain == "merge":
            rules = ", ".join(f"{c} = {rule}" for c, rule in self.merge_rules)
            return [sql_text(__file__, "merge_rows").format(select=self.select),
                    *([sql_text(__file__, "merge_rules").format(
                        table=self.table, rules=rules, column=column)] if rules else []),
                    f"delete from {self.table} where {column} in "
                    f"(select m.{column} from merge_rows as m)",
                    f"insert into {self.table} by name select * from merge_rows",
                    "drop table merge_rows"]
        if self.incremental_grain == "key":
            kept = f"{column} in (select k.key from incremental_keys as k)"
        else:
            kept = f"{column} >= date '{since}'"
        return [f"delete from {self.table} where {kept}",
                sql_text(__file__, "incremental_insert").format(
                    table=self.table, select=self.select, kept=kept)]


def _description(sql: str, path: Path) -> str:
    match = re.match(r"\s*/\*(.*?)\*/", sql, re.S) or re.match(r"\s*--(.*)", sql)
    if not match:
        raise SqlModelError(f"{path}:1: a model starts with a comment saying what the table is")
    return " ".join(match.group(1).split())


def _incremental(sql: str, path: Path) -> tuple[str | None, str, int]:
    """The `-- incremental:` header: (column, grain, lookback days); (None, "day", 0) without."""
    header = re.search(r"^--\s*incremental:(.*)$", sql, re.M)
    if not header:
        return None, "day", 0
    match = INCREMENTAL.fullmatch(header.group(1).strip())
    line = sql.count("\n", 0, header.start()) + 1
    if not match:
        raise SqlModelError(f"{path}:{line}: expected '-- incremental: <column> "
                            f"[by day|month|key|merge] [lookback <n> days]', got "
                            f"{header.group(0)!r}")
    column, grain, lookback = match.group(1), match.group(2) or "day", int(match.group(3) or 0)
    if grain == "key" and lookback:
        raise SqlModelError(f"{path}:{line}: a lookback applies to a day or month grain, "
                            "not to a key")
    return column, grain, lookback


@lru_cache(maxsize=256)
def parsed_sql(sql: str) -> exp.Expression:
    """A model's SQL parsed by sqlglot (DuckDB dialect), once per process: the dependency graph,
    the Dagster column schemas and COMMENT ON all read the same models. Callers only read the
    tree; a ParseError is raised again for the same text."""
    return sqlglot.parse_one(sql, dialect="duckdb")


def parse_model(path: Path, root: Path) -> SqlModel:
    layer = path.parent.name
    if layer not in LAYERS or path.parent.parent != root:
        raise SqlModelError(f"{path}: models live in {root}/<{'|'.join(LAYERS)}>/<model>.sql")
    return _model(path, path.read_text(encoding="utf-8"))


@lru_cache(maxsize=256)
def _model(path: Path, sql: str) -> SqlModel:
    """The model `path` holds while its text is `sql`: read once per process (a test suite loads
    the models hundreds of times; a run, for its graph and again when it publishes)."""
    layer = path.parent.name
    try:
        tree = parsed_sql(sql)
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
    alias = re.search(r"^--\s*alias:\s*(\w+)", sql, re.M)
    column, grain, lookback = _incremental(sql, path)
    rules = tuple((c, f"{how}(n.{c}, o.{c})" if how in ("least", "greatest")
                   else " ".join(re.sub(r"\n--", " ", how.removeprefix("=")).split()))
                  for c, how in MERGE_RULE.findall(sql))
    if rules and grain != "merge":
        raise SqlModelError(f"{path}: '-- merge: <column> least|greatest' needs "
                            "'-- incremental: <key> by merge'")
    model = SqlModel(layer, path.stem, path, sql, _description(sql, path),
                     mat.group(1) if mat else "table", tuple(sorted({n for n, _ in reads})),
                     column, alias.group(1) if alias else None, grain, lookback, rules)
    object.__setattr__(model, "_lines", dict(reads))
    return model


# The tables the Python assets write that models read, by the name SQL uses for them.
PYTHON_TABLES = frozenset({"observations", "quarantine", "raw.crawls"})


def load_models(root: Path, external_tables: set[str] | frozenset[str] = PYTHON_TABLES
                ) -> list[SqlModel]:
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


def runner_stamp() -> str:
    """The version of the runner's setup: a digest of every macro's text, of the bookkeeping
    table and of schema.sql (the Python tables models read). Stored as the comment on
    raw.model_state when the setup is made, so each build does it only when this changed."""
    texts = [*model_macro_statements(), sql_text(__file__, "create_model_state"),
             sql_text(__file__, "schema")]
    return hashlib.sha256("\0".join(texts).encode()).hexdigest()[:32]


def _set_up(con, stamp: str) -> None:
    """The macros and raw.model_state, created (again) for the setup `stamp`."""
    create_model_macros(con)
    con.execute(sql_text(__file__, "create_model_state"))
    con.execute(f"comment on table raw.model_state is '{stamp}'")


def _first_new_day(con, built_at) -> str | None:
    """The earliest UTC day with observations loaded since `built_at` (None: nothing new); the
    first day of a crawl normalized since is cached once (raw.crawl_first_days), so an hour's
    models after the first pay for a scan of raw.crawls only."""
    uncached, since = con.execute(sql_text(__file__, "crawls_since"),
                                  {"built_at": built_at}).fetchone()
    if uncached:
        for statement in ("uncache_crawl_first_days", "cache_crawl_first_days"):
            con.execute(sql_text(__file__, statement), {"built_at": built_at})
        since = con.execute(sql_text(__file__, "crawls_since"),
                            {"built_at": built_at}).fetchone()[1]
    return since.isoformat() if since else None


def rebuild_from(con, model: SqlModel) -> str | None:
    """For an incremental model that exists: the earliest day with observations loaded since its
    last build (None: nothing new). Observations are loaded by crawl; a crawl's normalized_at says
    when its rows joined `observations`."""
    built = con.execute("select built_at from raw.model_state where model = ?",
                        [model.table]).fetchone()
    return _first_new_day(con, built[0]) if built else None


def _same_columns(con, model: SqlModel) -> bool:
    """The stored table has the columns the model's SQL now selects (else an upgrade changed the
    model, and an incremental insert would fail or leave old rows without the new columns)."""
    stored = [r[0] for r in con.execute(sql_text(__file__, "stored_columns"),
                                        {"schema": model.layer, "table": model.name}).fetchall()]
    selected = [d[0] for d in
                con.execute(sql_text(__file__, "select_columns").format(select=model.select))
                .description]
    return stored == selected


def _update_incrementally(con, model: SqlModel, built_at, check_columns: bool) -> str | None:
    """Rebuild the rows the observations loaded since the last build (`built_at`) reach; returns
    how, or None when the stored table's columns are not the model's (it must be rebuilt in
    full). The columns are compared only under a new runner setup (`check_columns`): with the
    same SQL, a model's columns change only with its inputs', and those change with schema.sql
    (in the stamp) or with an upstream model's full rebuild (which resets this one)."""
    first_new_day = _first_new_day(con, built_at)
    if not first_new_day:
        return "up to date"
    if check_columns and not _same_columns(con, model):
        return None
    since = model.rebuild_start(first_new_day)
    if model.incremental_grain == "key":
        con.execute(sql_text(__file__, "incremental_keys").format(column=model.incremental_by),
                    {"built_at": built_at, "first_new_day": first_new_day})
    # models read it through since_day() and since_hour(n) to limit their own scans
    con.execute(f"set variable since = date '{since}'")
    for statement in model.incremental_statements(since):
        con.execute(statement)
    con.execute("reset variable since")
    if model.incremental_grain == "key":
        con.execute("drop table incremental_keys")
    return f"incremental from {first_new_day}"


def run_model(con, model: SqlModel, full: bool = False) -> str:
    """Build one model inside DuckDB; returns how ("view", "full", "incremental from <first new
    day>", "up to date"). What is not work is skipped: the macros and raw.model_state are made
    only under a new setup stamp, a view or an alias view is created again only when missing or
    rebuilt, and a model found up to date writes nothing."""
    con.execute("set TimeZone = 'UTC'")  # days are UTC days, whatever the session's zone was
    # A variable outlives a rolled-back transaction: a model whose incremental build failed on
    # this connection must not leave its `since` to filter the next model's full build.
    con.execute("reset variable since")
    stamp = runner_stamp()
    where = {"schema": model.layer, "table": model.name}
    stored_stamp, table_exists = con.execute(sql_text(__file__, "model_catalog"),
                                             where).fetchone()
    view_exists = alias_exists = False
    if model.materialized == "view" or model.alias:
        view_exists, alias_exists = con.execute(sql_text(__file__, "model_views"),
                                                {**where, "alias": model.alias or ""}).fetchone()
    if stored_stamp != stamp:
        _set_up(con, stamp)
    if not (table_exists or view_exists):
        con.execute(f"create schema if not exists {model.layer}")
    rows = con.execute(sql_text(__file__, "model_run_state")).fetchall()
    started = rows[0][0]
    states = {r[1]: dict(zip(("built_at", "sql_sha256", "reset_at", "runner_stamp"), r[2:],
                             strict=True)) for r in rows if r[1] is not None}
    state = states.get(model.table)
    # a model it reads rebuilt from scratch after this one's build: its rows are stale
    upstream_reset = state is not None and any(
        states[t]["reset_at"] is not None and states[t]["reset_at"] > state["built_at"]
        for t in model.reads if t in states)
    reset = full or state is None or state["sql_sha256"] != model.sql_sha256 or upstream_reset
    new_setup = state is None or state["runner_stamp"] != stamp
    how = None
    if model.materialized == "view":
        if reset or not view_exists:
            con.execute(model.create_statement())
        how = "view" if reset or not view_exists else "view kept"
    elif not table_exists:
        reset = True
    elif not reset and model.incremental_by:
        how = _update_incrementally(con, model, state["built_at"], new_setup)
        reset = how is None     # None: its columns changed
    elif not reset and not model.reads:
        how = "up to date"          # a constant table, already built from this SQL
    if how is None:
        con.execute(model.create_statement())
        how = "full"
    if how not in ("up to date", "view kept") or new_setup:
        con.execute(sql_text(__file__, "update_model_state" if state else "record_model_state"),
                    {"model": model.table, "built_at": started, "sql_sha256": model.sql_sha256,
                     "reset_at": started if reset else state["reset_at"], "runner_stamp": stamp})
    if model.alias and (how in ("full", "view") or not alias_exists):
        con.execute(f"create or replace view main.{model.alias} as select * from {model.table}")
    return "view" if how == "view kept" else how
