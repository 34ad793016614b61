"""The hourly contract check reads what the hour rebuilt (pipelines/warehouse/contract_scope.py):
an incremental model's rows from its rebuild start, a view projecting one such input likewise,
nothing for a model unchanged since its last passing check; the whole table after a failed check,
a full rebuild, or a build no check followed, so an old bad row is still found."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import dagster as dg
import pytest

from pipelines.defs.models import build_models
from pipelines.warehouse.contract_scope import (
    ALL_ROWS,
    NO_ROWS,
    Rows,
    audit_scope,
    projected_column,
    rows_changed,
)
from pipelines.warehouse.model_batch import ModelBatch
from pipelines.warehouse.sql_models import load_models
from tests.helpers.observations import DAY, EXTERNAL, insert, obs
from tests.pipelines.test_sql_models_step import Log

MODELS = {
    # one row per offer and day, rebuilt from the first new day
    "marts/daily.sql": "/* daily */\n-- incremental: observed_date\n"
                       "-- grain: offer_id, observed_date\n"
                       "-- audit: price_positive: price <= 0\n"
                       "select offer_id, observed_hour::date as observed_date, "
                       "min(price_amount) as price from observations group by all",
    # a projection of it: bounded as its input is
    "marts/daily_view.sql": "/* view */\n-- materialized: view\n"
                            "-- grain: offer_id, observed_date\n"
                            "-- audit: price_positive: price <= 0\n"
                            "select offer_id, observed_date, price from marts.daily",
    # a window over it: every row may change with a new day, so it is checked whole
    "marts/ranked_view.sql": "/* ranked */\n-- materialized: view\n"
                             "-- grain: offer_id, observed_date\n"
                             "-- audit: price_positive: price <= 0\n"
                             "select *, row_number() over (order by observed_date desc) as recency"
                             " from marts.daily",
}
DAYS = [DAY - timedelta(days=n) for n in range(4, -1, -1)]
OLD_DAY = DAYS[0].date().isoformat()


def _models(root: Path):
    for rel, sql in MODELS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(sql + "\n", encoding="utf-8")
    return load_models(root, EXTERNAL)


def _checks(con, models) -> dict[str, tuple[bool, int, str]]:
    """Build every model through the step: {table: (passed, bad rows, description)}."""
    results = {}
    for r in build_models(con, models, Log()):
        if isinstance(r, dg.AssetCheckResult):
            bad = sum(f["bad_rows"] for f in r.metadata["failures"].value)
            results[".".join(r.asset_key.path)] = (r.passed, bad, r.description)
    return results


def _land(con, day, price, crawl_id):
    insert(con, [obs(price, observed_at=day)], crawl_id=crawl_id)


@pytest.fixture
def built(con, tmp_path):
    """Five days built and checked whole (no check on record), then an old day's row made bad
    behind the runner's back: only a whole-table check sees it."""
    models = _models(tmp_path)
    insert(con, [obs(10, observed_at=day) for day in DAYS], crawl_id="crawl-1")
    first = _checks(con, models)
    assert all(passed and "rebuilt" not in text and "unchanged" not in text
               for passed, _, text in first.values()), first
    con.execute(f"update marts.daily set price = 0 where observed_date = date '{OLD_DAY}'")
    return models


def test_a_new_day_is_checked_alone_and_a_projecting_view_with_it(con, built):
    _land(con, DAY + timedelta(days=1), 10, "crawl-2")
    checks = _checks(con, built)
    new_day = (DAY + timedelta(days=1)).date().isoformat()
    for table in ("marts.daily", "marts.daily_view"):
        assert checks[table] == (True, 0, "grain (offer_id, observed_date) and 1 audits hold on "
                                          f"the rebuilt rows (observed_date >= date '{new_day}')")
    # the window view is read whole: it finds the old bad row
    assert checks["marts.ranked_view"][:2] == (False, 1)


def test_a_rebuilt_days_violation_fails_and_keeps_failing_until_fixed(con, built):
    _land(con, DAY + timedelta(days=1), 0, "crawl-2")
    assert _checks(con, built)["marts.daily"][:2] == (False, 1)    # the rebuilt day's row only
    # the next hour's check follows a failure: the whole table, the old bad row too
    _land(con, DAY + timedelta(days=2), 10, "crawl-3")
    assert _checks(con, built)["marts.daily"][:2] == (False, 2)


def test_a_build_no_check_followed_is_checked_whole(con, built):
    _land(con, DAY + timedelta(days=1), 10, "crawl-2")
    daily = next(m for m in built if m.table == "marts.daily")
    ModelBatch(con).build(daily)      # another runner's build: no check
    _land(con, DAY + timedelta(days=2), 10, "crawl-3")
    assert _checks(con, built)["marts.daily"][:2] == (False, 1)


def test_a_full_rebuild_is_checked_whole(con, built):
    con.execute(f"update observations set price_amount = 0 where observed_hour::date = "
                f"date '{OLD_DAY}'")
    checks_first = _checks(con, built)   # nothing new: up to date, its last pass stands
    assert checks_first["marts.daily"] == (
        True, 0, "grain (offer_id, observed_date) and 1 audits hold (unchanged since the last "
                 "passing check)")
    daily = next(m for m in built if m.table == "marts.daily")
    ModelBatch(con).build(daily, full=True)
    assert _checks(con, built)["marts.daily"][:2] == (False, 1)


@pytest.mark.parametrize("how, grain, lookback, expected", [
    ("up to date", "day", 0, NO_ROWS),
    ("incremental from 2026-03-10", "day", 0, Rows("from", "d", "2026-03-10")),
    ("incremental from 2026-03-10", "day", 7, Rows("from", "d", "2026-03-03")),
    ("incremental from 2026-03-10", "month", 0, Rows("from", "d", "2026-03-01")),
    ("incremental from 2026-03-10", "key", 0, ALL_ROWS),
    ("incremental from 2026-03-10", "merge", 0, ALL_ROWS),
    ("full", "day", 0, ALL_ROWS),
])
def test_a_tables_changed_rows_follow_its_build(tmp_path, how, grain, lookback, expected):
    [model] = _models(tmp_path)[:1]
    model = replace(model, **{"incremental_by": "d", "incremental_grain": grain,
                           "lookback_days": lookback})
    assert rows_changed(model, how, {}) == expected


@pytest.mark.parametrize("view, inputs, expected", [
    ("marts.daily_view", {"marts.daily": NO_ROWS}, NO_ROWS),
    ("marts.daily_view", {"marts.daily": Rows("from", "observed_date", "2026-03-10")},
     Rows("from", "observed_date", "2026-03-10")),
    ("marts.daily_view", {"marts.daily": ALL_ROWS}, ALL_ROWS),
    ("marts.daily_view", {}, ALL_ROWS),                     # an input the step did not build
    ("marts.daily_view", {"marts.daily": Rows("from", "other", "2026-03-10")}, ALL_ROWS),
    ("marts.ranked_view", {"marts.daily": Rows("from", "observed_date", "2026-03-10")},
     ALL_ROWS),
])
def test_a_views_changed_rows_follow_its_inputs(tmp_path, view, inputs, expected):
    model = next(m for m in _models(tmp_path) if m.table == view)
    assert rows_changed(model, "view", inputs) == expected


@pytest.mark.parametrize("sql, projected", [
    ("select a, d from t where d >= since_day() order by d", True),
    ("select a, d as day from t", False),          # renamed
    ("select a, lag(d) over (order by d) as d from t", False),
    ("select a, max(d) as d from t group by a", False),
    ("select distinct a, d from t", False),
    ("select t.a, d from t join u using (a)", False),
    ("select a, d from t where a in (select a from u)", False),
    ("with x as (select * from t) select a, d from x", False),
])
def test_a_view_projects_its_input_only_row_for_row(tmp_path, sql, projected):
    [model] = _models(tmp_path)[:1]
    model = replace(model, **{"sql": sql})
    assert projected_column(model, "d") is projected


def test_a_check_after_a_failure_reads_everything():
    assert audit_scope(Rows("from", "d", "2026-03-10"), last_pass_holds=False) == ALL_ROWS
    assert audit_scope(NO_ROWS, last_pass_holds=False) == ALL_ROWS
    assert audit_scope(NO_ROWS, last_pass_holds=True) == NO_ROWS
