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
* `-- fold: <key>, <day column> when <condition over n and o>` beside `-- incremental: <day
  column>` (and `-- merge:` rules): a day grain that an hourly update folds instead of
  rebuilding its days: the runner sets fold_hour() to the first new hour (sql/since_macros.sql),
  the select returns one row per key of the rebuilt days from the new looks only (or from the
  whole day, for the offers refolded_offers() names), and each row takes the rules' values from
  itself (n) and the stored row of its key (o) when the condition holds (it was read from the new
  looks alone), else replaces it. A rebuild from a day (a sliced full rebuild) and a full build
  read whole days, as a day grain does; the publish copies its rebuilt days as a day grain's.

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
SQL. A model rebuilt in full from the same SQL, under the same runner setup and with no input
rebuilt from scratch (so its stored columns are the select's) has its rows replaced inside its
table (sql/replace_rows.sql: delete, insert by name), which keeps the table's comments and its
alias view; otherwise the table is created anew from the select. The runner is model_batch.py;
the bookkeeping SQL it runs is in sql/ beside it.

A build costs its work and little else: the macros (model_macros.py) and raw.model_state are
made only when their text changed (a stamp of it is the comment on raw.model_state), the
stored columns are compared with the select's only then too, the first day of a crawl is
recorded as its rows are written (crawl_first_days.py), the catalog, the state and the first
new day are read once for a batch of models, a view or alias view is created again only when
missing or rebuilt, and a model found up to date writes nothing.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

# the macros stay importable from here, beside the runner that stores them
from pipelines.warehouse.model_macros import (
    create_mission_families_macro as create_mission_families_macro,
)
from pipelines.warehouse.model_macros import create_model_macros as create_model_macros
from pipelines.warehouse.model_reads import ReadsCache, parsed_reads

# parsed_sql stays importable from here: the comments and the tests read the same trees
from pipelines.warehouse.model_reads import parsed_sql as parsed_sql
from pipelines.warehouse.sql_model import SqlModel

LAYERS = ("staging", "intermediate", "marts")
# `-- incremental: <column> [by day|month|key|merge] [lookback <n> days]`
INCREMENTAL = re.compile(
    r"(\w+)(?:\s+by\s+(day|month|key|merge))?(?:\s+lookback\s+(\d+)\s+days?)?\s*")
# `-- merge: <column> least|greatest` or `-- merge: <column> = <expression over n. and o.>` (it
# may go on over the next `--` lines indented by three spaces or more): how a merge grain's column
# combines the new row (n) with the stored row (o) of the same key
# `-- fold: <key>, <day column> when <condition over n. and o.>`: a day grain (its rows change
# only from the first new day on) whose new rows fold into the stored rows of their keys
FOLD = re.compile(r"^--\s*fold:\s*(\w+(?:\s*,\s*\w+)*)\s+when\s+(\S.*)$", re.M)
MERGE_RULE = re.compile(r"^--\s*merge:\s*(\w+)\s*(least|greatest|=\s*\S.*(?:\n-- {3,}\S.*)*)$",
                        re.M)


class SqlModelError(ValueError):
    pass


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


def parse_model(path: Path, root: Path, cache: ReadsCache | None = None) -> SqlModel:
    """The model in `path` (a file under `root`); its reads from `cache` when it has them."""
    layer = path.parent.name
    if layer not in LAYERS or path.parent.parent != root:
        raise SqlModelError(f"{path}: models live in {root}/<{'|'.join(LAYERS)}>/<model>.sql")
    sql = path.read_text(encoding="utf-8")
    try:
        reads = cache.reads(sql) if cache else parsed_reads(sql)
    except Exception as exc:
        from sqlglot.errors import ParseError

        if not isinstance(exc, ParseError):
            raise
        first = exc.errors[0] if exc.errors else {}
        raise SqlModelError(f"{path}:{first.get('line', '?')}: SQL syntax error: "
                            f"{first.get('description', exc)}") from exc
    return _model(path, sql, reads)


@lru_cache(maxsize=256)
def _model(path: Path, sql: str, reads: tuple[tuple[str, object], ...]) -> SqlModel:
    """The model `path` holds while its text is `sql` (reading the tables `reads`, each with the
    line it is named on): made once per process (a test suite loads the models hundreds of
    times; a run, for its graph and again when it publishes)."""
    layer = path.parent.name
    mat = re.search(r"^--\s*materialized:\s*(\w+)", sql, re.M)
    alias = re.search(r"^--\s*alias:\s*(\w+)", sql, re.M)
    column, grain, lookback = _incremental(sql, path)
    rules = tuple((c, f"{how}(n.{c}, o.{c})" if how in ("least", "greatest")
                   else " ".join(re.sub(r"\n--", " ", how.removeprefix("=")).split()))
                  for c, how in MERGE_RULE.findall(sql))
    fold = FOLD.search(sql)
    if fold and (grain != "day" or lookback or not column):
        raise SqlModelError(f"{path}: '-- fold: <key>, <day column> when <condition>' needs "
                            "'-- incremental: <day column>' (no lookback)")
    if rules and grain != "merge" and not fold:
        raise SqlModelError(f"{path}: '-- merge: <column> least|greatest' needs "
                            "'-- incremental: <key> by merge' or '-- fold: ...'")
    model = SqlModel(layer, path.stem, path, sql, _description(sql, path),
                     mat.group(1) if mat else "table", tuple(sorted({n for n, _ in reads})),
                     column, alias.group(1) if alias else None, grain, lookback, rules,
                     tuple(k.strip() for k in fold.group(1).split(",")) if fold else (),
                     fold.group(2).strip() if fold else "")
    object.__setattr__(model, "_lines", dict(reads))
    return model


# The tables the Python assets write that models read, by the name SQL uses for them.
PYTHON_TABLES = frozenset({"observations", "quarantine", "raw.crawls"})


def load_models(root: Path, external_tables: set[str] | frozenset[str] = PYTHON_TABLES
                ) -> list[SqlModel]:
    """Every model under `root` in dependency order, checked: known tables only, no cycles.
    The tables each reads come from the cache beside them when its text was parsed before."""
    cache = ReadsCache(root)
    models = [parse_model(p, root, cache) for p in sorted(root.glob("*/*.sql"))]
    cache.save()
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


def run_model(con, model: SqlModel, full: bool = False) -> str:
    """Build one model inside DuckDB, in the caller's transaction; returns how ("view", "full",
    "incremental from <first new day>", "up to date"). A batch of models is cheaper built
    through one model_batch.ModelBatch, which reads the catalog and the state once."""
    from pipelines.warehouse.model_batch import ModelBatch

    return ModelBatch(con).run(model, full)


def rebuild_from(con, model: SqlModel) -> str | None:
    """For an incremental model that exists: the earliest day with observations loaded since its
    last build (None: nothing new). Observations are loaded by crawl; a crawl's normalized_at says
    when its rows joined `observations` (crawl_first_days.py)."""
    from pipelines.warehouse.crawl_first_days import first_new_day

    built = con.execute("select built_at from raw.model_state where model = ?",
                        [model.table]).fetchone()
    return first_new_day(con, built[0]) if built else None
