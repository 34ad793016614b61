"""One SQL model of dbt_like_sql/ as the runner sees it (sql_models.py parses the files into
these, model_batch.py builds them): its table, SQL and header facts, and the statements of an
incremental rebuild."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from pipelines.warehouse.sql_files import sql_text


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
    incremental_grain: str = "day"      # "day" | "month" | "key" | "merge" (sql_models.py)
    lookback_days: int = 0              # rebuild from this many days before the first new day
    merge_rules: tuple[tuple[str, str], ...] = ()   # merge grain: (column, its SQL over n, o)
    fold_keys: tuple[str, ...] = ()     # a folded day grain's key columns (sql_models.py)
    fold_when: str = ""                 # ... and when a new row folds into the stored one

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

    def incremental_statements(self, since: str, fold: bool = False) -> list[str]:
        """Rebuild the rows from `since` (an ISO date, from rebuild_start) on, or those of the
        keys in the temporary table incremental_keys; the other rows stay as they are. A merge
        grain replaces the stored row of each key its select returns (from the rebuilt days
        only), a column with a rule keeping the least or greatest of the stored and new value.
        `fold` (a folded day grain, the runner's variable fold_hour set): the same for the keys
        the select returns from the rebuilt days, each folded into its stored row by the rules
        when `fold_when` holds, else replacing it."""
        column = self.incremental_by
        if fold:
            kept = f"{column} >= date '{since}'"
            same_key = " and ".join(f"o.{k} = n.{k}" for k in self.fold_keys)
            stored_key = " and ".join(f"{self.name}.{k} = m.{k}" for k in self.fold_keys)
            rules = ", ".join(f"{c} = {rule}" for c, rule in self.merge_rules)
            return [sql_text(__file__, "fold_rows").format(select=self.select, kept=kept),
                    sql_text(__file__, "fold_rules").format(
                        table=self.table, rules=rules, same_key=same_key, column=column,
                        since=since, fold_when=self.fold_when),
                    f"delete from {self.table} using merge_rows as m "
                    f"where {stored_key} and {self.name}.{kept}",
                    f"insert into {self.table} by name select * from merge_rows",
                    "drop table merge_rows"]
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
