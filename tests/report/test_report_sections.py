"""The report's parts on small databases: the claims scorecard, an empty database, missing
marts, chart modes, the text and link helpers, the asset and the saved-workloads section."""

from __future__ import annotations

import os
import re
from datetime import date, timedelta
from decimal import Decimal

import dagster as dg
import duckdb
import pytest
from dagster_duckdb import DuckDBResource
from markupsafe import escape  # the escaping of the page's templates (Jinja2 autoescape)

from pipelines.display import clean_text
from pipelines.report import CHARTS, ReportError, build_report, claims_section, figure, link
from pipelines.report.charts import MARKER_SIZE, date_axis
from pipelines.verdicts import CSS_CLASSES, DOES_NOT_HOLD, HOLDS, NOT_ENOUGH_EVIDENCE, VERDICTS
from pipelines.warehouse.db import ensure_schema
from tests.helpers.observations import NANJING, build, obs
from tests.helpers.report_market import LAST_DAY, build_database, build_page, market

# -- the claims scorecard ----------------------------------------------------------------------

def test_claims_scorecard_colours_each_verdict():
    """Five Beijing A100s inside 50-80 (holds), five Jiangsu A100s at 10 (does not hold), five
    Jiangsu H800s from 35 to 58 against 40-60 (interval across the edge: not enough evidence, with
    the offers it would need); the rest have no offer in scope."""
    def five(prices, **where):
        return [obs(p, vendor=f"Vendor {i}", source=f"idc_{i}", **where)
                for i, p in enumerate(prices)]
    con = duckdb.connect()
    ensure_schema(con)
    build(con, [*five([55, 60, 62, 65, 70]), *five([10] * 5, **NANJING),
                *five([35, 45, 50, 55, 58], gpu_model="H800-80GB", **NANJING)])
    html = claims_section(con)
    verdicts = set(re.findall(
        r'<span class="verdict (verdict-\w+)"(?: title="([^"]+)")?>([^<]+)</span>', html))
    assert verdicts == {("verdict-holds", "", HOLDS), ("verdict-fails", "", DOES_NOT_HOLD),
                        ("verdict-nodata", "interval overlaps the range", NOT_ENOUGH_EVIDENCE),
                        ("verdict-nodata", "no offer in scope", NOT_ENOUGH_EVIDENCE)}
    assert {css for css, _, verdict in verdicts} <= {CSS_CLASSES[v] for v in VERDICTS}
    # the tally, and the H800s: median 50, interval 35-58 against 40-60: 5 x (15/10)^2 = 11.25
    assert "1 holds, 1 does not hold, 17 not enough evidence" in html
    assert "about 12 distinct offers (now 5) would narrow it clear of the edge" in html
    assert re.search(r'<td class="num">~12<br><span class="muted">interval overlaps the range',
                     html)
    assert "55 – 70" in html and "docs/market-claims.md" in html
    assert "only 1 distinct offer" not in html and "no offer in scope" in html
    for gone in ("inconclusive", "not enough data", "illustrative only"):
        assert gone not in html


# -- no data, missing tables, long histories ---------------------------------------------------

def test_empty_database_gives_a_page_without_charts(tmp_path):
    db = build_database(tmp_path / "prices.db", [])
    result = build_page(db, tmp_path / "index.html")
    html = result.path.read_text(encoding="utf-8")
    assert result.charts == 0
    assert "no observations yet" in html
    assert "No offers yet: the database holds no counted price" in html
    assert "Plotly.newPlot" not in html


def test_missing_marts_are_named(tmp_path):
    with duckdb.connect(str(tmp_path / "prices.db")) as con:
        ensure_schema(con)
        with pytest.raises(ReportError, match=r"marts\.cheapest_offers.*build the SQL models"):
            build_report(con, tmp_path / "index.html")
    assert not (tmp_path / "index.html").exists()


def test_long_histories_are_drawn_as_lines_short_ones_with_markers():
    spec = CHARTS[0]

    def points(days: int) -> list[dict]:
        return [{"series": "whole card", "day": LAST_DAY.date() - timedelta(days=d),
                 "price": 50.0, "offers": 1, "vendors": 1} for d in range(days)]

    assert set(figure("A100", spec, points(1))["data"][0]["marker"]["size"]) == {MARKER_SIZE}
    assert set(figure("A100", spec, points(120))["data"][0]["marker"]["size"]) == {0}
    assert "range" not in figure("A100", spec, points(120))["layout"]["xaxis"]  # plotly's ticks
    assert figure("A100", spec, points(1))["layout"]["xaxis"]["range"] == ["2026-11-29",
                                                                           "2026-12-01"]


@pytest.mark.parametrize(("first", "last", "tickformat"), [
    (date(2022, 10, 19), date(2025, 9, 17), "%b %Y"),       # three years: months with years
    (date(2025, 12, 20), date(2026, 1, 10), "%b %-d, %Y"),  # three weeks across new year
    (date(2026, 7, 8), date(2026, 8, 22), "%b %-d, %Y"),    # within a year: still says it
], ids=["three-years", "new-year", "one-summer"])
def test_date_ticks_always_say_the_year(first, last, tickformat):
    assert date_axis([first, last])["tickformat"] == tickformat


def test_a_market_line_breaks_at_gaps_and_marks_where_its_vendors_changed():
    spec = CHARTS[0]
    day = LAST_DAY.date()
    rows = [(0, True, None), (1, False, None), (2, True, "joined: c"), (9, True, None)]
    points = [{"series": "whole card", "calendar": "gpu-rental-prices",
               "day": day + timedelta(days=d), "price": 10.0, "offers": 2, "vendors": 2,
               "starts_segment": starts, "vendor_set_change": change}
              for d, starts, change in rows]
    [trace] = figure("A100", spec, points)["data"]
    assert trace["name"] == "whole card · gpu-rental-prices archive"
    assert trace["y"] == [10.0, 10.0, None, 10.0, None, 10.0]
    assert trace["marker"]["symbol"] == ["circle", "circle", "circle", "diamond", "circle",
                                         "circle"]
    assert "other vendors from here (joined: c)" in trace["customdata"][3][2]


# -- text helpers ------------------------------------------------------------------------------

@pytest.mark.parametrize("value, shown", [
    ("阿里云 Alibaba", "阿里云 Alibaba"),
    ("a\x00b\x7fc", r"a\x00b\x7fc"),
    ("tab\tand\nnewline", "tab\tand\nnewline"),            # whitespace HTML collapses anyway
    ("zero\u200bwidth", r"zero\u200bwidth"),
    (None, ""),
    (Decimal("1.50"), "1.50"),
])
def test_clean_text(value, shown):
    assert clean_text(value) == shown


def test_clean_text_cuts_long_values_and_says_how_much():
    assert clean_text("x" * 1000, limit=10) == "xxxxxxxxxx… (+990 characters)"


@pytest.mark.parametrize("url, is_link", [
    ("https://www.aliyun.com/price/product#/ecs/gpu", True),
    ("http://idc.example/prices?a=1&b=2", True),
    ("javascript:alert(1)", False),
    ("JAVASCRIPT:alert(1)", False),
    ("data:text/html,<script>alert(1)</script>", False),
    ("https://[broken", False),
    ("https://evil.example/\u202e", False),
    ("", False),
])
def test_links_only_for_http_urls(url, is_link):
    html = link(url)
    assert html.startswith("<a href=") is is_link
    assert "<script" not in html


def test_link_escapes_the_url_in_the_attribute():
    html = link('https://x.example/"><script>alert(1)</script>')
    assert html.startswith('<a href="https://x.example/&#34;&gt;&lt;script&gt;')
    assert 'rel="noopener noreferrer nofollow"' in html


# -- the asset ---------------------------------------------------------------------------------

def test_asset_writes_data_report_index_html(tmp_path, data_dir):
    from pipelines.defs.report import price_report

    db = build_database(tmp_path / "work.db", market(LAST_DAY))
    result = dg.materialize([price_report], resources={"duckdb": DuckDBResource(database=str(db))})
    assert result.success
    page = data_dir / "report" / "index.html"
    [event] = result.get_asset_materialization_events()
    metadata = event.materialization.metadata
    assert metadata["bytes"].value == page.stat().st_size
    assert metadata["charts"].value == 3 + 9       # per card, then per family
    assert os.listdir(page.parent) == ["index.html"]
    assert "Market claims scorecard" in page.read_text(encoding="utf-8")


def test_asset_depends_on_every_table_it_reads():
    from pipelines.definitions import defs
    from pipelines.defs.report import price_report

    deps = set(price_report.asset_deps[price_report.key])
    built = {key for asset in defs.assets for key in asset.keys}
    assert dg.AssetKey(["marts", "market_claims"]) in deps
    assert dg.AssetKey(["intermediate", "int_offer_daily"]) in deps
    assert deps - built == set()        # every dependency is an asset of the code location


# -- saved workloads (advisor.workload_advice) -------------------------------------------------

def test_saved_workloads_section_shows_each_best_option_escaped(tmp_path):
    from pipelines.advisor import Workload
    from pipelines.defs.advisor import write_advice

    db = build_database(tmp_path / "prices.db", market(LAST_DAY))
    name = "<b>lora</b> & \"13B\""
    with duckdb.connect(str(db)) as con:
        workload = Workload.from_mapping({"name": name, "params": "13B", "task": "lora",
                                          "hours_per_day": 4, "days": 14})
        write_advice(con, [workload], LAST_DAY)
        best = con.execute("select configuration, total_cost_cny from advisor.workload_advice "
                           "where rank = 1").fetchone()
    html = build_page(db, tmp_path / "index.html").path.read_text(encoding="utf-8")
    section = html[html.index('<section id="workloads">'):]
    section = section[:section.index("</section>")]
    assert "<h2>Saved workloads</h2>" in section and "<table>" in section
    assert name not in html and escape(name) in section
    assert escape(best[0]) in section and f"{best[1]:,.2f}" in section
    assert ">best<" in section


def test_saved_workloads_section_without_the_advisor_says_nothing_yet(tmp_path):
    db = build_database(tmp_path / "prices.db", market(LAST_DAY))
    html = build_page(db, tmp_path / "index.html").path.read_text(encoding="utf-8")
    assert "<h2>Saved workloads</h2>" in html
    assert "Nothing yet: the advisor" in html
