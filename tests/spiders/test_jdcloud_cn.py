"""京东云 JD Cloud: the GPU rows of the Virtual Machines price overview
(spiders/vendors/jdcloud_cn.py), parsed from the recorded page and normalized. Every price is the
document's own (jdcloudcom/en Price-Overview.md @ 03871fe3; undated)."""

from decimal import Decimal

import pytest
from scrapy.utils.test import get_crawler

from pipelines.normalize import normalize_offer
from spiders.vendors.jdcloud_cn import JdcloudCnSpider
from tests.helpers.normalized import normalized
from tests.helpers.responses import file_response, snapshot_entries

SOURCE = "jdcloud_cn"
TYPES = ("p.n1p40.3xlarge", "p.n1p40.7xlarge", "p.n1p40.14xlarge", "p.n1p40h.3xlarge",
         "p.n1p40h.7xlarge", "p.n1p40h.14xlarge", "p.n1v100.2xlarge", "p.n1v100.5xlarge",
         "p.n1v100.10xlarge")
REGIONS = ("cn-north-1", "cn-east-2", "cn-south-1", "cn-east-1")


def _parse(response=None) -> tuple[list, dict]:
    spider = JdcloudCnSpider.from_crawler(get_crawler(JdcloudCnSpider), crawl_id="test")
    offers = list(spider.parse(response or file_response(SOURCE, "price-overview.html")))
    return offers, spider.crawler.stats.get_stats()


@pytest.fixture(scope="module")
def parsed() -> tuple[list, dict]:
    return _parse()


def test_every_gpu_row_in_every_region_and_term_and_other_rows_are_counted(parsed):
    offers, stats = parsed
    assert JdcloudCnSpider.start_urls == [e["url"] for e in snapshot_entries(SOURCE)]
    assert len(offers) == len(TYPES) * len(REGIONS) * 2 == 72
    assert sorted({o["sku"] for o in offers}) == sorted(TYPES)
    assert {o["region_text"] for o in offers} == set(REGIONS)
    assert stats["jdcloud_cn/cpu_types_skipped"] == 3


@pytest.mark.parametrize("sku, region, period, price_text, cards, per_gpu_hour", [
    ("p.n1p40.3xlarge", "cn-north-1", "month", "4241.5 RMB", "1*P40", Decimal("4241.5") / 730),
    ("p.n1p40.3xlarge", "cn-east-1", "hour", "11.05 RMB/hour", "1*P40", Decimal("11.05")),
    ("p.n1p40.14xlarge", "cn-south-1", "month", "17935 RMB", "4*P40", Decimal("17935") / 730 / 4),
    ("p.n1v100.5xlarge", "cn-east-2", "hour", "43.13 RMB/hour", "2*V100", Decimal("43.13") / 2),
    ("p.n1v100.10xlarge", "cn-east-1", "month", "18633.75 RMB", "4*V100",
     Decimal("18633.75") / 730 / 4),
])
def test_a_rows_price_per_gpu_hour(sku, region, period, price_text, cards, per_gpu_hour, parsed):
    [offer] = [o for o in parsed[0] if o["sku"] == sku and o["region_text"] == region
               and o["billing_period"] == period]
    assert offer["price_text"] == price_text and offer["gpu_text"] == cards
    row = normalize_offer(dict(offer))
    assert row["currency"] == "CNY" and row["offer_kind"] == "on_demand"
    assert row["price_per_gpu_hour_cny"] == per_gpu_hour.quantize(Decimal("0.000001"))


def test_regions_are_four_provinces(parsed):
    ok, bad = normalized(parsed[0])
    assert bad == []
    assert {(r["region_code"], r["province_or_state"], r["city"]) for r in ok} == {
        ("cn-north-1", "Beijing", "Beijing"), ("cn-east-2", "Shanghai", "Shanghai"),
        ("cn-south-1", "Guangdong", "Guangzhou"), ("cn-east-1", "Jiangsu", "Suqian")}
    assert {r["gpu_model"] for r in ok} == {"P40-24GB", "V100-16GB"}


def test_prices_are_real_and_undated(parsed):
    assert {(o["price_basis"], o["prices_as_of"]) for o in parsed[0]} == {("undated", None)}


def test_a_changed_header_fails_loudly():
    response = file_response(SOURCE, "price-overview.html")
    changed = response.replace(body=response.body.replace(b"Monthly Price", b"Price per Month"))
    with pytest.raises(ValueError, match="no 'Monthly Price' header"):
        _parse(changed)


def test_a_page_without_the_table_fails_loudly():
    response = file_response(SOURCE, "price-overview.html")
    with pytest.raises(ValueError, match="no price table"):
        _parse(response.replace(body=b"<html><body><p>loading</p></body></html>"))


def test_a_dash_is_a_term_not_sold_in_that_group():
    response = file_response(SOURCE, "price-overview.html")
    body = response.body.replace(b"<td>3181.13</td>", b"<td>--</td>")
    offers, _ = _parse(response.replace(body=body))
    assert len(offers) == 71
    assert not [o for o in offers if o["sku"] == "p.n1p40.3xlarge"
                and o["region_text"] == "cn-east-1" and o["billing_period"] == "month"]
