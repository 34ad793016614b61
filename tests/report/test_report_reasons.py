"""An empty table of the report names its true reason, with counts (issue 41, item 5): the
month-end dips on curated tables only say those tables carry no calendar (not "no offer has a
complete month yet"), on dated sources what their months lack; an empty comparison says whether
there was nothing to compare or nothing to compare with."""

from __future__ import annotations

from datetime import timedelta

import duckdb
import pytest

from pipelines.report.signals import no_complete_month_reason, nothing_to_compare
from pipelines.warehouse.db import ensure_schema
from tests.helpers import observations
from tests.helpers.report_market import LAST_DAY, build_page, obs

WINDOWS = {"baseline_first_day": 8, "baseline_last_day": 22, "month_end_window_days": 5,
           "next_start_last_day": 7, "min_baseline_days": 5, "min_month_end_days": 2,
           "min_next_start_days": 2}


def evidence(**counts) -> dict:
    return {"calendarless_offers": 0, "calendarless_sources": 0, "offer_months": 0,
            "complete_months": 0, "short_baseline": 0, "short_month_end": 0,
            "short_next_start": 0, **WINDOWS, **counts}


@pytest.mark.parametrize(("counts", "said", "not_said"), [
    # curated tables only: the reason is the missing calendar, with its counts
    ({"calendarless_offers": 1185, "calendarless_sources": 60},
     ["no hourly offer of a dated source has daily prices yet",
      "1185 hourly offers of 60 curated tables are left out",
      "not days a price held, so they carry no calendar"], ["offer-months"]),
    # dated sources whose months lack windows: what each lacks
    ({"offer_months": 22, "short_baseline": 20, "short_month_end": 21, "short_next_start": 22},
     ["of 22 offer-months of dated sources, 0 are complete, 20 lack the mid-month days, 21 the "
      "month's last days and 22 the next month's first days"], ["curated"]),
    # nothing at all
    ({}, ["no hourly offer of a dated source has daily prices yet"], ["curated", "offer-months"]),
])
def test_no_complete_month_names_its_reason(counts, said, not_said):
    text = no_complete_month_reason(evidence(**counts))
    for part in said:
        assert part in text
    for part in not_said:
        assert part not in text
    assert text.endswith("A complete month needs daily prices on local days 8–22 (at least 5 of "
                         "them), the last 5 days (at least 2) and days 1–7 of the next month "
                         "(at least 2).")


@pytest.mark.parametrize(("candidates", "side", "text"), [
    ({"spot": 0}, "spot", "No spot offers among the latest prices: nothing to compare."),
    ({"spot": 4}, "spot", "None of the 4 spot offers among the latest prices has an on-demand "
                          "offer of the same configuration and day to compare with."),
    ({}, "slices", "No slice offers (a fraction of a GPU) among the latest prices: nothing to "
                   "compare."),
    ({"multi_gpu": 2}, "multi_gpu", "None of the 2 multi-GPU servers among the latest prices "
                                    "has a single card of the same line and day to compare "
                                    "with."),
])
def test_an_empty_comparison_says_what_it_lacked(candidates, side, text):
    assert nothing_to_compare(candidates, side) == text


def test_a_page_of_curated_tables_says_they_carry_no_calendar(tmp_path):
    """A month of a curated table's edits: the month-end table says the table has no calendar."""
    path = tmp_path / "prices.db"
    rows = [obs(2.0 + i / 10, LAST_DAY - timedelta(days=i), source="cloud-gpus:acme",
                vendor="Acme", crawl_id=f"cloud-gpus:acme-{i}") for i in range(40)]
    with duckdb.connect(str(path)) as con:
        ensure_schema(con)
        observations.set_test_clock(con)
        observations.insert(con, rows)
        con.executemany("insert into raw.crawls (crawl_id, source, mode, passed, status, offers, "
                        "normalized_at, calendar_signal) values (?, 'cloud-gpus:acme', "
                        "'archive', true, 'passed', 1, now(), false)",
                        [[r["crawl_id"]] for r in rows])
        observations.build(con, [])
    html = " ".join(build_page(path, tmp_path / "index.html").path.read_text(
        encoding="utf-8").split())
    assert "1 hourly offers of 1 curated tables are left out" in html
    assert "No offer has a complete month yet" not in html
