"""A source's calendar and its region key are attributes of its spider (issue 26), carried on
its offers when the spider declares what its name does not imply; the values are the ones the
name conventions gave before (a `_cn` name for the zone, a substring table for the key)."""

from __future__ import annotations

import pytest
from scrapy.http import HtmlResponse

from spiders.base.spider import GpuPriceSpider
from spiders.parsing.calendars import CHINA_TIME_ZONE, DEFAULT_TIME_ZONE, source_time_zone
from spiders.parsing.regions import _table, resolve_region
from spiders.registry import source_names, spider_class

# What regions.csv's vendor column read for each source before the key was the spider's (the
# substring table of spiders/parsing/regions.py): every other source had no rows of its own.
KEY_BEFORE = {"alibaba_cn": "alibaba", "autodl_cn": "autodl", "huaweicloud_cn": "huawei",
              "tencent_cn": "tencent", "tencent_cn_list": "tencent", "aws": "aws",
              "azure": "azure", "gcp": "gcp", "runpod": "runpod", "vultr": "vultr",
              "vastai": "vastai", "lambda_cloud": "lambda_cloud", "compshare_cn": "compshare_cn",
              "gpugeek_cn": "gpugeek_cn", "gpushare_cn": "gpushare_cn",
              "matpool_cn": "matpool_cn", "volcengine_cn": "volcengine_cn",
              "cudo": "cudo", "jarvislabs": "jarvislabs",
              "hyperstack": "hyperstack", "digitalocean": "digitalocean",
              "ucloud_uhost_cn": "ucloud_uhost_cn", "jdcloud_cn": "jdcloud_cn",
              "gongji_cn": "gongji_cn",
              "coreweave": "coreweave"}   # new sources with rows of their own join here
RENAMED = {"alibaba": "alibaba_cn", "autodl": "autodl_cn", "huawei": "huaweicloud_cn",
           "tencent": "tencent_cn"}   # the old keys, now the sources' own names


def _vendor_rows(key: str) -> int:
    return sum(1 for vendor, _alias in _table() if vendor == key)


@pytest.mark.parametrize("source", source_names())
def test_every_sources_calendar_is_the_one_its_name_gave(source):
    zone = spider_class(source).time_zone()
    assert zone == (CHINA_TIME_ZONE if source.endswith("_cn") else DEFAULT_TIME_ZONE)


@pytest.mark.parametrize("source", source_names())
def test_every_sources_region_key_reads_the_rows_it_read_before(source):
    key = spider_class(source).regions_key()
    before = KEY_BEFORE.get(source)
    if before is None:
        assert _vendor_rows(key) == 0     # shared rows only, as before
    else:
        assert key == RENAMED.get(before, before) and _vendor_rows(key) > 0


def test_no_regions_csv_key_is_orphaned():
    keys = {vendor for vendor, _alias in _table() if vendor}
    assert keys <= {spider_class(s).regions_key() for s in source_names()}


class _Declared(GpuPriceSpider):
    name = "example_us"
    vendor, vendor_kind = "Example", "gpu_cloud"
    local_time_zone = "Asia/Tokyo"
    region_key = "aws"


class _Plain(GpuPriceSpider):
    name = "example_cn"
    vendor, vendor_kind = "Example CN", "gpu_cloud"


class _SecondPath(GpuPriceSpider):
    name = "example_cn_list"
    vendor, vendor_kind = "Example CN", "gpu_cloud"
    second_path_of = "tencent_cn"


def _offer(spider_cls) -> dict:
    response = HtmlResponse("https://example.com/", body=b"<html></html>", encoding="utf-8")
    return dict(spider_cls().offer(response, sku="x", gpu_text="A100", region_text="r",
                                   offer_kind="on_demand", price_amount="1"))


@pytest.mark.parametrize(("spider_cls", "carried"), [
    (_Declared, {"local_time_zone": "Asia/Tokyo", "region_key": "aws"}),
    (_Plain, {}),                              # what the name implies: the item as before
    (_SecondPath, {"region_key": "tencent_cn"}),   # a second path reads its source's regions
])
def test_an_offer_carries_what_its_spider_declares_beyond_its_name(spider_cls, carried):
    item = _offer(spider_cls)
    assert {k: item[k] for k in ("local_time_zone", "region_key") if k in item} == carried
    assert source_time_zone(item["source"], item.get("local_time_zone")) == \
        spider_cls.time_zone()


def test_a_declared_key_reads_that_vendors_rows():
    # Huawei's ap-southeast-1 is Hong Kong, AWS's is Singapore
    assert resolve_region("ap-southeast-1", _Declared.regions_key()).country == "SG"
    assert resolve_region("ap-southeast-1", "huaweicloud_cn").country == "HK"
