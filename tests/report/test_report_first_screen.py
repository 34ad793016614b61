"""The report's first screen at 1,280 × 800 in headless Chromium (issue 43): the cheapest-offers
table fits the page and no column of it is narrower than its longest word (an sku once took 17
lines of a squeezed column; identifiers are on hover now), the data range is stated as its
first and last dates with the days that have data, and the share of real and dated prices is
stated above the table. The screenshot is kept in tests/report/artifacts/ (never committed)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from playwright.sync_api import Browser

from tests.helpers.browser import chromium
from tests.helpers.report_market import (
    LAST_DAY,
    build_database,
    build_page,
    hostile_offers,
    market,
)
from tests.report.test_report import save_artifact

WIDTH, HEIGHT = 1280, 800
# Per cell of the first cheapest-offers table: its text, the width of its longest word in the
# cell's font, and the width its column gives the text.
CELL_WIDTHS = """() => {
    const table = document.querySelector('#cheapest table');
    return [...table.querySelectorAll('tr')].flatMap(tr => [...tr.children].map(cell => {
        const style = getComputedStyle(cell);
        const probe = document.createElement('span');     // the cell's own font, on one line
        probe.style.whiteSpace = 'nowrap';
        cell.appendChild(probe);
        // a word: letters and digits (a browser may break after "/" or "-", never inside one)
        const words = cell.innerText.split(/[^\\p{L}\\p{N}]+/u).filter(Boolean);
        const word = Math.max(0, ...words.map(w => {
            probe.textContent = w;
            return probe.getBoundingClientRect().width;
        }));
        probe.remove();
        return {text: cell.innerText, word: word,
                room: cell.clientWidth - parseFloat(style.paddingLeft)
                      - parseFloat(style.paddingRight)};
    }));
}"""


@pytest.fixture(scope="module")
def browser() -> Browser:
    with chromium() as browser:
        yield browser


@pytest.fixture(scope="module")
def first_screen(tmp_path_factory, browser):
    tmp = tmp_path_factory.mktemp("first-screen")
    rows = [r for d in range(3) for r in market(LAST_DAY - timedelta(days=2 - d), drift=d)]
    db = build_database(tmp / "prices.db", rows + hostile_offers(LAST_DAY))
    page_path = build_page(db, tmp / "report" / "index.html").path
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    page.goto(page_path.as_uri(), wait_until="load")
    save_artifact(page, "report-first-screen-1280.png")
    yield page
    page.close()


def test_every_column_of_the_cheapest_offers_is_at_least_a_word_wide(first_screen):
    cells = first_screen.evaluate(CELL_WIDTHS)
    assert cells
    squeezed = [c for c in cells if c["word"] > c["room"] + 1]
    assert squeezed == [], squeezed[:5]


def test_the_cheapest_offers_table_fits_the_page(first_screen):
    fits = first_screen.evaluate("""() => {
        const wrap = document.querySelector('#cheapest .table-wrap');
        return [wrap.scrollWidth, wrap.clientWidth];
    }""")
    assert fits[0] <= fits[1], fits


def test_the_header_states_the_range_and_the_share_above_the_table(first_screen):
    facts = first_screen.inner_text("header .facts")
    assert "2026-11-28 to 2026-11-30: data on each of its 3 days" in facts
    share = first_screen.locator("#dated-share")
    assert "are real and dated" in share.inner_text()
    table = first_screen.locator("#cheapest table").first
    assert share.bounding_box()["y"] < table.bounding_box()["y"]
