"""The report's per-card history draws a vendor's backfilled days (seen only through a public
price archive) as a dotted line of their own, named so, joined to its crawled days; the market
lines' section says the page holds backfilled history."""

from __future__ import annotations

from datetime import date

import duckdb
import pytest

from pipelines.report.card_history import BACKFILLED_SUFFIX, card_figure, card_history, runs
from pipelines.report.queries import named_query
from spiders.layout import work_db_path


def _points(flags: str) -> list[dict]:
    """'aac' -> three days: archive, archive, crawl."""
    return [{"day": date(2025, 1, n + 1), "price": 10.0 + n, "offers": 1,
             "backfilled": flag == "a"} for n, flag in enumerate(flags)]


@pytest.mark.parametrize(("flags", "expected"), [
    ("", []),
    ("ccc", [(False, [1, 2, 3])]),
    ("aaa", [(True, [1, 2, 3])]),
    ("aacc", [(True, [1, 2]), (False, [2, 3, 4])]),
    ("acac", [(True, [1]), (False, [1, 2]), (True, [2, 3]), (False, [3, 4])]),
])
def test_a_line_is_cut_where_it_switches_between_archive_and_crawl(flags, expected):
    got = [(archived, [p["day"].day for p in run]) for archived, run in runs(_points(flags))]
    assert got == expected


def test_backfilled_days_are_dotted_and_named_in_the_legend_once():
    fig = card_figure("A100-80GB", {"Amazon Web Services": _points("aacaa")})
    traces = [(t.name, t.line.dash, t.showlegend) for t in fig.data]
    name = "Amazon Web Services"
    assert traces == [(name + BACKFILLED_SUFFIX, "dot", True), (name, "solid", True),
                      (name + BACKFILLED_SUFFIX, "dot", False)]
    assert "backfilled from a public price archive" in fig.data[0].hovertemplate
    assert "archive" not in fig.data[1].hovertemplate


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
