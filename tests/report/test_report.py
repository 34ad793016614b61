"""The HTML report (pipelines/report/, asset report/price_report) in a browser.

A small database is built the way the pipeline builds it (schema, observations over a few days,
every SQL model of dbt_like_sql/), with hostile scraped values in it; the report is built from a
read-only connection, then opened in headless Chromium (Debian's, through Playwright) from a
file:// URL with every other request refused: it must load without errors, render every chart,
show the hostile values as text and run none of them. A screenshot is kept in
tests/report/artifacts/report.png. An e2e test does the same with the database of a real
replayed `gpuprices run`. The page's parts on their own: test_report_sections.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import pytest
from markupsafe import escape  # the escaping of the page's templates (Jinja2 autoescape)
from playwright.sync_api import Browser
from plotly.offline import get_plotlyjs

from pipelines.display import MAX_TEXT_CHARS, clean_text
from tests.helpers.browser import chromium
from tests.helpers.report_market import (
    HOSTILE,
    LAST_DAY,
    build_database,
    build_page,
    hostile_offers,
    market,
)

ARTIFACTS = Path(__file__).parent / "artifacts"


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
    with chromium() as browser:
        yield browser


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


# -- a few days of a small market with hostile values ------------------------------------------

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
    # 3 cards with hourly on-demand whole cards (A100-80GB, H100-80GB, RTX4090-24GB), then
    # 4 families x 3 charts; H800 has no hourly offers
    assert result.charts == 3 + 9
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
    assert "2026-11-28 to 2026-11-30: data on each of its 3 days" in html
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
    assert len(charts) == result.charts == 3 + 9
    assert [c["id"] for c in charts if c["svg"] == 0 or c["points"] == 0] == []
    assert {"card-history-1", "chart-a100-whole-vs-slice"} <= {c["id"] for c in charts}


def test_hostile_values_show_as_text_and_run_nothing(rendered):
    page = rendered.page
    overall = page.inner_text("#cheapest table")         # the table shown unfolded
    for value in (HOSTILE["script"], HOSTILE["sql"]):
        assert value in overall
    # the sku (the hostile img here) is on hover over the vendor: an attribute's text
    titles = page.eval_on_selector_all("#cheapest table [title]", "els => els.map(e => e.title)")
    assert f"sku {HOSTILE['img']}" in titles
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    body = page.inner_text("body")      # rendered text only, the folded tables opened
    # cheapest anywhere and per region; the vendor also in the list of sources and, as the
    # cheapest A100-80GB vendor, in that card's chart legend (plotly text, still no markup)
    assert [body.count(HOSTILE[k]) for k in ("script", "img", "sql")] == [4, 0, 2]
    legend = page.text_content("#card-history-1 .legend")      # SVG: text_content
    assert HOSTILE["script"] in legend
    # the skus, on hover: control characters shown as \x07, a huge one cut
    assert f"sku {clean_text(HOSTILE['controls'])}" in titles
    assert r"sku RTX\x07\x1b[31m4090\x08 bell\u202eevil" in titles
    assert (f"sku {'A' * MAX_TEXT_CHARS}… (+{1_000_000 - MAX_TEXT_CHARS:,} characters)"
            in titles)
    assert page.locator("img").count() == 0
    assert page.locator("a[href^='javascript']").count() == 0
    # the hostile vendor is a trace name in chart data: JSON, entity-escaped, never markup
    assert page.evaluate("""[...document.scripts].every(s => !s.textContent.includes(
        '<script>alert(1)') && !s.textContent.includes('onerror=alert'))""")
    assert rendered.dialogs == []


def test_screenshot_is_saved(rendered):
    png = rendered.screenshot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


# -- one day of data ---------------------------------------------------------------------------

def test_one_day_of_data_shows_points_with_day_ticks(tmp_path, browser):
    db = build_database(tmp_path / "prices.db", market(LAST_DAY))
    result = build_page(db, tmp_path / "index.html")
    seen = visit(browser, result.path)
    try:
        charts = chart_stats(seen.page)
        assert len(charts) == result.charts == 3 + 9
        assert all(c["points"] >= 1 for c in charts)
        # ticks are days with their year ("Nov 30, 2026"), not the milliseconds plotly zooms a
        # single day into
        ticks = {t for c in charts for t in c["xticks"]}
        assert "Nov 30, 2026" in ticks
        assert [t for t in ticks if not re.fullmatch(r"[A-Z][a-z]{2} \d{1,2}, \d{4}", t)] == []
        assert seen.page_errors == [] and seen.console_errors == []
    finally:
        seen.page.close()


# -- the real replayed data --------------------------------------------------------------------

def test_report_on_a_real_replayed_run(tmp_path, browser, snapshot_run):
    """`gpuprices run` over the bundled snapshots (the session's run, tests/conftest.py: the
    installed console script), then the report built from the published data/prices.db (whether
    or not the report asset is registered) and opened in Chromium."""
    proc = snapshot_run
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    result = build_page(snapshot_run.data_dir / "prices.db", tmp_path / "report" / "index.html")
    seen = visit(browser, result.path)
    try:
        charts = chart_stats(seen.page)
        # every family has hourly whole, slice or spot offers; the cards come first (up to 8);
        # an index chart for each series with a level (the bundled snapshots now give one)
        assert seen.page.locator("figure[data-family]").count() == 12
        cards = seen.page.locator("figure.card-chart").count()
        indexes = seen.page.locator("figure.index-chart").count()
        assert 0 < cards <= 8
        assert len(charts) == result.charts == 12 + cards + indexes
        assert all(c["svg"] and c["points"] for c in charts)
        assert seen.page_errors == [] and seen.console_errors == []
        assert seen.dialogs == [] and seen.remote_requests == []
        claims = seen.page.locator("#claims tbody tr")
        assert claims.count() == 19
        assert seen.page.locator("#cheapest tbody tr").count() > 20
        save_artifact(seen.page, "report_replay.png")
    finally:
        seen.page.close()
