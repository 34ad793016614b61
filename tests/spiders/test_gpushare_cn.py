"""恒源云 market: a JavaScript page of machine cards. Without a browser there are no cards and the
spider says so; rendered in Chromium (over the replay server, XHR included) every machine of the
market JSON becomes one offer per listed term.

The snapshot holds RTX 3090 and A800 machines (outside the four mission families, still kept as
observations) and an A100 with no 包月 price (rendered "—", skipped)."""

import functools
import gzip
import json
from decimal import Decimal

import pytest
from scrapy.http import HtmlResponse

from pipelines.normalize import Quarantined, normalize_offer
from spiders.layout import SNAPSHOT_DIR
from spiders.vendors.gpushare_cn import GpushareCNSpider
from tests.helpers.crawl import run_crawl
from tests.helpers.responses import file_response

TERMS = {"hour": ("price_hour", "时"), "day": ("price_day", "天"), "month": ("price_month", "月")}


@functools.cache
def recorded_machines() -> list[dict]:
    """The machines of the recorded market JSON, read once (collection needs them too: one test
    per machine)."""
    return json.loads((SNAPSHOT_DIR / "gpushare_cn" / "market_machines.json")
                      .read_text(encoding="utf-8"))["data"]["machines"]


@pytest.fixture(scope="module")
def machines() -> list[dict]:
    return recorded_machines()


def pytest_generate_tests(metafunc):
    """The tests taking `machine` run once per recorded machine (collection needs the list)."""
    if metafunc.function.__name__ == "test_each_machine_matches_the_market_json":
        metafunc.parametrize("machine", recorded_machines(), ids=lambda m: m["machine_id"])


def test_unrendered_shell_has_no_cards_and_says_so():
    shell = file_response("gpushare_cn", "market.html")
    with pytest.raises(ValueError, match=r"gpushare_cn: no machine cards \(div.machine-card\)"):
        list(GpushareCNSpider(crawl_id="t").parse(shell))


@pytest.fixture(scope="module")
def crawl(replay_server, tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("gpushare")
    offers, verdict = run_crawl("gpushare_cn", replay_server.url, data_dir)
    return offers, verdict, data_dir


@pytest.fixture(scope="module")
def offers(crawl):
    return crawl[0]


def test_crawl_passes_with_every_listed_term(crawl, machines):
    offers, verdict, _ = crawl
    assert verdict["passed"], verdict["failures"]
    listed = sum(1 for m in machines for field, _ in TERMS.values() if m[field] is not None)
    assert len(offers) == verdict["offers"] == listed == 41


def test_rendered_prices_are_the_card_text(offers):
    bj_4090 = {o["billing_period"]: o["price_text"] for o in offers if o["sku"] == "bj1-0107"}
    assert bj_4090 == {"hour": "¥2.28/时", "day": "¥52.00/天", "month": "¥1,399.00/月"}


def test_card_fields(offers):
    (a100,) = [o for o in offers if o["sku"] == "bj1-0213" and o["billing_period"] == "month"]
    assert (a100["gpu_text"], a100["vram_gb"], a100["gpu_count"]) == ("A100 SXM4", "80 GB", 1)
    assert (a100["region_text"], a100["offer_kind"]) == ("北京一区", "on_demand")
    assert a100["available"] is True
    assert a100["vendor_data"]["card"]["空闲"] == "1/16"
    assert a100["observed_at"] == "2026-11-30T09:00:00Z"


def test_each_machine_matches_the_market_json(offers, machine):
    mine = {o["billing_period"]: o for o in offers if o["sku"] == machine["machine_id"]}
    expected = {p for p, (field, _) in TERMS.items() if machine[field] is not None}
    assert set(mine) == expected
    for period, offer in mine.items():
        field, unit = TERMS[period]
        assert offer["price_text"] == f"¥{Decimal(machine[field]):,.2f}/{unit}"
        assert offer["region_text"] == machine["region"]
        assert offer["available"] is (machine["idle_gpus"] > 0)


def test_term_not_offered_is_skipped(offers):
    assert sorted(o["billing_period"] for o in offers if o["sku"] == "nm1-0061") == ["day", "hour"]


def test_sold_out_h800_is_unavailable(offers):
    h800 = [o for o in offers if o["region_text"] == "北京二区" and o["gpu_text"] == "H800"]
    assert len(h800) == 3 and all(o["available"] is False for o in h800)


def test_normalizes_every_card(offers):
    rows, quarantined = [], []
    for offer in offers:
        try:
            rows.append(normalize_offer(offer))
        except Quarantined as exc:
            quarantined.append((offer["gpu_text"], exc.stage))
    assert quarantined == [] and len(rows) == 41
    assert {r["gpu_model"] for r in rows} == {"RTX4090-24GB", "RTX4090D-24GB", "A100-40GB",
                                               "A100-80GB", "H800-80GB", "A800-80GB",
                                               "RTX3090-24GB"}
    rows = [r for r in rows if r["gpu_model"] not in ("A800-80GB", "RTX3090-24GB")]
    assert {r["province_or_state"] for r in rows} == {"Beijing", "Jiangsu", "Inner Mongolia"}
    (sq_h800,) = [r for r in rows if r["sku"] == "sq1-0101" and r["billing_period"] == "month"]
    per_gpu_hour = (Decimal("9800") / 730).quantize(Decimal("0.000001"))  # 包月 ÷ 730 h
    assert sq_h800["price_per_gpu_hour_cny"] == per_gpu_hour


def test_xhr_json_and_rendered_dom_are_archived(crawl):
    offers, verdict, data_dir = crawl
    urls = [f["url"] for f in verdict["fetches"]]
    assert "https://gpushare.com/api/v1/market/machines?page=1&page_size=50" in urls
    assert all(o["url"] == "https://gpushare.com/market" for o in offers)
    # The archived rendered DOM parses to the same offers (what `run --from-raw` relies on).
    (ref,) = {o["raw_ref"] for o in offers}
    dom = gzip.decompress((data_dir / "raw" / "objects" / ref[:2] / f"{ref}.gz").read_bytes())
    again = GpushareCNSpider(crawl_id="t").parse(
        HtmlResponse(url="https://gpushare.com/market", body=dom, encoding="utf-8"))
    assert sorted((o["sku"], o["billing_period"], o["price_text"]) for o in again) == sorted(
        (o["sku"], o["billing_period"], o["price_text"]) for o in offers)


def test_offer_invariants(offers):
    for o in offers:
        assert o["price_text"].startswith("¥") and o["billing_period"] in TERMS, o
        assert o["gpu_count"] == 1 and o["vram_gb"] in ("24 GB", "40 GB", "80 GB"), o
        assert o["available"] in (True, False) and len(o["raw_ref"]) == 64, o


def test_offers_are_unique(offers):
    keys = [(o["sku"], o["billing_period"]) for o in offers]
    assert len(keys) == len(set(keys))
