"""The model runner's incremental strategies on toy models: by day, by month (with a lookback),
by key (the rows of the keys in the new observations), constant tables built once, and the
rebuilds from scratch that a changed model forces on itself and on the models that read it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from pipelines.warehouse.sql_models import SqlModelError, load_models, run_model
from tests.helpers.observations import EXTERNAL, insert, obs

COUNTS_BY_OFFER = """/* looks per offer */
-- incremental: offer_id by key
select offer_id, count(*) as looks, max(observed_at) as last_at
from observations
group by offer_id
"""
COUNTS_BY_MONTH = """/* looks per month, counted with the next month's first 7 days */
-- incremental: month by month lookback 7 days
with days as (
    select date_trunc('month', observed_hour)::date as month, observed_hour::date as day
    from observations
    where observed_hour >= coalesce(getvariable('since')::timestamptz,
                                    timestamptz '0001-01-01 00:00:00+00')
)
select month, count(*) as looks, (
    select count(*) from days as n
    where n.month = d.month + interval 1 month and day(n.day) <= 7
) as next_start_looks
from days as d
group by month
"""


def _write(root: Path, rel: str, sql: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(sql)


def _look(con, crawl: str, at: datetime, sku: str = "a") -> None:
    insert(con, [obs("10", observed_at=at, sku=sku)], crawl_id=crawl)


def _build(con, root: Path) -> dict[str, str]:
    return {m.table: run_model(con, m) for m in load_models(root, EXTERNAL)}


@pytest.mark.parametrize(("header", "grain", "lookback"), [
    ("-- incremental: d", "day", 0),
    ("-- incremental: m by month", "month", 0),
    ("-- incremental: m by month lookback 7 days", "month", 7),
    ("-- incremental: d by day lookback 1 day", "day", 1),
    ("-- incremental: offer_id by key", "key", 0),
])
def test_the_incremental_header_names_column_grain_and_lookback(tmp_path, header, grain,
                                                                lookback):
    _write(tmp_path, "marts/m.sql", f"/* m */\n{header}\nselect 1 as d")
    [model] = load_models(tmp_path, EXTERNAL)
    assert (model.incremental_grain, model.lookback_days) == (grain, lookback)
    assert model.incremental_by == header.split()[2]


@pytest.mark.parametrize(("header", "error"), [
    ("-- incremental: d by week", "expected '-- incremental: <column>"),
    ("-- incremental: d lookback seven days", "expected '-- incremental: <column>"),
    ("-- incremental: offer_id by key lookback 2 days", "a lookback applies to a day or month"),
])
def test_a_bad_incremental_header_names_file_and_line(tmp_path, header, error):
    _write(tmp_path, "marts/m.sql", f"/* m */\n{header}\nselect 1 as d")
    with pytest.raises(SqlModelError, match=rf"m\.sql:2: {error}"):
        load_models(tmp_path, EXTERNAL)


@pytest.mark.parametrize(("header", "first_new_day", "start"), [
    ("-- incremental: d", "2026-05-03", "2026-05-03"),
    ("-- incremental: d by day lookback 3 days", "2026-05-03", "2026-04-30"),
    ("-- incremental: m by month", "2026-05-03", "2026-05-01"),
    ("-- incremental: m by month lookback 7 days", "2026-05-07", "2026-04-01"),
    ("-- incremental: m by month lookback 7 days", "2026-05-08", "2026-05-01"),
    ("-- incremental: offer_id by key", "2026-05-03", "2026-05-03"),
])
def test_the_rebuild_starts_at_the_first_new_day_its_lookback_and_its_month(
        tmp_path, header, first_new_day, start):
    _write(tmp_path, "marts/m.sql", f"/* m */\n{header}\nselect 1 as d")
    [model] = load_models(tmp_path, EXTERNAL)
    assert model.rebuild_start(first_new_day) == start


def test_a_key_model_replaces_only_the_rows_of_the_new_keys(con, tmp_path):
    _write(tmp_path, "marts/looks.sql", COUNTS_BY_OFFER)
    _look(con, "c1", datetime(2026, 5, 1, 9, tzinfo=UTC), "a")
    _look(con, "c1", datetime(2026, 5, 1, 9, tzinfo=UTC), "b")
    assert _build(con, tmp_path) == {"marts.looks": "full"}
    a, b = (r[0] for r in con.execute("select offer_id from marts.looks order by looks, offer_id"
                                      ).fetchall())
    # a marker on a's row: an incremental build that rebuilt a would erase it
    con.execute("update marts.looks set looks = -1 where offer_id = ?", [a])
    _look(con, "c2", datetime(2026, 5, 2, 9, tzinfo=UTC), "b")
    assert _build(con, tmp_path) == {"marts.looks": "incremental from 2026-05-02"}
    rows = dict(con.execute("select offer_id, looks from marts.looks").fetchall())
    assert rows == {a: -1, b: 2}        # b rebuilt (both looks), a left alone
    assert _build(con, tmp_path) == {"marts.looks": "up to date"}


def test_a_month_model_rebuilds_the_months_its_lookback_reaches(con, tmp_path):
    _write(tmp_path, "marts/months.sql", COUNTS_BY_MONTH)
    _look(con, "c1", datetime(2026, 3, 20, 9, tzinfo=UTC))
    _look(con, "c1", datetime(2026, 4, 20, 9, tzinfo=UTC))
    assert _build(con, tmp_path) == {"marts.months": "full"}
    con.execute("update marts.months set looks = -1 where month = date '2026-03-01'")
    _look(con, "c2", datetime(2026, 5, 3, 9, tzinfo=UTC))    # April's next start: April again
    assert _build(con, tmp_path) == {"marts.months": "incremental from 2026-05-03"}
    assert con.execute("select month, looks, next_start_looks from marts.months order by month"
                       ).fetchall() == [(datetime(2026, 3, 1).date(), -1, 0),
                                        (datetime(2026, 4, 1).date(), 1, 1),
                                        (datetime(2026, 5, 1).date(), 1, 0)]
    con.execute("update marts.months set looks = -1 where month = date '2026-04-01'")
    _look(con, "c3", datetime(2026, 5, 9, 9, tzinfo=UTC))    # past the lookback: May only
    _build(con, tmp_path)
    assert con.execute("select looks from marts.months where month = date '2026-04-01'"
                       ).fetchone() == (-1,)
    assert con.execute("select looks from marts.months where month = date '2026-05-01'"
                       ).fetchone() == (2,)


def test_a_rejected_crawl_rebuilds_nothing(con, tmp_path):
    _write(tmp_path, "marts/months.sql", COUNTS_BY_MONTH)
    _look(con, "c1", datetime(2026, 4, 20, 9, tzinfo=UTC))
    _build(con, tmp_path)
    con.execute("insert into raw.crawls (crawl_id, source, mode, passed, status, offers) "
                "values ('c2', 'idc_test', 'replay', false, 'rejected', 3)")
    assert _build(con, tmp_path) == {"marts.months": "up to date"}


def test_a_constant_table_is_built_once_per_version_of_its_sql(con, tmp_path):
    _write(tmp_path, "intermediate/table_of_n.sql", "/* n */\nselect unnest(range(3)) as n")
    assert _build(con, tmp_path) == {"intermediate.table_of_n": "full"}
    assert _build(con, tmp_path) == {"intermediate.table_of_n": "up to date"}
    _write(tmp_path, "intermediate/table_of_n.sql", "/* n */\nselect unnest(range(4)) as n")
    assert _build(con, tmp_path) == {"intermediate.table_of_n": "full"}
    assert con.execute("select count(*) from intermediate.table_of_n").fetchone() == (4,)


def test_a_changed_model_rebuilds_itself_and_what_reads_it_from_scratch(con, tmp_path):
    """A changed threshold in an upstream model (same columns) would otherwise leave every older
    row of an incremental model downstream computed with the old one."""
    _write(tmp_path, "staging/stg.sql",
           "/* s */\n-- materialized: view\nselect *, price_amount > 5 as dear from observations")
    _write(tmp_path, "marts/dear.sql", "/* d */\n-- incremental: day\n"
           "select observed_hour::date as day, count(*) filter (where dear) as dear "
           "from staging.stg group by day")
    _look(con, "c1", datetime(2026, 4, 20, 9, tzinfo=UTC))
    assert _build(con, tmp_path)["marts.dear"] == "full"
    _look(con, "c2", datetime(2026, 4, 21, 9, tzinfo=UTC))
    assert _build(con, tmp_path)["marts.dear"] == "incremental from 2026-04-21"
    _write(tmp_path, "staging/stg.sql",
           "/* s */\n-- materialized: view\nselect *, price_amount > 50 as dear from observations")
    assert _build(con, tmp_path) == {"staging.stg": "view", "marts.dear": "full"}
    assert con.execute("select sum(dear) from marts.dear").fetchone() == (0,)
    assert _build(con, tmp_path)["marts.dear"] == "up to date"
