"""tests/workshop/truth/real_history.py counts what a history line draws against what happened:
a line alternating between records, a line across a gap its cadence does not allow, a changed
vendor count not marked, a multi-year axis without a year; the current marts score nothing."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from tests.helpers.observations import build_only, insert, obs, us
from tests.workshop.truth.real_history import axis_figures, line_figures, score

D0 = date(2025, 7, 1)


def point(day: int, records: list[str], starts: bool = False, vendors: int | None = None,
          marked: bool = False, line: str = "A100 AWS") -> dict:
    return {"line": [line], "day": D0 + timedelta(days=day), "records": records,
            "max_gap_days": 1, "starts_segment": starts, "vendors": vendors, "marked": marked}


def test_an_alternating_line_across_gaps_is_counted():
    # the old card line: cloud-gpus, full-stack, cloud-gpus, joined across a 5-day gap
    figures = line_figures([point(0, ["cloud-gpus:aws"]), point(1, ["full-stack:aws"]),
                            point(6, ["cloud-gpus:aws"])])
    assert (figures["interleavings"], figures["gap_crossings"]) == (2, 1)


def test_a_broken_line_of_one_record_counts_nothing():
    figures = line_figures([point(0, ["aws"]), point(1, ["aws"]), point(6, ["aws"], starts=True)])
    assert (figures["lines"], figures["joins_drawn"], figures["interleavings"],
            figures["gap_crossings"]) == (1, 1, 0, 0)


def test_a_changed_vendor_count_counts_unless_marked():
    assert line_figures([point(0, ["c"], vendors=2), point(1, ["c"], vendors=3)])[
        "unmarked_set_changes"] == 1
    assert line_figures([point(0, ["c"], vendors=2), point(1, ["c"], vendors=3, starts=True,
                                                             marked=True)])[
        "unmarked_set_changes"] == 0


def test_only_axes_crossing_a_year_are_judged():
    figures = axis_figures([("card A", date(2022, 10, 19), date(2025, 9, 17)),
                            ("card B", date(2026, 7, 8), date(2026, 8, 22))])
    assert (figures["charts_crossing_a_year"], figures["axes_without_year"]) == (1, 0)


def test_the_current_marts_score_nothing_on_two_archives_that_disagree(con):
    start = datetime(2025, 7, 1, 9, tzinfo=UTC)
    rows = [obs(p, observed_at=start + timedelta(days=d), source=s, reaches_via="archive",
                vendor="Amazon Web Services", **us("Virginia", "us-east-1"))
            for s, p, days in (("cloud-gpus:aws", 34.8, (0, 2, 40)),
                               ("full-stack:aws", 20.1, (1, 3, 400)))
            for d in days]
    insert(con, rows)
    build_only(con, "marts.card_history", "marts.chart_points")
    figures = score(con)
    assert figures["card_lines"]["lines"] == 2
    assert (figures["interleavings"], figures["gap_crossings"], figures["unmarked_set_changes"],
            figures["axes_without_year"]) == (0, 0, 0, 0)
