"""The history lines tell only what happened (issue 41 item 3): marts.card_history draws one line
per vendor AND record, never alternating between two archives that disagree; a line breaks
where its points are further apart than its source's cadence (intermediate.int_source_calendars:
a crawl's day, an archive's median spacing); marts.chart_points draws a median per calendar
only over one vendor set and says where the set changed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.helpers.observations import build_only, insert, obs, records, us

D0 = datetime(2025, 7, 1, 9, tzinfo=UTC)
HISTORY = ("marts.card_history", "marts.chart_points")


def seen(price: float, day: int, source: str, vendor: str = "Amazon Web Services",
         **overrides) -> dict:
    """`vendor`'s A100 read by `source` on day `day`: an archive's when the source is
    '<archive>:<cloud>'."""
    archive = ":" in source
    return obs(price, observed_at=D0 + timedelta(days=day), source=source, vendor=vendor,
               reaches_via="archive" if archive else "direct", **us("Virginia", "us-east-1"),
               **overrides)


def card_lines(con) -> dict[str, list[tuple]]:
    lines: dict[str, list[tuple]] = {}
    for r in records(con, "select * from marts.card_history order by source, day"):
        lines.setdefault(r["source"], []).append(
            ((r["day"] - D0.date()).days, r["price"], r["starts_segment"]))
    return lines


def test_a_vendor_read_from_two_archives_is_two_lines_never_one_alternating(con):
    # the two tables disagree (34.8 and 20.1) and neither moved: the old line zigzagged
    insert(con, [seen(34.8, d, "cloud-gpus:aws") for d in (0, 2, 4)]
           + [seen(20.1, d, "full-stack:aws") for d in (1, 3, 5)])
    build_only(con, *HISTORY)
    lines = card_lines(con)
    assert {source: [price for _, price, _ in points] for source, points in lines.items()} == {
        "cloud-gpus:aws": [34.8, 34.8, 34.8], "full-stack:aws": [20.1, 20.1, 20.1]}
    market = records(con, "select calendar, price from marts.chart_points "
                          "where chart = 'whole-vs-slice' order by calendar, day")
    assert {(r["calendar"], r["price"]) for r in market} == {("cloud-gpus", 34.8),
                                                             ("full-stack", 20.1)}


@pytest.mark.parametrize(("source", "days", "cadence", "starts"), [
    # a daily tracker missing a week: the line breaks at day 10
    ("gpu-rental-prices:aws", [0, 1, 2, 3, 10, 11], 1, [0, 10]),
    # a curated table edited about every 10 days: the 70-day silence breaks it, 9 and 11 (up to
        # 15) do not
    ("cloud-gpus:aws", [0, 10, 19, 30, 100, 110], 10, [0, 100]),
    # the live crawl is hourly: two days apart is a missed day
    ("aws", [0, 1, 3, 4], 1, [0, 3]),
], ids=["daily-tracker", "curated-edits", "live-crawl"])
def test_a_line_breaks_where_a_gap_is_longer_than_its_sources_cadence(
        con, source, days, cadence, starts):
    insert(con, [seen(10.0 + d / 100, d, source) for d in days])
    build_only(con, *HISTORY)
    [calendar] = records(con, "select * from intermediate.int_source_calendars")
    assert calendar["cadence_days"] == cadence
    [points] = card_lines(con).values()
    assert [day for day, _, starts_segment in points if starts_segment] == starts


def test_a_market_median_is_drawn_over_one_vendor_set_and_says_where_it_changed(con):
    insert(con, [seen(10.0, d, f"gpu-rental-prices:{v}", vendor=v)
                 for d in range(4) for v in ("a", "b")]
           # c joins on day 2 at a low price; b leaves on day 3
           + [seen(2.0, d, "gpu-rental-prices:c", vendor="c") for d in (2, 3)])
    con.execute("delete from observations where vendor = 'b' and observed_at >= ?",
                [D0 + timedelta(days=3)])
    build_only(con, *HISTORY)
    rows = records(con, "select day, vendors, vendor_set_changed, vendors_joined, vendors_left, "
                        "vendor_set_change, starts_segment, segment from marts.chart_points "
                        "where chart = 'whole-vs-slice' order by day")
    assert [(r["vendors"], r["vendor_set_change"], r["starts_segment"], r["segment"])
            for r in rows] == [(2, None, True, 1), (2, None, False, 1),
                               (3, "joined: c", True, 2), (2, "left: b", True, 3)]
    assert [(r["vendors_joined"], r["vendors_left"]) for r in rows][2:] == [(1, 0), (0, 1)]
