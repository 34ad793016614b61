"""DigitalOcean Droplet sizes (key-only): GPU Droplets per region, hourly and monthly."""

from decimal import Decimal

import pytest
from scrapy.utils.test import get_crawler

from pipelines.normalize import normalize_offer
from spiders.vendors.digitalocean import DigitaloceanSpider
from tests.helpers.responses import file_response
from tests.helpers.spider_contract import check_contract, keys_for


@pytest.fixture(scope="module")
def parsed():
    with keys_for("digitalocean", "keyed"):
        crawler = get_crawler(DigitaloceanSpider)
        spider = DigitaloceanSpider.from_crawler(crawler, crawl_id="test")
        return list(spider.parse(file_response("digitalocean", "sizes.json"))), crawler


def test_gpu_sizes_are_offers_per_region_and_period_and_cpu_sizes_skipped(parsed):
    offers, crawler = parsed
    assert sorted((o["sku"], o["billing_period"]) for o in offers) == [
        ("gpu-h100x8-640gb", "hour"), ("gpu-h100x8-640gb", "month"),
        ("gpu-mi300x8-1536gb", "hour"), ("gpu-mi300x8-1536gb", "month")]
    assert any(k.endswith("a CPU Droplet size (no gpu_info)") for k in crawler.stats.get_stats())
    check_contract("digitalocean", offers)


@pytest.mark.parametrize(("sku", "card", "per_gpu_hour"), [
    ("gpu-h100x8-640gb", "H100-80GB", Decimal("2.99")),
    ("gpu-mi300x8-1536gb", "MI300X-192GB", Decimal("1.99")),
])
def test_the_droplet_price_is_all_its_gpus(parsed, sku, card, per_gpu_hour):
    offer = next(o for o in parsed[0] if (o["sku"], o["billing_period"]) == (sku, "hour"))
    assert offer["gpu_count"] == 8 and offer["memory_unit"] == "MB"
    row = normalize_offer(offer)
    assert (row["gpu_model"], row["country"]) == (card, "US")
    assert row["price_per_gpu_hour_usd"] == per_gpu_hour


def test_the_token_goes_in_a_bearer_header_and_without_it_the_source_is_skipped(monkeypatch):
    monkeypatch.delenv("DIGITAL_OCEAN_API_KEY", raising=False)
    assert DigitaloceanSpider.missing_key() is not None
    monkeypatch.setenv("DIGITAL_OCEAN_API_KEY", "t")
    spider = DigitaloceanSpider.from_crawler(get_crawler(DigitaloceanSpider), crawl_id="test")
    assert spider.api_request(DigitaloceanSpider.start_urls[0]).headers["Authorization"] == \
        b"Bearer t"
