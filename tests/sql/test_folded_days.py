"""The folded day grains (`-- fold:`, intermediate.int_offer_daily and int_offer_local_daily): an
hourly update folds the new hour's looks into the stored day rows, and reads whole the days a fold
would get wrong; either way the table equals a full build."""

from datetime import timedelta

import duckdb
import pytest

from pipelines.warehouse.db import ensure_schema
from tests.helpers.observations import BEIJING, DAY, FRANKFURT, build_only, insert, obs

FOLDED = ("intermediate.int_offer_daily", "intermediate.int_offer_local_daily")
MIDNIGHT = DAY.replace(hour=0)
AGGREGATED = {"source": "primeintellect", "reaches_via": "aggregator", "vendor": "RunPod",
              "sku": "agg:h100", **FRANKFURT}
DIRECT = {"source": "runpod", "vendor": "RunPod", "sku": "h100", **FRANKFURT}


def _at(hour: float) -> dict:
    return {"observed_at": MIDNIGHT + timedelta(hours=hour)}


def _tables(con) -> dict[str, list]:
    return {t: sorted(con.execute(f"select * from {t}").fetchall(), key=repr) for t in FOLDED}


def _counted(con, source: str) -> list:
    return [r[0] for r in con.execute(
        "select counted from intermediate.int_offer_daily where source = ?", [source]).fetchall()]


@pytest.fixture
def con():
    con = duckdb.connect()
    ensure_schema(con)
    # the day so far: an aggregator's offer no direct source lists (yet), a Beijing offer on
    # two local days, an offer with a look of unknown stock
    insert(con, [obs(30, **AGGREGATED, **_at(1)),
                 obs(40, **_at(1)), obs(44, **_at(17)),
                 obs(50, sku="b", **FRANKFURT, **_at(1)),
                 obs(52, sku="b", available=None, **FRANKFURT, **_at(2))], crawl_id="c1")
    build_only(con, *FOLDED)
    return con


def _update_equals_full_build(con, rows, crawl_id="c2") -> dict:
    insert(con, rows, crawl_id=crawl_id)
    hows = build_only(con, *FOLDED)
    assert {t: hows[t] for t in FOLDED} == dict.fromkeys(FOLDED, "incremental from 2026-11-30")
    folded = _tables(con)
    build_only(con, *FOLDED, full=True)
    assert _tables(con) == folded
    return folded


def test_the_new_hour_folds_into_the_stored_day(con):
    """Sums, firsts and lasts, lows and highs, stock: the stored looks and the new ones."""
    _update_equals_full_build(con, [obs(45, **_at(18)), obs(38, **_at(18), sku="x"),
                                   obs(48, sku="b", available=False, **FRANKFURT, **_at(18))])
    [(n, low, close, available, close_available)] = con.execute(
        "select observations, low_price_cny_per_gpu_hour, close_price_amount, available, "
        "close_available from intermediate.int_offer_daily where sku = 'b'").fetchall()
    assert (n, float(low), float(close), available, close_available) == (3, 48, 48, True, False)


def test_a_direct_look_later_the_same_day_uncounts_the_aggregators_stored_day(con):
    """The aggregator's offer has no new look; its stored day row still stops counting once its
    vendor's own source lists the like-for-like offer the same UTC day."""
    assert _counted(con, "primeintellect") == [True]
    _update_equals_full_build(con, [obs(31, **DIRECT, **_at(18))])
    assert _counted(con, "primeintellect") == [False]


@pytest.mark.parametrize("hour", [0.5, 1.25, 18.5], ids=["before the stored looks",
                                                         "between them", "after them"])
def test_a_crawl_of_an_hour_already_loaded_is_read_whole(con, hour):
    """A crawl of an hour some stored look is in or after (a late crawl, a second one of the
    hour): the fold would put its looks after the stored ones; those offers' days are read
    whole."""
    _update_equals_full_build(con, [obs(60, sku="b", **FRANKFURT, **_at(18))])
    _update_equals_full_build(con, [obs(20, sku="b", **FRANKFURT, **_at(hour))], crawl_id="c3")
    [(n, open_, close)] = con.execute(
        "select observations, open_price_amount, close_price_amount "
        "from intermediate.int_offer_local_daily where offer_id in "
        "(select offer_id from intermediate.int_offer_daily where sku = 'b')").fetchall()
    assert n == 4
    assert (float(open_), float(close)) == {0.5: (20, 60), 1.25: (50, 60), 18.5: (50, 20)}[hour]


def test_a_stored_look_of_no_recorded_crawl_is_not_folded_again(con):
    """A hand-made look (its crawl not in raw.crawls) in the new hour, built in full before: not
    one of the new crawls' looks, so its offer's day is read whole, not counted twice."""
    insert(con, [obs(60, sku="b", **FRANKFURT, **_at(18))])      # crawl-1, never recorded
    build_only(con, *FOLDED, full=True)
    _update_equals_full_build(con, [obs(20, sku="b", **FRANKFURT, **_at(18.5))])
    assert con.execute("select observations from intermediate.int_offer_daily "
                       "where sku = 'b'").fetchall() == [(4,)]


def test_beijing_local_days_fold_across_utc_midnight(con):
    """Local day 12-01 in Beijing began at 16:00 UTC on 11-30: its stored look and the new one."""
    _update_equals_full_build(con, [obs(41, **_at(23)), obs(39, **_at(23.5))])
    rows = con.execute("select local_date, observations, open_price_amount, close_price_amount "
                       "from intermediate.int_offer_local_daily where region_code = ? "
                       "order by local_date", [BEIJING["region_code"]]).fetchall()
    assert [(str(d), n, float(o), float(c)) for d, n, o, c in rows] == [
        ("2026-11-30", 1, 40, 40), ("2026-12-01", 3, 44, 39)]


@pytest.mark.parametrize("header", [
    "-- incremental: day by month\n-- fold: offer_id, day when n.a > o.b",
    "-- incremental: day lookback 2 days\n-- fold: offer_id, day when n.a > o.b",
    "-- fold: offer_id, day when n.a > o.b",
    "-- incremental: day\n-- merge: n least",
])
def test_a_fold_is_a_day_grain_and_merge_rules_need_one(tmp_path, header):
    from pipelines.warehouse.sql_models import SqlModelError, parse_model

    path = tmp_path / "intermediate" / "x.sql"
    path.parent.mkdir()
    path.write_text(f"/* x */\n{header}\nselect 1 as n from observations")
    with pytest.raises(SqlModelError, match=r"fold|merge"):
        parse_model(path, tmp_path)


def test_a_fold_header_names_its_keys_and_condition(tmp_path):
    from pipelines.warehouse.sql_models import parse_model

    path = tmp_path / "intermediate" / "x.sql"
    path.parent.mkdir()
    path.write_text("/* x */\n-- incremental: day\n-- fold: offer_id, day when n.a > o.b\n"
                    "-- merge: n least\nselect 1 as n from observations")
    model = parse_model(path, tmp_path)
    assert (model.fold_keys, model.fold_when, model.merge_rules) == (
        ("offer_id", "day"), "n.a > o.b", (("n", "least(n.n, o.n)"),))
