"""Nobody takes a modeled price for a quote: a real `gpuprices run` over two snapshots (RunPod,
part published and part illustrative; Azure, real prices nobody dated), then the same run with
Azure's snapshot entries saying their prices are published with a date. The report, opened in
headless Chromium, names the modeled sources in a banner and marks each price ("price from",
tinted when not real, the full wording on hover); `gpuprices prices` and the API's frames say the
same."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest

from pipelines import api
from spiders.layout import SNAPSHOT_DIR
from tests.helpers.browser import chromium
from tests.helpers.runs import gpuprices

SOURCES = ("--source", "azure", "--source", "runpod")


def _published_azure(root: Path) -> Path:
    """The bundled snapshots with Azure's manifest entries saying their prices are published on
    a date (each offer carries its entry's basis; the top level sums them up)."""
    snapshots = root / "snapshots"
    for source in ("azure", "runpod"):
        shutil.copytree(SNAPSHOT_DIR / source, snapshots / source)
    manifest = snapshots / "azure" / "manifest.json"
    meta = json.loads(manifest.read_text(encoding="utf-8"))
    meta.update(price_basis="published", prices_as_of="2026-11-30")
    for entry in meta["entries"]:
        entry.update(price_basis="published", prices_as_of="2026-11-30",
                     price_record={"url": "https://example.test/azure", "date": "2026-11-30"})
    manifest.write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
    return snapshots


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("basis")
    made = {}
    for name, snapshots in (("bundled", SNAPSHOT_DIR), ("published", _published_azure(root))):
        data = root / name / "data"
        done = gpuprices(data, "run", *SOURCES, snapshots=snapshots)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        made[name] = data
    return made


@pytest.fixture(scope="module")
def browser():
    with chromium() as browser:
        yield browser


def _page(browser, data: Path):
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto((data / "report" / "index.html").as_uri(), wait_until="load")
    return page


def _price_from_cells(page) -> list[tuple[str, str | None, str | None]]:
    """(word, css class, hover text) of every "price from" cell of the cheapest-offers table."""
    return [tuple(cell) for cell in page.evaluate("""() => {
        const table = document.querySelector('#cheapest table');
        const heads = [...table.querySelectorAll('thead th')].map(th => th.innerText.trim());
        const at = heads.indexOf('price from');
        return [...table.querySelectorAll('tbody tr')].map(tr => {
            const span = tr.children[at].querySelector('span');
            return [tr.children[at].innerText.trim(), span && span.className,
                    span && span.getAttribute('title')];
        });
    }""")]


def test_the_page_names_the_modeled_sources_and_marks_each_price(runs, browser):
    page = _page(browser, runs["bundled"])
    banner = page.locator("#modeled-prices")
    assert banner.is_visible()
    text = banner.inner_text()
    assert "2 of 2 sources" in text and "azure" in text and "runpod" in text
    cells = _price_from_cells(page)
    assert cells and {c[0] for c in cells} == {"undated", "part modeled"}
    assert all(css == "modeled" for _, css, _ in cells)     # neither is a real, dated price
    assert ("undated", "modeled", "published prices, date unknown, replayed") in cells
    assert ("part modeled", "modeled",
            "modeled snapshot: part published as of 2026-09-25, part illustrative") in cells
    page.close()


def test_published_prices_are_not_marked_modeled(runs, browser):
    page = _page(browser, runs["published"])
    text = page.locator("#modeled-prices").inner_text()
    assert "1 of 2 sources" in text and "runpod" in text and "azure" not in text
    cells = set(_price_from_cells(page))
    assert ("published", "real-price", "published prices as of 2026-11-30, replayed") in cells
    assert all(css == "modeled" for word, css, _ in cells if word != "published")
    page.close()


def test_prices_and_the_api_say_the_same(runs):
    listed = gpuprices(runs["bundled"], "prices", "--format", "csv", "--limit", "0")
    assert listed.returncode == 0, listed.stderr
    header, *rows = list(csv.reader(io.StringIO(listed.stdout)))
    at = [header.index(c) for c in ("price_basis", "prices_as_of", "price_basis_label")]
    assert {tuple(row[i] for i in at) for row in rows} == {
        ("undated", "", "published prices, date unknown, replayed"),
        ("mixed", "2026-09-25",
         "modeled snapshot: part published as of 2026-09-25, part illustrative")}
    table = gpuprices(runs["published"], "prices", "--limit", "0", "--format", "table")
    assert "MODELED prices are illustrative, not quotes" in table.stdout
    assert "(runpod)" in table.stdout
    frame = api.prices(data_dir=runs["published"])
    assert set(frame["price_basis"]) == {"published", "mixed"}
    assert frame.attrs["price_basis"] == {
        "azure": "published prices as of 2026-11-30, replayed",
        "runpod": "modeled snapshot: part published as of 2026-09-25, part illustrative"}
    assert api.claims(data_dir=runs["published"]).attrs["price_basis"].keys() == {"azure",
                                                                                 "runpod"}

def test_sources_says_where_each_sources_prices_come_from(runs, monkeypatch):
    from click.testing import CliRunner

    from pipelines.cli import main
    from pipelines.cli.output import console

    monkeypatch.setattr(console, "width", 500)     # each cell on one line
    listed = CliRunner(env={"GPUPRICES_DATA_DIR": str(runs["published"])}).invoke(main,
                                                                                  ["sources"])
    assert listed.exit_code == 0, listed.output
    rows = {line.split("\t")[0]: line for line in listed.output.splitlines()}   # tsv
    assert "published prices as of 2026-11-30, replayed" in rows["azure"]
    assert "modeled snapshot: part published as of 2026-09-25" in rows["runpod"]
    assert "snapshot: " in rows["vultr"]           # not crawled here: what its snapshot would land
