"""The model runner's incremental strategies on toy models: by day, by month (with a lookback),
by key (the rows of the keys in the new observations), constant tables built once, and the
rebuilds from scratch that a changed model forces on itself and on the models that read it."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from pipelines.warehouse.model_macros import create_since_macros
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
    where observed_hour >= since_hour(0)
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
    ("-- incremental: offer_id by merge", "merge", 0),
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


# -- the incremental filter, written once (pipelines/warehouse/sql/since_macros.sql) -----------

# What each macro replaced, as the models used to type it by hand.
SINCE_BY_HAND = {
    "since_day()": "coalesce(getvariable('since')::date, date '0001-01-01')",
    "since_hour(0)": "coalesce(getvariable('since')::timestamptz, "
                     "timestamptz '0001-01-01 00:00:00+00')",
    "since_hour(1)": "coalesce((getvariable('since')::date - interval 1 day)::timestamptz, "
                     "timestamptz '0001-01-01 00:00:00+00')",
    "since_local_hour()": "coalesce(getvariable('since')::timestamptz, "
                          "timestamptz '0001-01-01 00:00:00+00') - interval 14 hours",
}


@pytest.mark.parametrize("since", [None, "2026-05-01", "2026-01-01", "2024-03-01"])
@pytest.mark.parametrize(("macro", "by_hand"), SINCE_BY_HAND.items())
def test_each_since_macro_is_the_filter_it_replaced(con, since, macro, by_hand):
    con.execute("set TimeZone = 'UTC'")     # as run_model sets it
    create_since_macros(con)
    if since:
        con.execute(f"set variable since = date '{since}'")
    got, typed = con.execute(f"select {macro}, {by_hand}").fetchone()
    assert (got, type(got)) == (typed, type(typed))


@pytest.mark.parametrize(("since", "day", "hour_before"), [
    (None, date(1, 1, 1), datetime(1, 1, 1, tzinfo=UTC)),
    ("2026-05-01", date(2026, 5, 1), datetime(2026, 4, 30, tzinfo=UTC)),   # across a month
    ("2026-01-01", date(2026, 1, 1), datetime(2025, 12, 31, tzinfo=UTC)),  # ... and a year
    ("2024-03-01", date(2024, 3, 1), datetime(2024, 2, 29, tzinfo=UTC)),   # a leap day
])
def test_since_is_the_first_day_rebuilt_and_everything_when_unset(con, since, day, hour_before):
    create_since_macros(con)
    if since:
        con.execute(f"set variable since = date '{since}'")
    got_day, hour, earlier = con.execute(
        "select since_day(), since_hour(0), since_hour(1)").fetchone()
    assert got_day == day
    assert hour == datetime.combine(day, datetime.min.time(), UTC)
    assert earlier == hour_before
    con.execute("reset variable since")


def test_since_local_hour_is_the_first_local_midnight_of_since_in_any_zone(con):
    """The local-day models read from since_local_hour(): no zone's local day `since` starts
    before it, and the easternmost zone's starts exactly then."""
    con.execute("set TimeZone = 'UTC'")
    create_since_macros(con)
    con.execute("set variable since = date '2026-05-01'")
    first_hour, easternmost = con.execute(
        "select since_local_hour(), min(timezone(name, timestamp '2026-05-01 00:00:00')) "
        "from pg_timezone_names()").fetchone()
    assert first_hour == easternmost


def test_the_macros_are_stored_in_the_database_for_views_and_the_shell(tmp_path):
    """A view that filters with since_day() reads everything from another connection (the
    published copy, a DuckDB shell), where nothing has set `since` or made the macros."""
    import duckdb

    _write(tmp_path / "models", "staging/v.sql",
           "/* v */\n-- materialized: view\nselect * from observations "
           "where observed_hour >= since_hour(1)")
    db = tmp_path / "w.db"
    con = duckdb.connect(str(db))
    from pipelines.warehouse.db import ensure_schema

    ensure_schema(con)
    _look(con, "c1", datetime(2026, 4, 20, 9, tzinfo=UTC))
    assert _build(con, tmp_path / "models") == {"staging.v": "view"}
    con.close()
    shell = duckdb.connect(str(db), read_only=True)
    try:
        assert shell.execute("select count(*), min(since_day()) from staging.v").fetchone() == (
            1, date(1, 1, 1))
    finally:
        shell.close()


def test_an_incremental_build_reads_its_since_and_leaves_it_unset(con, tmp_path):
    """During the build since_day() is the first day rebuilt (the model records what it read);
    after it, the next full build reads everything."""
    _write(tmp_path, "marts/scanned.sql",
           "/* rows the build scanned */\n-- incremental: d\n"
           "select observed_hour::date as d, since_day() as since, "
           "(select count(*) from observations where observed_hour >= since_hour(0)) as scanned "
           "from observations group by d")
    _look(con, "c1", datetime(2026, 4, 20, 9, tzinfo=UTC))
    _look(con, "c1", datetime(2026, 4, 21, 9, tzinfo=UTC), "b")
    assert _build(con, tmp_path) == {"marts.scanned": "full"}
    _look(con, "c2", datetime(2026, 4, 22, 9, tzinfo=UTC))
    assert _build(con, tmp_path) == {"marts.scanned": "incremental from 2026-04-22"}
    assert con.execute("select d, since, scanned from marts.scanned order by d").fetchall() == [
        (date(2026, 4, 20), date(1, 1, 1), 2),        # the full build: every row
        (date(2026, 4, 21), date(1, 1, 1), 2),
        (date(2026, 4, 22), date(2026, 4, 22), 1)]    # the incremental one: its day only
    assert con.execute("select since_day()").fetchone() == (date(1, 1, 1),)


def test_the_macros_are_made_again_when_their_text_changes_and_only_then(con, tmp_path,
                                                                       monkeypatch):
    """The runner stamps its setup (every macro's text) on raw.model_state and makes it again
    only under a new stamp: a changed terms list reaches the stored macro at the next build."""
    _write(tmp_path, "marts/months.sql", COUNTS_BY_MONTH)
    _look(con, "c1", datetime(2026, 4, 20, 9, tzinfo=UTC))
    _build(con, tmp_path)
    stamp = con.execute("select comment from duckdb_tables() where table_name = 'model_state'"
                        ).fetchone()[0]
    con.execute("create or replace macro mission_families() as ['marker']")
    _build(con, tmp_path)       # same stamp: the setup is not made again
    assert con.execute("select mission_families()").fetchone()[0] == ["marker"]
    assert con.execute("select index_use_forbidden('vastai', null)").fetchone()[0]
    monkeypatch.setattr("spiders.terms.index_excluded_sources", frozenset)
    _build(con, tmp_path)       # a new terms list: a new stamp, every macro made again
    assert not con.execute("select index_use_forbidden('vastai', null)").fetchone()[0]
    assert con.execute("select mission_families()").fetchone()[0] != ["marker"]
    assert con.execute("select comment from duckdb_tables() where table_name = 'model_state'"
                       ).fetchone()[0] != stamp


def test_a_view_and_an_alias_are_made_again_when_missing(con, tmp_path):
    _write(tmp_path, "staging/v.sql", "/* v */\n-- materialized: view\n"
           "select offer_id from observations")
    _write(tmp_path, "marts/m.sql", "/* m */\n-- alias: m_alias\nselect count(*) as n "
           "from observations")
    _look(con, "c1", datetime(2026, 4, 20, 9, tzinfo=UTC))
    assert _build(con, tmp_path) == {"staging.v": "view", "marts.m": "full"}
    con.execute("drop view staging.v")
    con.execute("drop view m_alias")
    assert _build(con, tmp_path) == {"staging.v": "view", "marts.m": "full"}
    assert con.execute("select count(*) from staging.v").fetchone() == (1,)
    assert con.execute("select n from m_alias").fetchone() == (1,)


def test_an_up_to_date_model_writes_no_state(con, tmp_path):
    _write(tmp_path, "marts/months.sql", COUNTS_BY_MONTH)
    _look(con, "c1", datetime(2026, 4, 20, 9, tzinfo=UTC))
    _build(con, tmp_path)
    built = con.execute("select built_at from raw.model_state").fetchall()
    assert _build(con, tmp_path) == {"marts.months": "up to date"}
    assert con.execute("select built_at from raw.model_state").fetchall() == built


LAST_LOOK = """/* each offer's first and last look */
-- incremental: offer_id by merge
-- merge: first_at least
select offer_id, min(observed_at) as first_at, max(observed_at) as last_at, count(*) as looks
from observations
where observed_hour >= since_hour(0)
group by offer_id
"""


def test_a_merge_model_replaces_the_rows_of_the_keys_seen_on_the_rebuilt_days(con, tmp_path):
    """The select reads the rebuilt days only; a key it returns replaces its stored row, but for
    the columns with a rule (first_at keeps the least); a key it does not return is kept."""
    _write(tmp_path, "marts/looks.sql", LAST_LOOK)
    _look(con, "c1", datetime(2026, 5, 1, 9, tzinfo=UTC), "a")
    _look(con, "c1", datetime(2026, 5, 1, 9, tzinfo=UTC), "b")
    assert _build(con, tmp_path) == {"marts.looks": "full"}
    _look(con, "c2", datetime(2026, 5, 3, 9, tzinfo=UTC), "b")
    assert _build(con, tmp_path) == {"marts.looks": "incremental from 2026-05-03"}
    rows = {sku: (first.day, last.day, looks) for sku, first, last, looks in con.execute(
        "select o.sku, l.first_at, l.last_at, l.looks from marts.looks as l "
        "inner join (select distinct offer_id, sku from observations) as o using (offer_id)"
    ).fetchall()}
    # b: first look kept from the stored row, last look and count from the rebuilt day only
    assert rows == {"a": (1, 1, 1), "b": (1, 3, 1)}
    assert _build(con, tmp_path) == {"marts.looks": "up to date"}
    assert not con.execute("select count(*) from duckdb_tables() where table_name = 'merge_rows'"
                           ).fetchone()[0]


def test_a_merge_rule_needs_a_merge_grain(tmp_path):
    _write(tmp_path, "marts/m.sql", "/* m */\n-- incremental: d\n-- merge: d least\nselect 1 as d")
    with pytest.raises(SqlModelError, match="needs '-- incremental: <key> by merge'"):
        load_models(tmp_path, EXTERNAL)


def test_a_crawl_normalized_again_has_its_first_day_found_again(con, tmp_path):
    """raw.crawl_first_days has no key: a crawl whose normalized_at moved (its rows loaded again,
    now with an earlier hour) gets one fresh row, and the models rebuild from its new first day."""
    _write(tmp_path, "marts/months.sql", COUNTS_BY_MONTH)
    _look(con, "c1", datetime(2026, 4, 20, 9, tzinfo=UTC))
    _build(con, tmp_path)
    _look(con, "c2", datetime(2026, 5, 3, 9, tzinfo=UTC))
    assert _build(con, tmp_path) == {"marts.months": "incremental from 2026-05-03"}
    _look(con, "c2", datetime(2026, 4, 25, 9, tzinfo=UTC))   # the same crawl, loaded again
    con.execute("update raw.crawls set normalized_at = now() where crawl_id = 'c2'")
    assert _build(con, tmp_path) == {"marts.months": "incremental from 2026-04-25"}
    assert con.execute("select count(*), min(first_day) from raw.crawl_first_days "
                       "where crawl_id = 'c2'").fetchone() == (1, date(2026, 4, 25))
