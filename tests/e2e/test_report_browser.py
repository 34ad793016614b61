"""The demo history and its report as a newcomer meets them: `gpuprices demo --months 1` into a
temporary directory, `gpuprices report --data-dir` on it, and the page opened in headless Chromium
(Debian's, through Playwright, with the crawler's flags) at a desktop and at a phone width.

The page must lead with the cheapest offers (their table above the first chart), draw each card's
history as lines of many days, say that the data is simulated, and render Chinese with real glyphs:
without a CJK font Chromium draws every Chinese character as the same empty box, so two different
characters, or a Chinese name and as many unassigned code points, would render alike. With
`FONTCONFIG_FILE` pointing at a configuration without fonts these tests fail (tried once)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.helpers.browser import chromium
from tests.helpers.runs import gpuprices

# The pixels of a text drawn in the page's own font stack (the body's computed font-family).
DRAW_TEXT = """text => {
    const canvas = document.createElement('canvas');
    canvas.width = 240; canvas.height = 40;
    const ctx = canvas.getContext('2d');
    ctx.font = '24px ' + getComputedStyle(document.body).fontFamily;
    ctx.fillStyle = '#000';
    ctx.fillText(text, 4, 30);
    return canvas.toDataURL();
}"""
UNASSIGNED = "\u0378\u0379\u0380\u0381\u0382"      # no font has these: always the missing box


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> dict:
    """A one-month demo and the report rebuilt from it by `report --data-dir`, with timings."""
    root = tmp_path_factory.mktemp("demo")
    demo_dir = root / "demo"
    started = time.perf_counter()
    made = gpuprices(root / "data", "demo", "--data-dir", str(demo_dir), "--months", "1")
    demo_seconds = time.perf_counter() - started
    assert made.returncode == 0, made.stdout[-3000:] + made.stderr[-3000:]
    (demo_dir / "report" / "index.html").unlink()        # the report command must write it
    report = gpuprices(root / "data", "report", "--data-dir", str(demo_dir))
    assert report.returncode == 0, report.stdout[-3000:] + report.stderr[-3000:]
    return {"dir": demo_dir, "made": made, "report": report, "seconds": demo_seconds,
            "page": demo_dir / "report" / "index.html"}


@pytest.fixture(scope="module")
def browser():
    with chromium() as browser:
        yield browser


def open_page(browser, path: Path, width: int):
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(path.as_uri(), wait_until="load")
    page.wait_for_function("""() => [...document.querySelectorAll('figure.chart')].every(
        f => f.querySelector('.plot-container .main-svg .scatterlayer .trace'))""")
    return page


@pytest.fixture(scope="module")
def desktop(browser, demo):
    page = open_page(browser, demo["page"], 1400)
    yield page
    page.close()


def test_demo_publishes_a_simulated_database_beside_nothing_real(demo):
    made = demo["made"].stdout
    assert "SIMULATED" in made and str(demo["dir"] / "prices.db") in made
    assert (demo["dir"] / "prices.db").exists()
    assert not (demo["dir"].parent / "data" / "prices.db").exists()   # the real one untouched
    assert "report: " in demo["report"].stdout
    print(f"demo --months 1: {demo['seconds']:.0f} s")


def test_demo_shows_alerts_waiting_in_the_outbox(demo):
    import duckdb

    assert "alerts (not sent, in alerts.outbox):" in demo["made"].stdout
    with duckdb.connect(str(demo["dir"] / "prices.db"), read_only=True) as con:
        pending = con.execute("select count(*) from alerts.outbox where status = 'pending'"
                              ).fetchone()[0]
    assert pending > 0          # detected over the simulated history, sent nowhere
    listed = gpuprices(demo["dir"].parent / "data", "--data-dir", str(demo["dir"]), "alerts")
    assert listed.returncode == 0 and "pending" in listed.stdout


def test_page_says_the_data_is_simulated(desktop):
    banner = desktop.locator("#simulated")
    assert banner.is_visible()
    text = banner.inner_text()
    assert "Simulated demo data" in text and "month-end dip" in text and "price drop" in text
    assert desktop.title().startswith("SIMULATED DEMO")


def test_cheapest_offers_come_before_every_chart_and_claims_last(desktop):
    table = desktop.locator("#cheapest table").first.bounding_box()
    first_chart = desktop.locator("figure.chart").first.bounding_box()
    assert table["y"] + table["height"] <= first_chart["y"]
    ids = desktop.evaluate("[...document.querySelectorAll('main > section')].map(s => s.id)")
    assert ids[:2] == ["cheapest", "card-history"] and ids[-1] == "claims"
    assert ids.index("signals") < ids.index("claims")


def test_card_history_draws_lines_of_many_days(desktop):
    traces = desktop.evaluate("""() => [...document.querySelectorAll(
        '#card-history figure.chart .scatterlayer .trace')].map(t => ({
            points: t.querySelectorAll('.point').length,
            line: !!t.querySelector('path.js-line')}))""")
    assert len(traces) >= 8                        # several cards, several vendors each
    assert all(t["points"] > 1 and t["line"] for t in traces), traces


def test_chinese_renders_with_real_glyphs(desktop):
    boxes = "Chinese renders as missing-glyph boxes: no CJK font (make setup installs one)"
    name = desktop.evaluate(DRAW_TEXT, "阿里云北京")
    assert hash(name) != hash(desktop.evaluate(DRAW_TEXT, UNASSIGNED)), boxes
    assert hash(desktop.evaluate(DRAW_TEXT, "阿")) != hash(desktop.evaluate(DRAW_TEXT, "里")), boxes
    # and the page does show Chinese vendor names, in its tables and in the chart legends
    legends = desktop.evaluate("""[...document.querySelectorAll('#card-history .legendtext')]
        .map(t => t.textContent).join(' ')""")
    assert any("\u4e00" <= ch <= "\u9fff" for ch in legends)


def test_a_phone_width_scrolls_nothing_sideways_but_tables(browser, demo):
    page = open_page(browser, demo["page"], 390)
    try:
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        widths = page.evaluate("""[...document.querySelectorAll('#card-history figure.chart')]
            .map(f => f.getBoundingClientRect().width)""")
        assert widths and all(w <= 390 for w in widths)
    finally:
        page.close()
