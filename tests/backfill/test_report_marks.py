"""The report's per-card history draws a vendor's record read from a public price archive as a
line of its own (dashed, named after the archive), never joined to its crawled days; the market
lines' section says the page holds backfilled history."""

from __future__ import annotations

from datetime import date

import duckdb

from pipelines.report.card_history import card_figure, card_history
from pipelines.report.queries import named_query
from spiders.layout import work_db_path


def _points(source: str, calendar: str, days: list[int], price: float) -> list[dict]:
    return [{"day": date(2025, 1, d), "price": price, "offers": 1, "source": source,
             "calendar": calendar, "backfilled": calendar != "crawl",
             "starts_segment": i == 0 or d - days[i - 1] > 1} for i, d in enumerate(days)]


def test_a_vendor_from_an_archive_and_a_crawl_is_two_lines_the_archives_dashed_and_named():
    aws = "Amazon Web Services"
    fig = card_figure("A100-80GB", {
        (aws, "cloud-gpus:aws"): _points("cloud-gpus:aws", "cloud-gpus", [1, 2, 3], 34.8),
        (aws, "aws"): _points("aws", "crawl", [2, 3, 7], 20.1)})
    data = fig["data"]
    traces = [(t["name"], t["line"]["dash"], t["line"]["color"]) for t in data]
    assert [name for name, *_ in traces] == [f"{aws} · cloud-gpus archive", aws]
    assert [dash for _, dash, _ in traces] == ["dot", "solid"]
    assert traces[0][2] == traces[1][2]                     # one vendor, one colour
    assert data[0]["y"] == [34.8, 34.8, 34.8]               # never the crawl's 20.1
    assert "backfilled from a public price archive" in data[0]["hovertemplate"]
    assert "archive" not in data[1]["hovertemplate"]
    # the crawl's line breaks across the 4-day gap; its lone last point keeps a marker
    assert data[1]["y"] == [20.1, 20.1, None, 20.1]
    assert data[1]["connectgaps"] is False


def test_the_backfilled_history_is_marked_and_the_crawled_days_are_not(backfilled):
    root, _ = backfilled
    con = duckdb.connect(str(work_db_path(root)), read_only=True)
    try:
        charts = card_history(con)
        lines = [(r["vendor"], r["day"], r["backfilled"])
                 for r in named_query(con, "card_history_lines", [8, 6])
                 if r["gpu_model"] == "A100-40GB" and r["vendor"] == "Amazon Web Services"]
    finally:
        con.close()
    assert charts["backfilled"]
    crawled = {str(day) for _, day, archived in lines if not archived}
    assert crawled == {"2025-02-10", "2025-04-10"}       # the two live crawls' days
    assert sum(archived for *_, archived in lines) > 60  # the catalog's other days
