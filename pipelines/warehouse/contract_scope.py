"""Which rows a model's hourly contract check reads: the rows the hour rebuilt, when every other
row passed the model's last check; else the whole table (model_contract.py says what a check is).

The rule, per model built by the models step:

* A model's rows changed (`rows_changed`): none for a table kept "up to date"; those whose
  incremental column is at least `SqlModel.rebuild_start(<first new day>)` for a day- or
  month-grain incremental table rebuilt "incremental from <day>"; for a view, none when none of
  its inputs changed, the rows from its one input's rebuilt start when the view is a plain
  projection of that input (no join, aggregate, window, distinct or subquery, the column selected
  as it is: its row of a day is its input's row of that day), else all. Any other build (full,
  key or merge grain, an input the step did not build) changed all rows.
* The check reads (`audit_scope`) the changed rows only when the model's last check passed, under
  the same SQL (so the same audits), no earlier than the last build of the model and of each of
  its inputs before this step (`raw.model_contracts`, written here, beside the runner's
  raw.model_state); otherwise the whole table, so a failure keeps failing until fixed and a
  build no check followed (another runner's, a run without the check) is checked whole. When no
  row changed, nothing is read: the last pass stands.
* The grain is checked on the changed rows only when the grain holds the bounding column (a key
  of another row then differs in that column); else on the whole table."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import duckdb
import sqlglot
from sqlglot import exp

from pipelines.warehouse.sql_files import sql_text
from pipelines.warehouse.sql_model import SqlModel

# The grains whose incremental rebuild replaces the rows from a first value of its column on.
BOUNDED_GRAINS = ("day", "month")
INCREMENTAL = "incremental from "


@dataclass(frozen=True)
class Rows:
    """A set of a model's rows: none, all, or those whose `column` >= date `start`."""
    kind: str                   # "none" | "from" | "all"
    column: str | None = None
    start: str | None = None

    def where(self) -> str:
        """The SQL condition of these rows (true for all)."""
        return f"{self.column} >= date '{self.start}'" if self.kind == "from" else "true"


NO_ROWS = Rows("none")
ALL_ROWS = Rows("all")


@lru_cache(maxsize=256)
def projected_column(model: SqlModel, column: str) -> bool:
    """`model` (a view) selects `column` unchanged from its one input, row for row: one select
    from one table, no join, grouping, window, aggregate or distinct."""
    try:
        tree = sqlglot.parse_one(model.select, dialect="duckdb")
    except sqlglot.errors.ParseError:
        return False
    if (not isinstance(tree, exp.Select) or len(list(tree.find_all(exp.Select))) > 1
            or not isinstance(tree.find(exp.From).this, exp.Table)
            or tree.find(exp.With, exp.Join, exp.Group, exp.Having, exp.Distinct, exp.Qualify,
                         exp.Window, exp.AggFunc, exp.Subquery, exp.Unnest)):
        return False
    return any(isinstance(e, exp.Column) and e.name == column for e in tree.expressions)


def rows_changed(model: SqlModel, how: str, inputs: dict[str, Rows]) -> Rows:
    """The rows of `model` its build (`how`, as the runner returns it) may have changed; `inputs`:
    the changed rows of each model the step built (a read missing from it: all)."""
    if model.materialized == "view":
        changed = [inputs.get(t, ALL_ROWS) for t in model.reads]
        if all(c.kind == "none" for c in changed):
            return NO_ROWS
        if (len(changed) == 1 and changed[0].kind == "from"
                and projected_column(model, changed[0].column)):
            return changed[0]
        return ALL_ROWS
    if how == "up to date":
        return NO_ROWS
    if how.startswith(INCREMENTAL) and model.incremental_grain in BOUNDED_GRAINS:
        return Rows("from", model.incremental_by,
                    model.rebuild_start(how.removeprefix(INCREMENTAL)))
    return ALL_ROWS


def audit_scope(changed: Rows, last_pass_holds: bool) -> Rows:
    """The rows the check reads: the changed ones when the last pass holds for the others."""
    return changed if last_pass_holds else ALL_ROWS


def passes_on_record(con, models: list[SqlModel]) -> set[str]:
    """The models whose last check passed under their present SQL, no earlier than the last
    build (before this step) of the model and of each table it reads."""
    try:
        passed = {m: (sha, at) for m, sha, at in con.execute(
            sql_text(__file__, "passed_contracts")).fetchall()}
        built = dict(con.execute(sql_text(__file__, "model_built_at")).fetchall())
    except duckdb.CatalogException:     # no check or no build on record: nothing holds
        con.execute(sql_text(__file__, "create_model_contracts"))
        return set()
    holds = set()
    for model in models:
        sha, checked_at = passed.get(model.table, (None, None))
        if sha == model.sql_sha256 and all(
                built.get(t) is not None and built[t] <= checked_at
                for t in (model.table, *model.reads) if t in built or t == model.table):
            holds.add(model.table)
    return holds


def record_checks(con, models: list[SqlModel], passed: dict[str, bool], checked_at) -> None:
    """Record the step's checks (model -> passed), all at `checked_at` (the batch's build time)."""
    recorded = [m for m in models if m.table in passed]
    if recorded:
        con.execute(sql_text(__file__, "record_model_contract"),
                    [[m.table for m in recorded], [m.sql_sha256 for m in recorded], checked_at,
                     [passed[m.table] for m in recorded]])
