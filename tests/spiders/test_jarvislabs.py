"""JarvisLabs server_meta (key-only): one on-demand offer per VM row, one GPU's price."""

from decimal import Decimal

import pytest
from scrapy.utils.test import get_crawler

from pipelines.normalize import normalize_offer
from spiders.vendors.jarvislabs import JarvislabsSpider
from tests.helpers.responses import file_response
from tests.helpers.spider_contract import check_contract, keys_for


def _spider():
    crawler = get_crawler(JarvislabsSpider)
    return JarvislabsSpider.from_crawler(crawler, crawl_id="test"), crawler


@pytest.fixture(scope="module")
def parsed():
    with keys_for("jarvislabs", "keyed"):
        spider, crawler = _spider()
        return list(spider.parse(file_response("jarvislabs", "server_meta.json"))), crawler


def test_vm_rows_are_offers_container_rows_skipped_and_the_contract_holds(parsed):
    offers, crawler = parsed
    assert [o["gpu_text"] for o in offers] == ["L4", "A100-80GB", "RTX-PRO6000", "H100"]
    assert any(k.endswith("workload_type 'container', not a VM row")
               for k in crawler.stats.get_stats())
    check_contract("jarvislabs", offers)


@pytest.mark.parametrize(("card", "model", "price", "state", "vcpus"), [
    ("L4", "L4-24GB", "0.44", "Uttar Pradesh", 28),
    ("A100-80GB", "A100-80GB", "1.49", "Uttar Pradesh", 28),
])
def test_one_gpus_price_with_its_share_of_the_machine(parsed, card, model, price, state, vcpus):
    row = normalize_offer(next(o for o in parsed[0] if o["gpu_text"] == card))
    assert (row["gpu_model"], row["province_or_state"], row["vcpus"]) == (model, state, vcpus)
    assert row["price_per_gpu_hour_usd"] == Decimal(price)


def test_the_key_goes_in_a_bearer_header_and_without_it_the_source_is_skipped(monkeypatch):
    monkeypatch.delenv("JL_API_KEY", raising=False)
    assert JarvislabsSpider.missing_key() == (
        "skipped: jarvislabs needs an API key in the environment variable JL_API_KEY")
    monkeypatch.setenv("JL_API_KEY", "k")
    spider, _ = _spider()
    request = spider.api_request(JarvislabsSpider.start_urls[0])
    assert request.headers["Authorization"] == b"Bearer k"


def test_a_row_without_a_price_is_skipped_and_counted():
    spider, crawler = _spider()
    response = file_response("jarvislabs", "server_meta.json")
    row = {"gpu_type": "L4", "region": "india-01", "workload_type": "vm", "price_per_hour": None}
    assert list(spider.parse_offer(row, response)) == []
    assert any(k.endswith("a row without gpu_type or price_per_hour")
               for k in crawler.stats.get_stats())
