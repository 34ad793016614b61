"""The HTML report (pipelines/report/, asset report/price_report).

A small database is built the way the pipeline builds it (schema, observations over a few days,
every SQL model of dbt_like_sql/), with hostile scraped values in it; the report is built from a
read-only connection, then opened in headless Chromium (Debian's, through Playwright) from a
file:// URL with every other request refused: it must load without errors, render every chart,
show the hostile values as text and run none of them. A screenshot is kept in
tests/report/artifacts/report.png. An e2e test does the same with the database of a real
replayed `gpuprices run`.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from dagster_duckdb import DuckDBResource
from markupsafe import escape  # the escaping of the page's templates (Jinja2 autoescape)
from playwright.sync_api import Browser, sync_playwright
from plotly.offline import get_plotlyjs

from pipelines.display import MAX_TEXT_CHARS, clean_text
from pipelines.report import CHARTS, ReportError, build_report, claims_section, figure, link
from pipelines.warehouse.db import ensure_schema
from pipelines.warehouse.sql_models import load_models, run_model
from spiders.layout import REPO_ROOT, SQL_DIR
from spiders.settings import CHROMIUM_ARGS

ARTIFACTS = Path(__file__).parent / "artifacts"
CHROMIUM = os.environ.get("GPUPRICES_CHROMIUM", "/usr/bin/chromium")
HOURS = {"hour": 1, "day": 24, "week": 168, "month": 730}
LAST_DAY = datetime(2026, 11, 30, 9, tzinfo=UTC)

# Scraped text an attacker (or a broken page) could put in a vendor's listing.
HOSTILE = {
    "script": "<script>alert(1)</script>",
    "img": '"><img src=x onerror=alert(1)>',
    "sql": "'; drop table observations; --",
    "controls": "RTX\x07\x1b[31m4090\x08 bell\u202eevil",
    "huge": "A" * 1_000_000,
}
HOSTILE_URL = "javascript:alert(1)"

BEIJING = {"region_code": "北京", "country": "CN", "province_or_state": "Beijing",
           "city": "Beijing", "is_tier1_city": True}
ULANQAB = {"region_code": "乌兰察布", "country": "CN", "province_or_state": "Inner Mongolia",
           "city": "Ulanqab", "is_tier1_city": False}
GUIAN = {"region_code": "贵安", "country": "CN", "province_or_state": "Guizhou",
         "city": "Gui'an", "is_tier1_city": False}
VIRGINIA = {"region_code": "us-east-1", "country": "US", "province_or_state": "Virginia",
            "city": None, "is_tier1_city": False}
FRANKFURT = {"region_code": "eu-central-1", "country": "DE", "province_or_state": "Hesse",
             "city": "Frankfurt", "is_tier1_city": False}


def obs(price: float | str, day: datetime = LAST_DAY, **overrides) -> dict:
    """One observation: `price` is the listed CNY amount per billing_period for the instance."""
    row = {"observed_at": day, "source": "idc_test", "vendor": "Test IDC", "vendor_kind": "idc",
           **BEIJING, "gpu_model": "A100-80GB", "gpu_variant": "SXM", "gpu_count": 1,
           "gpu_fraction": 1, "offer_kind": "on_demand", "billing_period": "hour",
           "currency": "CNY", "available": True, "crawl_id": "crawl-1",
           "url": "https://idc.example/prices"}
    row.update(overrides)
    row["gpu_fraction"] = Decimal(str(row["gpu_fraction"]))
    row.setdefault("vram_gb", Decimal("80") * row["gpu_fraction"])
    row.setdefault("sku", f"{row['gpu_model']} {row['gpu_count']}x{row['gpu_fraction']:g} "
                          f"{row['offer_kind']} {row['billing_period']}")
    row["price_amount"] = Decimal(str(price))
    per_gpu_hour = (row["price_amount"] / HOURS[row["billing_period"]]
                    / (row["gpu_count"] * row["gpu_fraction"]))
    row["price_per_gpu_hour_cny"] = round(per_gpu_hour, 6)
    row["price_per_gpu_hour_usd"] = round(per_gpu_hour / 7, 6)
    row["fx_rate_date"] = day.date()
    row["observed_hour"] = day.replace(minute=0, second=0, microsecond=0)
    key = "|".join(str(row[k]) for k in ("source", "vendor", "region_code", "sku", "gpu_model",
                                           "gpu_count", "gpu_fraction", "offer_kind",
                                           "billing_period"))
    row["offer_id"] = hashlib.sha256(key.encode()).hexdigest()[:16]
    row["raw_ref"] = f"raw/{row['offer_id']}"
    return row


def market(day: datetime, drift: float = 0.0) -> list[dict]:
    """One day of a small market: whole cards, slices, spot, servers and monthly packages in
    Beijing, Inner Mongolia, Guizhou and the US. H800 is listed monthly only (no hourly chart)."""
    cloud = {"source": "cloud_test", "vendor": "Test Cloud", "vendor_kind": "hyperscaler",
             **VIRGINIA, "url": "https://cloud.example/pricing"}
    return [
        obs(60 - drift, day),                                          # A100 Beijing: holds 50-80
        obs(20, day, gpu_fraction=0.25, sku="A100 MIG 2g.20gb"),       # a quarter slice
        obs(45, day, **ULANQAB, vendor="Steppe IDC", source="idc_steppe"),
        obs(44 + drift, day, **GUIAN, vendor="Karst IDC", source="idc_karst"),
        obs(400, day, gpu_count=8, sku="A100 8-GPU server"),
        obs(9000, day, billing_period="month"),
        obs(18, day, **cloud),
        obs(4.5, day, **cloud, offer_kind="spot"),                     # 25 %: not ~20 %
        obs(90, day, gpu_model="H100-80GB"),
        obs(30, day, gpu_model="H100-80GB", **cloud),
        obs(9, day, gpu_model="H100-80GB", **cloud, offer_kind="spot"),
        obs(30000, day, gpu_model="H800-80GB", billing_period="month", **GUIAN,
            vendor="Karst IDC", source="idc_karst"),
        obs(2.2, day, gpu_model="RTX4090-24GB", vram_gb=Decimal(24)),
        obs(16, day, gpu_model="RTX4090-24GB", vram_gb=Decimal(24), gpu_count=8,
            sku="4090 x8"),
        obs(1.1, day, gpu_model="RTX4090-24GB", vram_gb=Decimal(24), **cloud,
            offer_kind="spot"),
        obs(1.6, day, gpu_model="RTX4090-24GB", vram_gb=Decimal(24), **cloud),
    ]


def hostile_offers(day: datetime) -> list[dict]:
    """Each hostile value on the cheapest A100-80GB offer of its kind and billing period
    anywhere, so the page's first cheapest-offers table (and the screenshot) shows it."""
    de = {**FRANKFURT, "source": "market_test", "vendor": "Market", "vendor_kind": "marketplace"}
    return [
        obs(15, day, **{**de, "vendor": HOSTILE["script"]}, url=HOSTILE_URL),
        obs(480, day, **de, billing_period="day", sku=HOSTILE["img"]),
        obs(3000, day, **{**de, "region_code": HOSTILE["sql"]}, billing_period="week"),
        obs(8000, day, **de, billing_period="month", sku=HOSTILE["controls"]),
        obs(4, day, **de, offer_kind="spot", sku=HOSTILE["huge"]),
    ]


def build_database(path: Path, rows: list[dict]) -> Path:
    """The pipeline's tables and every SQL model over `rows`, in a DuckDB file."""
    with duckdb.connect(str(path)) as con:
        ensure_schema(con)
        if rows:
            columns = list(rows[0])
            con.executemany(f"insert into observations ({', '.join(columns)}) "
                            f"values ({', '.join('?' for _ in columns)})",
                            [[row[c] for c in columns] for row in rows])
        for model in load_models(SQL_DIR, {"observations", "quarantine"}):
            run_model(con, model)
    return path


def build_page(db: Path, out: Path):
    """The report from a read-only connection: building it must not need to write."""
    with duckdb.connect(str(db), read_only=True) as con:
        return build_report(con, out)


# -- the browser -------------------------------------------------------------------------------

@dataclass
class Visit:
    """A page opened in Chromium and everything it did."""
    page: object
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    remote_requests: list[str] = field(default_factory=list)
    screenshot: Path | None = None


@pytest.fixture(scope="module")
def browser() -> Browser:
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                      args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def visit(browser: Browser, html_path: Path) -> Visit:
    """Open the page from file:// with any other request refused (it must work offline) and
    wait until every chart has drawn its plot."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    seen = Visit(page)
    page.on("console", lambda m: seen.console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: seen.page_errors.append(str(e)))
    page.on("dialog", lambda d: (seen.dialogs.append(d.message), d.dismiss()))

    def refuse_remote(route):
        url = route.request.url
        if url.startswith(("file://", "data:", "blob:")):
            route.continue_()
        else:
            seen.remote_requests.append(url)
            route.abort()

    page.route("**/*", refuse_remote)
    page.on("request", lambda r: None if r.url.startswith(("file://", "data:", "blob:"))
            else seen.remote_requests.append(r.url))
    page.goto(html_path.as_uri(), wait_until="load")
    page.wait_for_function("""() => [...document.querySelectorAll('figure.chart')].every(
        f => f.querySelector('.plot-container .main-svg .scatterlayer .trace'))""")
    return seen


def save_artifact(page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / ".gitignore").write_text("*\n")   # screenshots are test output, never committed
    path = ARTIFACTS / name
    page.screenshot(path=str(path), full_page=True)
    return path


def chart_stats(page) -> list[dict]:
    """Per chart container: whether plotly drew its plot, its points and its x tick labels."""
    return page.evaluate("""() => [...document.querySelectorAll('figure.chart')].map(f => ({
        id: f.querySelector('.plotly-graph-div') && f.querySelector('.plotly-graph-div').id,
        svg: f.querySelectorAll('.plot-container .main-svg').length,
        traces: f.querySelectorAll('.scatterlayer .trace').length,
        points: f.querySelectorAll('.scatterlayer .point').length,
        xticks: [...f.querySelectorAll('.xtick text')].map(t => t.textContent),
    }))""")


# -- a few days of a small market with hostile values -----------------------------------------

@pytest.fixture(scope="module")
def report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("report")
    rows = [r for d in range(3) for r in market(LAST_DAY - timedelta(days=2 - d), drift=d)]
    db = build_database(tmp / "prices.db", rows + hostile_offers(LAST_DAY))
    result = build_page(db, tmp / "report" / "index.html")
    return result, result.path.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def rendered(report, browser):
    result, _ = report
    seen = visit(browser, result.path)
    seen.screenshot = save_artifact(seen.page, "report.png")
    yield seen
    seen.page.close()


def test_result_describes_the_written_page(report):
    result, html = report
    assert result.path.name == "index.html"
    assert result.bytes == result.path.stat().st_size == len(html.encode("utf-8"))
    assert result.charts == 9           # 4 families x 3 charts; H800 has no hourly offers
    assert result.tables == html.count("<table>") >= 9
    assert not [p for p in result.path.parent.iterdir() if p.name != "index.html"]  # no temp file


def test_plotly_js_is_inlined_once_and_nothing_is_loaded_from_elsewhere(report):
    _, html = report
    plotly_js = get_plotlyjs()
    assert html.count(plotly_js[:200]) == 1 and plotly_js in html
    ours = html.replace(plotly_js, "")     # plotly.js itself names a topojson CDN, used by maps
    assert not re.search(r"<script[^>]*\bsrc=", ours)
    assert not re.search(r"<link[^>]*\bhref=", ours)
    assert "cdn.plot.ly" not in ours


def test_header_states_time_range_sources_counts_and_generation_time(report):
    _, html = report
    assert "2026-11-28 09:00 UTC → 2026-11-30 09:00 UTC (3 days)" in html
    assert "<dt>sources</dt><dd>5</dd>" in html
    assert "<dt>observations</dt><dd>53</dd>" in html       # 3 days x 16 + 5 hostile offers
    assert re.search(r"<dt>generated</dt><dd>\d{4}-\d\d-\d\d \d\d:\d\d UTC</dd>", html)


def test_families_without_hourly_offers_say_so_instead_of_an_empty_chart(report):
    _, html = report
    assert html.count('data-family="H800"') == 0
    assert "H800: no hourly on-demand offers" in html


def test_scraped_values_are_escaped_in_the_file(report):
    _, html = report
    for raw in ("<script>alert(1)</script>", "<img", "onerror=alert(1)>", "\x07", "\x1b",
                "\u202e", "A" * (MAX_TEXT_CHARS + 1)):
        assert raw not in html, raw
    assert escape(HOSTILE["script"]) in html
    assert escape(HOSTILE["img"]) in html
    assert escape(HOSTILE["sql"]) in html
    assert 'href="javascript' not in html


def test_claims_scorecard_colours_each_verdict():
    """Five Beijing A100s inside 50-80 (holds), five Jiangsu A100s at 10 (does not hold), five
    Jiangsu H800s from 35 to 58 against 40-60 (inconclusive); the rest lack data."""
    from tests.sql.test_marts import NANJING, build, obs

    def five(prices, **where):
        return [obs(p, vendor=f"Vendor {i}", source=f"idc_{i}", **where)
                for i, p in enumerate(prices)]
    con = duckdb.connect()
    ensure_schema(con)
    build(con, [*five([55, 60, 62, 65, 70]), *five([10] * 5, **NANJING),
                *five([35, 45, 50, 55, 58], gpu_model="H800-80GB", **NANJING)])
    html = claims_section(con)
    verdicts = set(re.findall(r'<span class="verdict (verdict-\w+)">([^<]+)</span>', html))
    assert verdicts == {("verdict-holds", "holds"), ("verdict-fails", "does not hold"),
                        ("verdict-inconclusive", "inconclusive"),
                        ("verdict-nodata", "not enough data")}
    assert "55 – 70" in html and "docs/market-claims.md" in html
    assert "only 1 distinct offer" not in html and "no offer in scope" in html


def test_claims_scorecard_in_the_page(report):
    _, html = report
    assert html.count('<span class="verdict ') == 19            # every claim, with its verdict


def test_page_loads_without_console_or_page_errors(rendered):
    assert rendered.page_errors == []
    assert rendered.console_errors == []
    assert rendered.page.title().startswith("GPU rental prices")


def test_page_works_offline(rendered):
    assert rendered.remote_requests == []


def test_every_chart_container_rendered_a_plot(rendered, report):
    result, _ = report
    charts = chart_stats(rendered.page)
    assert len(charts) == result.charts == 9
    assert [c["id"] for c in charts if c["svg"] == 0 or c["points"] == 0] == []
    assert "chart-a100-whole-vs-slice" in {c["id"] for c in charts}


def test_hostile_values_show_as_text_and_run_nothing(rendered):
    page = rendered.page
    overall = page.inner_text("#cheapest table")         # the table shown unfolded
    for value in (HOSTILE["script"], HOSTILE["img"], HOSTILE["sql"]):
        assert value in overall
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    body = page.inner_text("body")      # rendered text only, the folded tables opened
    # cheapest anywhere and per region; the vendor also in the list of sources
    assert [body.count(HOSTILE[k]) for k in ("script", "img", "sql")] == [3, 2, 2]
    assert clean_text(HOSTILE["controls"]) in body       # control characters shown as \x07
    assert r"RTX\x07\x1b[31m4090\x08 bell\u202eevil" in body
    assert "A" * MAX_TEXT_CHARS + f"… (+{1_000_000 - MAX_TEXT_CHARS:,} characters)" in body
    assert page.locator("img").count() == 0
    assert page.locator("a[href^='javascript']").count() == 0
    assert page.evaluate("[...document.scripts].every(s => !s.textContent.includes('alert(1)'))")
    assert rendered.dialogs == []


def test_screenshot_is_saved(rendered):
    png = rendered.screenshot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


# -- one day of data, no data, missing tables --------------------------------------------------

def test_one_day_of_data_shows_points_with_day_ticks(tmp_path, browser):
    db = build_database(tmp_path / "prices.db", market(LAST_DAY))
    result = build_page(db, tmp_path / "index.html")
    seen = visit(browser, result.path)
    try:
        charts = chart_stats(seen.page)
        assert len(charts) == result.charts == 9
        assert all(c["points"] >= 1 for c in charts)
        # ticks are days ("Nov 30"), not the milliseconds plotly zooms a single day into
        ticks = {t for c in charts for t in c["xticks"]}
        assert "Nov 30" in ticks
        assert [t for t in ticks if not re.fullmatch(r"[A-Z][a-z]{2} \d{1,2}", t)] == []
        assert seen.page_errors == [] and seen.console_errors == []
    finally:
        seen.page.close()


def test_empty_database_gives_a_page_without_charts(tmp_path):
    db = build_database(tmp_path / "prices.db", [])
    result = build_page(db, tmp_path / "index.html")
    html = result.path.read_text(encoding="utf-8")
    assert result.charts == 0
    assert "no observations yet" in html
    assert "No offers yet." in html
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

    assert figure("A100", spec, points(1)).data[0].mode == "lines+markers"
    assert figure("A100", spec, points(120)).data[0].mode == "lines"
    assert figure("A100", spec, points(120)).layout.xaxis.range is None    # plotly's own ticks
    assert figure("A100", spec, points(1)).layout.xaxis.range == ("2026-11-29", "2026-12-01")


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
    assert metadata["charts"].value == 9
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


# -- the real replayed data --------------------------------------------------------------------

@pytest.mark.e2e
def test_report_on_a_real_replayed_run(tmp_path, browser):
    """`gpuprices run` over the bundled snapshots, then the report built from the published
    data/prices.db (whether or not the report asset is registered) and opened in Chromium."""
    data = tmp_path / "data"
    env = {**os.environ, "GPUPRICES_DATA_DIR": str(data), "DAGSTER_HOME": str(tmp_path / "home")}
    proc = subprocess.run([str(Path(sys.executable).parent / "gpuprices"), "run"], cwd=REPO_ROOT,
                          env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    result = build_page(data / "prices.db", tmp_path / "report" / "index.html")
    assert result.charts == 12          # every family has hourly whole, slice or spot offers
    seen = visit(browser, result.path)
    try:
        charts = chart_stats(seen.page)
        assert len(charts) == 12 and all(c["svg"] and c["points"] for c in charts)
        assert seen.page_errors == [] and seen.console_errors == []
        assert seen.dialogs == [] and seen.remote_requests == []
        claims = seen.page.locator("#claims tbody tr")
        assert claims.count() == 19
        assert seen.page.locator("#cheapest tbody tr").count() > 20
        save_artifact(seen.page, "report_replay.png")
    finally:
        seen.page.close()


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
