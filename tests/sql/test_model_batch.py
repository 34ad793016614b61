"""The model runner's batch (pipelines/warehouse/model_batch.py): the catalog, the models' state
and the first new day read once for many models, a failed model rolled back alone, and the
first day of a crawl recorded by its writer (pipelines/warehouse/crawl_first_days.py) so that
the runner does not scan the history for it."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import duckdb
import pytest

from pipelines.simulate import DUCKDB_CONFIG, append_hour, load_offers, simulate
from pipelines.warehouse.crawl_first_days import record_crawl_first_days
from pipelines.warehouse.model_batch import ModelBatch
from pipelines.warehouse.sql_models import load_models, run_model
from spiders.layout import SQL_DIR
from tests.helpers.observations import EXTERNAL, insert, obs, record_crawl

DAILY = """/* looks per day */
-- incremental: d
select observed_hour::date as d, count(*) as looks
from observations
where observed_hour >= since_hour(0)
group by d
"""
OFFERS = """/* looks per offer */
-- incremental: offer_id by key
select offer_id, count(*) as looks from observations group by offer_id
"""
VIEW = "/* every look */\n-- materialized: view\nselect * from observations"
# fails when run incrementally (since set), builds in full
FAILS_INCREMENTALLY = """/* a model whose incremental build fails */
-- incremental: d
select
    observed_hour::date as d,
    case when since_day() > date '0001-01-01' then error('boom') end as x
from observations
"""
# rebuilt in full every time; what since_day() said while it was built
SINCE_SEEN = """/* the since_day() a full build sees */
select since_day() as seen, count(*) as looks from observations
"""


class Recording:
    """A connection that keeps the text of every statement it runs."""

    def __init__(self, con) -> None:
        self.con, self.statements = con, []

    def execute(self, sql, *args, **kwargs):
        self.statements.append(sql)
        return self.con.execute(sql, *args, **kwargs)

    def count(self, text: str) -> int:
        return sum(text in s for s in self.statements)


def _write(root: Path, models: dict[str, str]) -> list:
    for rel, sql in models.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(sql)
    return load_models(root, EXTERNAL)


def _look(con, crawl: str, at: datetime, sku: str = "a") -> None:
    insert(con, [obs("10", observed_at=at, sku=sku)], crawl_id=crawl)


def test_a_batch_reads_the_catalog_the_state_and_the_first_new_day_once(con, tmp_path):
    models = _write(tmp_path, {"marts/daily.sql": DAILY, "marts/offers.sql": OFFERS,
                               "staging/looks.sql": VIEW})
    _look(con, "c1", datetime(2026, 5, 1, 9, tzinfo=UTC))
    first = ModelBatch(con)
    assert {first.build(m) for m in models} == {"full", "view"}
    _look(con, "c2", datetime(2026, 5, 2, 9, tzinfo=UTC), "b")
    recording = Recording(con)
    batch = ModelBatch(recording)
    builds = {m.table: batch.build(m) for m in models}
    assert builds == {"marts.daily": "incremental from 2026-05-02",
                      "marts.offers": "incremental from 2026-05-02",
                      "staging.looks": "view"}
    assert recording.count("duckdb_tables()") == 1
    assert recording.count("from raw.model_state as s") == 1
    # the hand-made crawl c2 was not recorded by its writer: found by one scan, for both models
    assert recording.count("insert into raw.crawl_first_days") == 1
    assert recording.count("The crawls normalized since") == 2   # before and after the scan
    assert recording.count("set TimeZone") == 1
    # the same rows as a build model by model
    assert con.execute("select d, looks from marts.daily order by d").fetchall() == [
        (date(2026, 5, 1), 1), (date(2026, 5, 2), 1)]
    # the batch's builds share one build time, so the next hour's share one first new day
    assert con.execute("select count(distinct built_at) from raw.model_state "
                       "where model like 'marts.%'").fetchone() == (1,)
    assert {m.table: run_model(con, m) for m in models}["marts.daily"] == "up to date"


def test_a_failed_model_is_rolled_back_alone_and_leaves_no_since(con, tmp_path):
    models = _write(tmp_path, {"marts/a_fails.sql": FAILS_INCREMENTALLY,
                               "marts/b_since.sql": SINCE_SEEN, "marts/c_daily.sql": DAILY})
    _look(con, "c1", datetime(2026, 5, 1, 9, tzinfo=UTC))
    batch = ModelBatch(con)
    assert [batch.build(m) for m in models] == ["full", "full", "full"]
    _look(con, "c2", datetime(2026, 5, 2, 9, tzinfo=UTC))
    batch = ModelBatch(con)
    fails, since_seen, daily = models
    states = dict(con.execute("select model, built_at from raw.model_state").fetchall())
    with pytest.raises(duckdb.Error, match="boom"):
        batch.build(fails)
    # the next model builds in full, unfiltered by the failed one's since
    assert batch.build(since_seen) == "full"
    assert con.execute("select seen, looks from marts.b_since").fetchone() == (
        date(1, 1, 1), 2)
    assert batch.build(daily) == "incremental from 2026-05-02"
    after = dict(con.execute("select model, built_at from raw.model_state").fetchall())
    assert after["marts.a_fails"] == states["marts.a_fails"]     # its state rolled back too
    assert after["marts.c_daily"] > states["marts.c_daily"]


def test_a_batch_after_a_dropped_table_reads_the_catalog_again(con, tmp_path):
    """A failed build drops the batch's memory: a table the rolled-back build had created (or
    one dropped meanwhile) is looked up again, not assumed."""
    [daily] = _write(tmp_path, {"marts/daily.sql": DAILY})
    _look(con, "c1", datetime(2026, 5, 1, 9, tzinfo=UTC))
    batch = ModelBatch(con)
    assert batch.build(daily) == "full"
    con.execute("drop table marts.daily")
    _look(con, "c2", datetime(2026, 5, 2, 9, tzinfo=UTC))
    with pytest.raises(duckdb.CatalogException):
        batch.build(daily)              # the batch still believed the table was there
    assert batch.build(daily) == "full"


def test_a_writer_records_the_first_day_of_its_crawls(con):
    """record_crawl_first_days caches the first UTC day of the crawls one write normalized,
    reading the rows from its first hour on; a crawl without rows gets none."""
    record_crawl(con, "c1", "idc_test")
    record_crawl(con, "empty", "idc_test")
    con.execute("update raw.crawls set normalized_at = timestamptz '2026-05-02 10:00:00+00'")
    insert(con, [obs("10", observed_at=datetime(2026, 5, 1, 23, tzinfo=UTC), crawl_id="c1"),
                 obs("10", observed_at=datetime(2026, 5, 2, 9, tzinfo=UTC), crawl_id="c1",
                     sku="b")])
    record_crawl_first_days(con, datetime(2026, 5, 1, 23, tzinfo=UTC),
                            datetime(2026, 5, 2, 10, tzinfo=UTC))
    assert sorted(con.execute("select crawl_id, first_day from raw.crawl_first_days"
                              ).fetchall()) == [("c1", date(2026, 5, 1)), ("empty", None)]
    # recorded again (the same write): no second row
    record_crawl_first_days(con, datetime(2026, 5, 1, 23, tzinfo=UTC),
                            datetime(2026, 5, 2, 10, tzinfo=UTC))
    assert con.execute("select count(*) from raw.crawl_first_days").fetchone() == (2,)


def test_the_simulator_records_its_crawls_so_the_runner_scans_no_history(tmp_path):
    path = tmp_path / "sim.db"
    offers = load_offers(sources=["idc_ulanqab"])
    start = datetime(2026, 6, 1, tzinfo=UTC)
    simulate(path, offers=offers, start=start, days=2, seed=1, every_hours=6)
    append_hour(path, datetime(2026, 6, 3, 1, tzinfo=UTC), offers, seed=1)
    with duckdb.connect(str(path), config=dict(DUCKDB_CONFIG)) as con:
        scanned = con.execute("""
            select c.crawl_id, min(timezone('UTC', o.observed_hour))::date
            from raw.crawls as c left join observations as o using (crawl_id)
            group by c.crawl_id order by all""").fetchall()
        assert con.execute("select crawl_id, first_day from raw.crawl_first_days order by all"
                           ).fetchall() == scanned
        recording = Recording(con)
        batch = ModelBatch(recording)
        builds = [batch.build(m) for m in load_models(SQL_DIR)]
        assert "incremental from 2026-06-03" in builds
        assert recording.count("insert into raw.crawl_first_days") == 0


# rebuilt in full every hour (it reads a table and is not incremental), also the view main.<alias>
PER_SKU = """/* looks per SKU */
-- alias: sku_looks
select sku, count(*) as looks from observations group by sku
"""
COMMENTS = """
    select 'table', schema_name || '.' || table_name, null, comment from duckdb_tables()
    where table_name = 'per_sku'
    union all
    select 'view', view_name, null, comment from duckdb_views() where view_name = 'sku_looks'
    union all
    select 'column', table_name, column_name, comment from duckdb_columns()
    where table_name = 'per_sku'
    order by all"""


def _comment(con) -> None:
    con.execute("comment on table marts.per_sku is 'per SKU'")
    con.execute("comment on column marts.per_sku.looks is 'how many looks'")
    con.execute("comment on view main.sku_looks is 'the alias'")


def test_a_full_rebuild_replaces_the_rows_in_its_table_and_keeps_its_comments(con, tmp_path):
    """The hourly full rebuild of an unchanged model deletes and inserts its rows: the table,
    its alias view and their comments stay, so publishing has none to write again."""
    [per_sku] = _write(tmp_path, {"marts/per_sku.sql": PER_SKU})
    _look(con, "c1", datetime(2026, 5, 1, 9, tzinfo=UTC))
    assert ModelBatch(con).build(per_sku) == "full"
    _comment(con)
    commented = con.execute(COMMENTS).fetchall()
    _look(con, "c2", datetime(2026, 5, 1, 10, tzinfo=UTC), "b")
    recording = Recording(con)
    assert ModelBatch(recording).build(per_sku) == "full"
    assert recording.count("create or replace") == 0
    assert recording.count("delete from marts.per_sku") == 1
    assert con.execute(COMMENTS).fetchall() == commented
    assert ("column", "per_sku", "looks", "how many looks") in commented
    assert con.execute("select sku, looks from main.sku_looks order by sku").fetchall() == [
        ("a", 1), ("b", 1)]


@pytest.mark.parametrize("change", ["own columns", "input's columns", "runner setup", "full"])
def test_a_full_rebuild_creates_the_table_anew_when_its_columns_may_differ(con, tmp_path,
                                                                            change):
    """A changed SQL (its own, or a model's it reads, rebuilt from scratch), a new runner setup
    (the macros or schema.sql) or a full build asked for: the table is created from the select,
    with its new columns (and without the old comments, which publishing writes again)."""
    base = {"staging/looks.sql": VIEW,
            "marts/per_sku.sql": PER_SKU.replace("observations", "staging.looks")}
    models = _write(tmp_path, base)
    _look(con, "c1", datetime(2026, 5, 1, 9, tzinfo=UTC))
    assert [ModelBatch(con).build(m) for m in models] == ["view", "full"]
    _comment(con)
    columns = ["sku", "looks"]
    if change == "own columns":
        columns = ["sku", "looks", "dearest"]
        models = _write(tmp_path, {"marts/per_sku.sql": base["marts/per_sku.sql"].replace(
            "count(*) as looks", "count(*) as looks, max(price_amount) as dearest")})
    elif change == "input's columns":
        columns = ["sku", "looks"]
        models = _write(tmp_path, {"staging/looks.sql": VIEW.replace(
            "select *", "select sku, price_amount")})
    batch = ModelBatch(Recording(con))
    if change == "runner setup":
        batch.stamp = "another setup"
    assert [batch.build(m, full=change == "full") for m in models][-1] == "full"
    assert batch.con.count("create or replace table marts.per_sku") == 1
    assert batch.con.count("delete from marts.per_sku") == 0
    assert [r[0] for r in con.execute(
        "select column_name from duckdb_columns() where table_name = 'per_sku' "
        "order by column_index").fetchall()] == columns
    assert con.execute("select comment from duckdb_tables() where table_name = 'per_sku'"
                       ).fetchone() == (None,)
