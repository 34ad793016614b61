"""The model runner: brings a batch of models up to date on one connection, each in its own
transaction (sql_models.py says how a model is built: in full, incrementally, or kept).

What does not change while the models of one batch are built is read once for the batch: the
runner's setup stamp, the catalog's tables, views and schemas, raw.model_state, and the first new
day of each last-build time (the models of a batch share it: a batch's builds all take the time
the batch started). The batch keeps them in memory as its models are built, so a model's build
costs its own statements and one write of its state; a model that fails is rolled back alone and
the batch reads the catalog and the state again. No observations may be written on the
connection while a batch builds (a run's models step builds alone)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

from pipelines.warehouse.crawl_first_days import first_new_day
from pipelines.warehouse.db import transaction
from pipelines.warehouse.model_macros import create_model_macros, model_macro_statements
from pipelines.warehouse.sql_files import sql_text
from pipelines.warehouse.sql_model import SqlModel

STATE_COLUMNS = ("built_at", "sql_sha256", "reset_at", "runner_stamp")


def runner_stamp() -> str:
    """The version of the runner's setup: a digest of every macro's text, of the bookkeeping
    table and of schema.sql (the Python tables models read). Stored as the comment on
    raw.model_state when the setup is made, so each build does it only when this changed."""
    texts = [*model_macro_statements(), sql_text(__file__, "create_model_state"),
             sql_text(__file__, "schema")]
    return hashlib.sha256("\0".join(texts).encode()).hexdigest()[:32]


def same_columns(con, model: SqlModel) -> bool:
    """The stored table has the columns the model's SQL now selects (else an upgrade changed the
    model, and an incremental insert would fail or leave old rows without the new columns)."""
    stored = [r[0] for r in con.execute(sql_text(__file__, "stored_columns"),
                                        {"schema": model.layer, "table": model.name}).fetchall()]
    selected = [d[0] for d in
                con.execute(sql_text(__file__, "select_columns").format(select=model.select))
                .description]
    return stored == selected


class ModelBatch:
    """Models built on `con` one after another (build: each in its own transaction; run: in the
    caller's). `started`: the time every build of the batch is recorded at (default: now)."""

    def __init__(self, con, started: datetime | None = None) -> None:
        self.con = con
        self.started = started or datetime.now(UTC)
        self.stamp = runner_stamp()
        self._known: dict | None = None            # what the catalog and the state say
        self._first_new_days: dict = {}            # last build time -> first new day
        self._fold_hours: dict = {}                 # last build time -> first new hour
        self._since_set = True                     # unknown: reset before the first build
        self._fold_set = True                      # ... and a folded model's variables
        self._zone_set = False

    def build(self, model: SqlModel, full: bool = False) -> str:
        """Build `model` in its own transaction; returns how (SqlModel's runner, run_model)."""
        with transaction(self.con):
            return self.run(model, full)

    def forget(self) -> None:
        """Read the catalog and the state again before the next build (they were changed)."""
        self._known = None

    def _catalog(self) -> dict:
        """What the catalog and raw.model_state say, read once (again after a failed build);
        the macros and raw.model_state are made first under a new setup stamp."""
        if self._known is None:
            con = self.con
            stamp, tables, views = con.execute(sql_text(__file__, "batch_catalog")).fetchone()
            if stamp != self.stamp:
                create_model_macros(con)
                con.execute(sql_text(__file__, "create_model_state"))
                con.execute(f"comment on table raw.model_state is '{self.stamp}'")
                tables = [*tables, "raw.model_state"]
            rows = con.execute(sql_text(__file__, "batch_model_state")).fetchall()
            self._known = {
                "tables": set(tables), "views": set(views),
                "schemas": {t.split(".")[0] for t in [*tables, *views]},
                "states": {r[0]: dict(zip(STATE_COLUMNS, r[1:], strict=True)) for r in rows}}
        return self._known

    def run(self, model: SqlModel, full: bool = False) -> str:
        """Build one model inside the caller's transaction; returns how ("view", "full",
        "incremental from <first new day>", "up to date"). The batch's memory of the catalog is
        dropped when the build fails (the caller rolls it back)."""
        try:
            return self._run(model, full)
        except BaseException:
            self._known = None
            raise

    def _prepare(self) -> None:
        con = self.con
        if not self._zone_set:
            con.execute("set TimeZone = 'UTC'")  # days are UTC days, whatever the zone was
            self._zone_set = True
        # A variable outlives a rolled-back transaction: a model whose incremental build
        # failed on this connection must not leave its `since` to filter the next model's build.
        if self._since_set:
            self._reset_since()

    def _reset_since(self) -> None:
        self.con.execute("reset variable since")
        if self._fold_set:
            self.con.execute("reset variable fold_hour")
            self.con.execute("reset variable fold_built_at")
        self._since_set = self._fold_set = False

    def _run(self, model: SqlModel, full: bool) -> str:
        self._prepare()
        con, known = self.con, self._catalog()
        table_exists = model.table in known["tables"]
        view_exists = model.table in known["views"]
        alias = f"main.{model.alias}" if model.alias else None
        if model.layer not in known["schemas"]:
            con.execute(f"create schema if not exists {model.layer}")
            known["schemas"].add(model.layer)
        state = known["states"].get(model.table)
        # a model it reads rebuilt from scratch after this one's build: its rows are stale
        upstream_reset = state is not None and any(
            known["states"][t]["reset_at"] is not None
            and known["states"][t]["reset_at"] > state["built_at"]
            for t in model.reads if t in known["states"])
        reset = (full or state is None or state["sql_sha256"] != model.sql_sha256
                 or upstream_reset)
        new_setup = state is None or state["runner_stamp"] != self.stamp
        how = None
        if model.materialized == "view":
            if reset or not view_exists:
                con.execute(model.create_statement())
                known["views"].add(model.table)
            how = "view" if reset or not view_exists else "view kept"
        elif not table_exists:
            reset = True
        elif not reset and model.incremental_by:
            how = self._update_incrementally(model, state["built_at"], new_setup)
            reset = how is None     # None: its columns changed
        elif not reset and not model.reads:
            how = "up to date"          # a constant table, already built from this SQL
        # Rebuilt in full in its own table when its stored columns are the select's: the same
        # SQL, setup and inputs' columns (see _update_incrementally) keep its comments, so
        # publishing writes none (pipelines/warehouse/comments.py) and its alias stays.
        in_place = how is None and not reset and not new_setup
        if in_place:
            con.execute(sql_text(__file__, "replace_rows").format(
                table=model.table, select=model.select))
            how = "full"
        elif how is None:
            con.execute(model.create_statement())
            known["tables"].add(model.table)
            how = "full"
        if how not in ("up to date", "view kept") or new_setup:
            new = {"built_at": self.started, "sql_sha256": model.sql_sha256,
                   "reset_at": self.started if reset else state["reset_at"],
                   "runner_stamp": self.stamp}
            con.execute(sql_text(__file__, "update_model_state" if state else
                                 "record_model_state"), {"model": model.table, **new})
            known["states"][model.table] = new
        if alias and ((how in ("full", "view") and not in_place)
                      or alias not in known["views"]):
            con.execute(f"create or replace view {alias} as select * from {model.table}")
            known["views"].add(alias)
        return "view" if how == "view kept" else how

    def first_new_day(self, built_at) -> str | None:
        """The first new day since `built_at` (crawl_first_days.first_new_day), once a batch."""
        if built_at not in self._first_new_days:
            self._first_new_days[built_at] = first_new_day(self.con, built_at)
        return self._first_new_days[built_at]

    def fold_hour(self, built_at, day: str):
        """The first new hour since `built_at` (sql/fold_hour.sql; `day` its first new day), once
        a batch: a folded model reads its new looks from it."""
        if built_at not in self._fold_hours:
            self._fold_hours[built_at] = self.con.execute(
                sql_text(__file__, "fold_hour"),
                {"built_at": built_at, "first_new_day": day}).fetchone()[0]
        return self._fold_hours[built_at]

    def _update_incrementally(self, model: SqlModel, built_at, check_columns: bool
                              ) -> str | None:
        """Rebuild the rows the observations loaded since the last build (`built_at`) reach;
        returns how, or None when the stored table's columns are not the model's (it must be
        rebuilt in full). The columns are compared only under a new runner setup
        (`check_columns`): with the same SQL, a model's columns change only with its inputs',
        and those change with schema.sql (in the stamp) or with an upstream model's full rebuild
        (which resets this one)."""
        day = self.first_new_day(built_at)
        if not day:
            return "up to date"
        if check_columns and not same_columns(self.con, model):
            return None
        return self._rebuild_from(model, day, built_at)

    def build_from(self, model: SqlModel, day: str) -> str:
        """Rebuild an incremental `model` (its table exists, from this batch's full build) as if
        `day` (ISO) were the first new day, in its own transaction, and record it built: a sliced
        full rebuild's later slices (model_rebuild.py)."""
        if model.incremental_grain == "key":   # its keys are those of the crawls since a build
            raise ValueError(f"{model.table}: a key grain is not rebuilt from a day")
        with transaction(self.con):
            try:
                self._prepare()
                known = self._catalog()
                how = self._rebuild_from(model, day)
                con, state = self.con, known["states"][model.table]
                new = {**state, "built_at": self.started}
                con.execute(sql_text(__file__, "update_model_state"), {"model": model.table, **new})
                known["states"][model.table] = new
                return how
            except BaseException:
                self._known = None
                raise

    def _rebuild_from(self, model: SqlModel, day: str, built_at=None) -> str:
        con = self.con
        since = model.rebuild_start(day)
        if model.incremental_grain == "key":
            con.execute(sql_text(__file__, "incremental_keys").format(
                column=model.incremental_by), {"built_at": built_at, "first_new_day": day})
        # models read it through since_day() and since_hour(n) to limit their own scans
        self._since_set = True
        con.execute(f"set variable since = date '{since}'")
        # a folded model reads only the looks since the first new hour (rebuilt from a day, it
        # reads whole days as a day grain does); not when that hour starts the first day rebuilt
        # (UTC midnight): the UTC day holds the new looks alone, and reading the days whole cost
        # less than a fold there (docs/scaling.md, "k23")
        fold_hour = (self.fold_hour(built_at, day)
                     if model.fold_keys and built_at is not None else None)
        folding = (fold_hour is not None
                   and fold_hour > datetime.fromisoformat(since).replace(tzinfo=UTC))
        if folding:
            self._fold_set = True
            con.execute(f"set variable fold_hour = timestamptz '{fold_hour.isoformat()}'")
            con.execute(f"set variable fold_built_at = timestamptz '{built_at.isoformat()}'")
        for statement in model.incremental_statements(since, fold=folding):
            con.execute(statement)
        self._reset_since()
        if model.incremental_grain == "key":
            con.execute("drop table incremental_keys")
        return f"incremental from {day}"
