"""CoreWeave: the public pricing page. The snapshot trims a public collector's real copy of
coreweave.com/pricing (ewyluda/gpu-price-index tests/fixtures/coreweave.html @ 078a7891); what is
CoreWeave's own: region sections, per-instance on-demand and spot spans, "Contact sales" / "N/A",
a product listed twice, the labelled machine figures."""

from decimal import Decimal

import pytest
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from pipelines.normalize import Quarantined, normalize_offer
from spiders.vendors.coreweave import PRICING_URL, CoreweaveSpider
from tests.helpers.responses import file_response
from tests.helpers.spider_contract import check_contract

crawler = get_crawler(CoreweaveSpider)
spider = CoreweaveSpider.from_crawler(crawler, crawl_id="test")


@pytest.fixture(scope="module")
def offers() -> list[dict]:
    return list(spider.parse(file_response("coreweave", "pricing.html")))


@pytest.fixture(scope="module")
def by_key(offers) -> dict[tuple, dict]:
    return {(o["sku"], o["region_text"], o["offer_kind"]): o for o in offers}


def test_every_sold_price_of_every_region_is_an_offer(offers):
    assert len(offers) == 14
    stats = crawler.stats.get_stats()
    assert stats["offers_skipped/on_demand not sold (Contact sales or N/A)"] == 1   # B300
    assert stats["offers_skipped/spot not sold (Contact sales or N/A)"] == 1        # GH200


@pytest.mark.parametrize("sku, kind, model, count, per_gpu_usd", [
    ("hgx-h100", "on_demand", "H100-80GB", 8, "6.155"),     # $49.24 for 8 GPUs
    ("hgx-h100", "spot", "H100-80GB", 8, "2.46375"),
    ("hgx-h200", "on_demand", "H200-141GB", 8, "6.305"),
    ("nvidia-a100", "on_demand", "A100-80GB", 8, "2.7"),    # the VRAM cell says 80 GB
    ("nvidia-gh200", "on_demand", "GH200-96GB", 1, "6.5"),
    ("nvidia-b300", "spot", "B300-270GB", 8, "4.48"),         # the page's VRAM: 270 GB
])
def test_prices_are_the_whole_instances(by_key, sku, kind, model, count, per_gpu_usd):
    row = normalize_offer(by_key[sku, "REGION: NORTH AMERICA", kind])
    assert (row["gpu_model"], row["gpu_count"], row["country"]) == (model, count, "US")
    assert row["price_per_gpu_hour_usd"] == Decimal(per_gpu_usd)


def test_the_machine_is_read_with_the_pages_units(by_key):
    offer = by_key["hgx-h100", "REGION: NORTH AMERICA", "on_demand"]
    assert (offer["vcpus_text"], offer["memory_text"], offer["disk_text"], offer["vram_gb"]) == (
        "128", "2,048 GB", "61.44 TB", "80 GB")


def test_europe_is_read_and_quarantined_for_naming_no_country(by_key):
    offer = by_key["nvidia-b200", "REGION: EUROPE", "spot"]
    assert offer["price_text"] == "$34.87"
    with pytest.raises(Quarantined, match="unknown region 'REGION: EUROPE'"):
        normalize_offer(offer)


def test_a_product_listed_twice_in_a_region_is_read_once():
    row = file_response("coreweave", "pricing.html").css("div.table-row-v2")[1].get()
    page = (f'<div class="section-content"><h5><strong class="eyebrow">REGION: NORTH AMERICA'
            f'</strong></h5><div class="table-v2 gpu-pricing">{row}{row}</div></div>')
    offers = list(spider.parse(HtmlResponse(url=PRICING_URL, body=page.encode(),
                                            encoding="utf-8")))
    assert [(o["sku"], o["offer_kind"]) for o in offers] == [
        ("nvidia-b200", "on_demand"), ("nvidia-b200", "spot")]


def test_a_page_without_the_gpu_table_is_a_loud_error():
    page = HtmlResponse(url=PRICING_URL, body=b"<html><body>Access denied</body></html>",
                        encoding="utf-8")
    with pytest.raises(ValueError, match="no GPU pricing table"):
        list(spider.parse(page))


def test_contract(offers):
    check_contract("coreweave", offers)
