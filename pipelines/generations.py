"""Two published generations of the database, so that a run writes what changed, not the whole
file: `data/.published/prices-a.db` and `prices-b.db`, and `data/prices.db` a hard link of the one
readers open, switched by renaming a new link over it (pipelines/publish.py publish_database).

A run brings the generation data/prices.db is NOT a link of up to date in place (`sync_in_place`):
* the append-only tables (APPEND_ONLY_TABLES) get the rows added since it was written;
* raw.crawls (KEYED_TABLES) gets the rows added since and the rows it held still open, replaced
  by key (sql/crawls_changed.sql: a row is only written again while open);
* a model the runner has not built since leaves its table alone; a day- or month-grain
  incremental model not rebuilt from scratch since gets its rows from the first day the runner
  rebuilt (the first day of the observations loaded since that build, the runner's own rule,
  pipelines/warehouse/crawl_first_days.py first_new_day_since) deleted and copied again;
* every other table is copied whole (the models still rebuilt in full, the small Python tables).
What the generation holds is recorded beside it (`<generation>.state.json`: the file's inode,
size and modification time as last written, each model's build as the runner recorded it, and
the digest of its catalog), so anything unexpected raises NotInPlace and the caller copies the
whole working file instead: no record, a file changed since (a writer session), a write-ahead log
beside it, a reader holding it (DuckDB refuses the write open: "Could not set lock"), a catalog
that differs from the recorded one (a migration, a changed view, macro or comment), a row count
that differs after the update, or any error on the way.

A hard link, not a symbolic one: DuckDB resolves a symbolic link and keeps its write-ahead log
beside the file it points to, while readers and `gpuprices prices` name `data/prices.db.wal`
(README, "Open it read-only"); through a hard link the log stays `data/prices.db.wal`, which the
publish removes as before."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from functools import cache
from pathlib import Path

from pipelines.warehouse.crawl_first_days import crawls_since, first_new_day_since
from pipelines.warehouse.sql_files import sql_text
from pipelines.warehouse.tables import ADVICE_HISTORY_TABLE, INDEX_TABLE

GENERATIONS = ("a", "b")
# Tables whose rows are only ever added, never updated or deleted (observations: "never deleted",
# pipelines/warehouse/comments.py; raw.offers: a crawl's items as fetched; the quarantine and the
# advice history: inserts that skip the keys already there; the decisions about crawls: one
# insert each; the price index: "rows are only ever appended"): a generation gets the rows past
# its own count, instead of the whole table, which grows with every run.
APPEND_ONLY_TABLES = ("main.observations", "raw.offers", "main.quarantine", "raw.crawl_decisions",
                      ADVICE_HISTORY_TABLE, INDEX_TABLE)
# Tables whose rows are added, then updated in place by key while they are open (raw.crawls: a
# crawl's row gets its normalized_at, counts and status after it is inserted): {table: (key, the
# SQL naming the keys that may differ from a generation's: rows added since, rows still open)}.
KEYED_TABLES = {"raw.crawls": ("crawl_id", "crawls_changed")}


class NotInPlace(Exception):
    """Why a generation cannot be brought up to date in place (it is then copied whole)."""


def generations_dir(target: Path) -> Path:
    return target.parent / ".published"


def generation_path(target: Path, name: str) -> Path:
    """data/.published/prices-a.db for target data/prices.db and generation "a"."""
    return generations_dir(target) / f"{target.stem}-{name}{target.suffix}"


def state_path(generation: Path) -> Path:
    return generation.with_name(f"{generation.name}.state.json")


def published_wal(path: Path) -> Path:
    """The write-ahead log DuckDB reads beside `path` when it opens it."""
    return path.with_name(f"{path.name}.wal")


def current_generation(target: Path) -> str | None:
    """The generation `target` is a link of (the one readers open), None when none is."""
    try:
        seen = target.stat()
    except FileNotFoundError:
        return None
    for name in GENERATIONS:
        try:
            held = generation_path(target, name).stat()
        except FileNotFoundError:
            continue
        if (held.st_dev, held.st_ino) == (seen.st_dev, seen.st_ino):
            return name
    return None


def stale_generation(target: Path) -> Path:
    """The generation readers do not open through `target`: the one this run writes."""
    name = "b" if current_generation(target) == "a" else "a"
    return generation_path(target, name)


def file_stamp(path: Path) -> list[int]:
    """What changes whenever anyone writes the file: inode, size, modification time."""
    seen = path.stat()
    return [seen.st_ino, seen.st_size, seen.st_mtime_ns]


def read_state(generation: Path) -> dict | None:
    try:
        return json.loads(state_path(generation).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None


def write_state(generation: Path, models: dict[str, list], catalog: str) -> None:
    """Record what `generation` holds now (call once it is written, checkpointed and closed):
    the models' builds and the digest of its catalog (catalog_digest)."""
    path = state_path(generation)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"stamp": file_stamp(generation), "model_state": models,
                               "catalog": catalog}), encoding="utf-8")
    os.replace(tmp, path)


def forget_state(generation: Path) -> None:
    """From now until write_state, `generation` holds something unrecorded."""
    state_path(generation).unlink(missing_ok=True)


def open_in_this_process(path: Path) -> bool:
    """Whether this process has `path` open (a DuckDB connection of its own: the file lock that
    stops another process's write open does not stop this process's). False where /proc is not."""
    try:
        wanted = path.stat()
        fds = os.listdir("/proc/self/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            seen = os.stat(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if (seen.st_dev, seen.st_ino) == (wanted.st_dev, wanted.st_ino):
            return True
    return False


def model_states(con, catalog: str) -> dict[str, list]:
    """{model: [built_at, reset_at, sql_sha256]} of raw.model_state in attached `catalog`; {}
    when it has none."""
    import duckdb

    try:
        rows = con.execute(sql_text(__file__, "model_states").format(db=catalog)).fetchall()
    except duckdb.CatalogException:
        return {}
    return {model: list(rest) for model, *rest in rows}


def published_catalog(con, catalog: str) -> list[tuple]:
    """Everything of attached `catalog` readers see besides the rows, internal tables left out."""
    from pipelines.warehouse.comments import INTERNAL_TABLES

    return [row for row in con.execute(sql_text(__file__, "published_catalog"),
                                       {"db": catalog}).fetchall()
            if row[0] not in ("table", "column") or row[1] not in INTERNAL_TABLES]


def catalog_digest(con, catalog: str) -> str:
    """sha256 of published_catalog: a generation's is recorded when it is written, so an update
    compares the working database's catalog with it instead of reading the generation's too
    (the file's stamp says nothing has written it since)."""
    return hashlib.sha256(repr(published_catalog(con, catalog)).encode()).hexdigest()


def published_tables(con) -> list[str]:
    """The working database's tables that are published (all but INTERNAL_TABLES)."""
    from pipelines.warehouse.comments import INTERNAL_TABLES

    return [name for (name,) in con.execute(
        "select schema_name || '.' || table_name from duckdb_tables() "
        "where database_name = 'work' and not internal order by 1").fetchall()
            if name not in INTERNAL_TABLES]


@cache
def table_models() -> dict:
    """{table: SqlModel} of the models built as tables."""
    from pipelines.warehouse.sql_models import PYTHON_TABLES, load_models
    from spiders.layout import SQL_DIR

    return {m.table: m for m in load_models(SQL_DIR, PYTHON_TABLES) if m.materialized != "view"}


def copy_whole(con, table: str) -> str:
    """The whole table again: a model rebuilt from scratch or in full, a table Python writes.
    Those rebuilt in full every hour are small (at most a row per offer or per month): writing
    them costs less than comparing them first (an `except all` both ways, 5-20x the write)."""
    con.execute(f"delete from gen.{table}")
    con.execute(f"insert into gen.{table} select * from work.{table}")
    return "whole"


def append_new_rows(con, table: str) -> str:
    """Rows are only added to `table`: copy those past the generation's count (by rowid, so
    DuckDB reads only the row groups that hold them). The row before them must be the same in
    both, else the table was not append-only after all."""
    held = con.execute(f"select count(*) from gen.{table}").fetchone()[0]
    if held:
        last = f"select * from {{}}.{table} where rowid = {held - 1}"
        if con.execute(f"{last.format('gen')} except all {last.format('work')}").fetchall():
            raise NotInPlace(f"{table}: rows changed where only rows are added")
    con.execute(f"insert into gen.{table} select * from work.{table} where rowid >= {held}")
    return f"rows after {held}"


def replace_changed_rows(con, table: str, key: str, changed_sql: str) -> str:
    """The rows of `table` that may differ from the generation's, replaced by key: the rows added
    since it was synced and the rows it holds still open (`changed_sql`), never the whole table,
    which grows with every crawl while an hour changes a few rows. The row before the added ones
    must be in the generation, else rows were not only added after all."""
    held = con.execute(f"select count(*) from gen.{table}").fetchone()[0]
    if held and not con.execute(
            f"select count(*) from gen.{table} where {key} = "
            f"(select {key} from work.{table} where rowid = {held - 1})").fetchone()[0]:
        raise NotInPlace(f"{table}: rows changed where rows are only added or updated")
    con.execute("create or replace temp table changed_keys as "
                + sql_text(__file__, changed_sql), {"held": held})
    changed = con.execute("select count(*) from changed_keys").fetchone()[0]
    con.execute(f"delete from gen.{table} where {key} in (from changed_keys)")
    con.execute(f"insert into gen.{table} select * from work.{table} "
                f"where {key} in (from changed_keys)")
    con.execute("drop table changed_keys")
    return f"{changed} rows by {key}"


def crawls_loaded_since(con, held: dict[str, list]) -> list[tuple]:
    """crawl_first_days.crawls_since of attached `work`, from the earliest build the generation
    holds: one read for every model."""
    if not held:
        return []
    default = con.execute("select current_database()").fetchone()[0]
    con.execute("use work")       # the runner's query names the default catalog's tables
    try:
        return crawls_since(con, min(build[0] for build in held.values()))
    finally:
        con.execute(f'use "{default}"')


def model_change(table: str, held: dict[str, list], built: dict[str, list],
                 loaded: Callable[[], list[tuple]]) -> str:
    """What changed in `table` between two of the runner's records of its builds, `held` (what a
    copy holds) and `built` (what the working database holds now): "whole" (not a model, rebuilt
    from scratch (reset_at, SQL), rebuilt in full, or by key), "unchanged", or the first value
    of its incremental column rebuilt since, an ISO date (a day or month grain). The one rule of
    the generations and the dated feeds (pipelines/feed_days.py). `loaded`: crawls_loaded_since,
    read only when needed."""
    model, before, after = table_models().get(table), held.get(table), built.get(table)
    if model is None or before is None or after is None or before[1:] != after[1:]:
        return "whole"
    if before == after or not model.reads:
        return "unchanged"              # not built since, or a constant table built again
    if not model.incremental_by or model.incremental_grain not in ("day", "month"):
        return "whole"
    first_new_day, uncached = first_new_day_since(loaded(), before[0])
    if uncached:
        return "whole"
    if first_new_day is None:
        return "unchanged"              # built, but nothing new reached it
    return model.rebuild_start(first_new_day.isoformat())


def sync_table(con, table: str, held: dict[str, list], built: dict[str, list],
               loaded: list[tuple] | None = None) -> str:
    """Bring `table` of attached `gen` up to what it is in attached `work`; returns how.
    `loaded`: crawls_loaded_since (read here when not given)."""
    if table in APPEND_ONLY_TABLES:
        return append_new_rows(con, table)
    if table in KEYED_TABLES:
        return replace_changed_rows(con, table, *KEYED_TABLES[table])
    change = model_change(table, held, built,
                          lambda: crawls_loaded_since(con, held) if loaded is None else loaded)
    if change == "whole":
        return copy_whole(con, table)
    if change == "unchanged":
        return change
    kept = f"{table_models()[table].incremental_by} >= date '{change}'"
    con.execute(f"delete from gen.{table} where {kept}")
    con.execute(f"insert into gen.{table} select * from work.{table} where {kept}")
    return f"from {change}"


def check_usable(generation: Path) -> dict:
    """The generation's recorded state, or NotInPlace saying why it cannot be written in place."""
    state = read_state(generation)
    if state is None or not generation.exists():
        raise NotInPlace(f"{generation}: no record of what it holds")
    if file_stamp(generation) != state.get("stamp"):
        raise NotInPlace(f"{generation}: written since it was published (a writer session?)")
    if published_wal(generation).exists():
        raise NotInPlace(f"{generation}: a write-ahead log beside it")
    if open_in_this_process(generation):
        raise NotInPlace(f"{generation}: open in this process")
    return state


def sync_in_place(work: Path, generation: Path) -> dict[str, str]:
    """Bring `generation` up to date with the (checkpointed, closed) working database `work` in
    one transaction, checkpoint it and record it; returns how each table changed. Raises
    NotInPlace, or whatever failed, with the generation's record removed: the caller then writes
    a whole copy in its place."""
    import duckdb

    state = check_usable(generation)
    forget_state(generation)
    con = duckdb.connect()
    try:
        try:
            con.execute(f"attach '{generation}' as gen")
        except duckdb.Error as exc:      # a reader holds it: "Could not set lock"
            raise NotInPlace(f"{generation}: {exc}") from exc
        con.execute(f"attach '{work}' as work (read_only)")
        con.execute("set TimeZone = 'UTC'")
        catalog = catalog_digest(con, "work")
        if catalog != (state.get("catalog") or catalog_digest(con, "gen")):
            raise NotInPlace(f"{generation}: tables, views, macros or comments changed")
        held, built = state.get("model_state", {}), model_states(con, "work")
        # the commit checkpoints the generation itself instead of first writing the hour's rows
        # to its WAL and then again into the file (the checkpoint below then finds nothing)
        con.execute("set checkpoint_threshold = '0b'")
        con.execute("begin")
        loaded = crawls_loaded_since(con, held)
        how = {t: sync_table(con, t, held, built, loaded) for t in published_tables(con)}
        check_counts(con, [t for t, h in how.items() if h != "unchanged"])
        con.execute("commit")
        con.execute("checkpoint gen")
        con.execute("detach gen")
    finally:
        con.close()
    if published_wal(generation).exists():
        raise NotInPlace(f"{generation}: the checkpoint left a write-ahead log")
    with open(generation, "rb") as fh:
        os.fsync(fh.fileno())
    write_state(generation, built, catalog)
    return how


def check_counts(con, tables: list[str]) -> None:
    """Every table written has as many rows in the generation as in the working database."""
    if not tables:
        return
    counts = con.execute("select " + ", ".join(
        f"(select count(*) from gen.{t}), (select count(*) from work.{t})" for t in tables)
    ).fetchone()        # one statement: each costs its round trip
    for table, held, work in zip(tables, counts[::2], counts[1::2], strict=True):
        if held != work:
            raise NotInPlace(f"{table}: {held} rows in the generation, {work} in the working one")
