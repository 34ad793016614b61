"""A price held back as a possible outlier (marts.price_outliers: far from its card's market, no
later crawl has confirmed it yet) is left out of everything that recommends or lists current
prices, as marts.cheapest_offers and the alerts already left it out: `gpuprices prices` (table,
csv, json; `--include-held` shows it), the Python API's `prices()`, the advisor (pipeline and
`gpuprices advise`) and the SkyPilot export. A confirmed outlier is an ordinary price again."""

from __future__ import annotations

from datetime import timedelta

import duckdb
import pytest

from pipelines import api
from pipelines.advisor import offers_from_db
from tests.helpers.published import (
    AZURE,
    SEEN,
    SINNET,
    ULANQAB,
    gpuprices,
    market,
    offer,
    publish,
)

# Two A100 80GB hourly offers far below the market of Sinnet, Ulanqab and Azure (26 to 62 CNY
# per GPU-hour; the two widen it, so they must be more than 13x off): one seen for the first
# time (held), one that a crawl an hour earlier listed at the same price (confirmed).
HELD = ("idc_heldout", "Held-out IDC", "北京", SINNET[3])
CONFIRMED = ("idc_confirmed", "Confirmed IDC", "北京", SINNET[3])
EARLIER = SEEN - timedelta(hours=1)


def _earlier(row: dict) -> dict:
    return {**row, "observed_at": EARLIER, "observed_hour": EARLIER, "crawl_id": "earlier-crawl"}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    rows = [*market(),
            offer(*HELD, "A100-80GB", "0.50"),            # 1/50 of the market, new: held
            offer(*CONFIRMED, "A100-80GB", "0.52"),       # as far off, listed an hour before too
            _earlier(offer(*CONFIRMED, "A100-80GB", "0.52"))]
    root = publish(tmp_path_factory.mktemp("held") / "data", rows)
    with duckdb.connect(str(root / "prices.db"), read_only=True) as con:
        status = dict(con.execute("select vendor, outlier_status from marts.price_outliers "
                                  "where vendor in ('Held-out IDC', 'Confirmed IDC')").fetchall())
    assert status == {"Held-out IDC": "held", "Confirmed IDC": "confirmed"}   # the premise
    return root


def _vendors(rows: list[dict]) -> set[str]:
    return {r["vendor"] for r in rows}


def test_prices_leave_a_held_price_out_and_say_so(data_dir):
    result = gpuprices(data_dir, "prices", "--card", "A100-80GB", "--format", "table")
    assert result.exit_code == 0, result.output
    assert "Held-out IDC" not in result.output and "Confirmed IDC" in result.output
    assert "1 held price left out" in " ".join(result.output.split())
    assert "--include-held" in result.output


def test_include_held_shows_it(data_dir):
    result = gpuprices(data_dir, "prices", "--card", "A100-80GB", "--include-held",
                       "--format", "table")
    assert result.exit_code == 0, result.output
    assert "Held-out IDC" in result.output and "held price" not in result.output


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_machine_formats_leave_it_out_too(data_dir, fmt):
    default = gpuprices(data_dir, "prices", "--format", fmt)
    everything = gpuprices(data_dir, "prices", "--format", fmt, "--include-held")
    assert default.exit_code == everything.exit_code == 0
    assert "Held-out IDC" not in default.stdout and "Confirmed IDC" in default.stdout
    assert "Held-out IDC" in everything.stdout


def test_a_filter_that_matches_only_held_prices_matches_nothing(data_dir):
    result = gpuprices(data_dir, "prices", "--vendor", "Held-out")
    assert result.exit_code == 3
    assert "but 1 held price left out" in " ".join(result.output.split())
    assert gpuprices(data_dir, "prices", "--vendor", "Held-out", "--include-held").exit_code == 0


def test_the_api_leaves_it_out_unless_asked(data_dir):
    assert "Held-out IDC" not in set(api.prices(data_dir=data_dir)["vendor"])
    assert "Confirmed IDC" in set(api.prices(data_dir=data_dir)["vendor"])
    assert "Held-out IDC" in set(api.prices(data_dir=data_dir, include_held=True)["vendor"])


def test_the_advisor_never_recommends_a_held_price(data_dir):
    with duckdb.connect(str(data_dir / "prices.db"), read_only=True) as con:
        vendors = {o.vendor for o in offers_from_db(con)}
    assert "Held-out IDC" not in vendors and {"Confirmed IDC", AZURE[1], ULANQAB[1]} <= vendors
    result = gpuprices(data_dir, "advise", "--params", "7B", "--task", "inference",
                       "--hours-per-day", "8", "--days", "5", "--limit", "0", "--format", "json")
    assert result.exit_code == 0, result.output
    assert "Held-out IDC" not in result.stdout and "Confirmed IDC" in result.stdout


def test_the_skypilot_catalog_leaves_it_out(data_dir, tmp_path):
    result = gpuprices(data_dir, "export", "--format", "skypilot", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    sources = {p.parent.name for p in (tmp_path / "skypilot").glob("*/vms.csv")}
    assert "idc_confirmed" in sources and "idc_heldout" not in sources
