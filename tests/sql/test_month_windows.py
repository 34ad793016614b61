"""The windows of a local month (baseline, month end, next start, start phase) live in one
model, intermediate.int_month_windows, and every month-end model reads them there: no model
states its own, and the month-by-month models' lookback covers the next start they read."""

from __future__ import annotations

import re

import duckdb
import pytest

from pipelines.warehouse.sql_models import load_models
from spiders.layout import SQL_DIR
from tests.helpers.observations import EXTERNAL

WINDOWS = "intermediate.int_month_windows"
# a window's day or length given as a number in a model's SQL: `8 as baseline_first_day`
STATED = re.compile(r"\b\d+\s+as\s+(baseline_first_day|baseline_last_day|month_end_window_days|"
                    r"next_start_last_day|start_first_day|start_last_day|mid_first_day|"
                    r"mid_last_day)\b")


def _windows() -> dict:
    model = next(m for m in load_models(SQL_DIR, EXTERNAL) if m.table == WINDOWS)
    cursor = duckdb.connect().execute(model.select)
    return dict(zip([d[0] for d in cursor.description], cursor.fetchone(), strict=True))


def test_the_windows_are_one_row_a_month_can_hold():
    windows = _windows()
    assert windows == {"baseline_first_day": 8, "baseline_last_day": 22,
                       "month_end_window_days": 5, "start_first_day": 2,
                       "next_start_last_day": 7, "min_baseline_days": 5,
                       "min_month_end_days": 2, "min_next_start_days": 2,
                       "z_one_sided": pytest.approx(1.645)}
    # start < baseline < month end, apart in every month (the shortest has 28 days)
    assert windows["start_first_day"] <= windows["next_start_last_day"] \
        < windows["baseline_first_day"] <= windows["baseline_last_day"] \
        < 28 - windows["month_end_window_days"] + 1


def test_every_month_end_model_reads_them_and_none_states_its_own():
    models = load_models(SQL_DIR, EXTERNAL)
    readers = {m.table for m in models if WINDOWS in m.reads}
    assert readers == {"intermediate.int_offer_month_depth",
                       "intermediate.int_group_month_listings",
                       "intermediate.int_source_month_reads", "marts.month_phase_stability",
                       "marts.holiday_discount", "marts.month_end_dip",
                       "marts.month_end_capacity"}
    stating = {m.table: STATED.findall(m.sql) for m in models if m.table != WINDOWS}
    assert {t: found for t, found in stating.items() if found} == {}


def test_the_month_by_month_lookback_covers_the_next_start():
    """A month's row reads days 1-7 of the next month: new observations there must rebuild it."""
    next_start = _windows()["next_start_last_day"]
    for model in load_models(SQL_DIR, EXTERNAL):
        if WINDOWS in model.reads and model.incremental_grain == "month" \
                and model.table != "marts.month_phase_stability":   # reads its own month only
            assert model.lookback_days == next_start, model.table
