"""Alibaba Cloud ECS GPU prices on the public path: the pricing page names the price file's
version folder, instancePrice.json is read for Linux/VPC rows of GPU families only, cards come from
alibaba_cn_gpus.csv. The snapshot holds CPU, Windows and classic-network rows (skipped and
counted), a monthly-only row, a half A10 (lands), a 1/6 A10 (quarantined by normalization),
ebmgn8v read as 8x H20 (a weak table row) and gn5, whose family the table lacks (quarantined with
the instance type as the reason)."""

import contextlib
import json
from decimal import Decimal

import pytest
from scrapy.http import HtmlResponse, Request, TextResponse
from scrapy.utils.test import get_crawler

from pipelines.normalize import Quarantined, normalize_offer
from spiders.layout import SNAPSHOT_DIR
from spiders.vendors.alibaba_cn import (
    GPU_TABLE,
    GPU_TYPE_RE,
    PRICING_PAGE,
    UNMAPPED_COUNT,
    AlibabaCNSpider,
    gpu_table,
    price_folder,
    price_of_one_period,
)
from tests.helpers.crawl import run_crawl
from tests.helpers.responses import file_response

FILE_URL = "https://g.alicdn.com/aliyun/ecs-price-info/2.0.211/price/download/instancePrice.json"
KEYS = ("ALIBABA_CLOUD_ACCESS_KEY_ID", "ALIBABA_CLOUD_ACCESS_KEY_SECRET")


def new_spider() -> AlibabaCNSpider:
    return AlibabaCNSpider.from_crawler(get_crawler(AlibabaCNSpider), crawl_id="t")


def price_file_response(body: dict | bytes, url: str = FILE_URL) -> TextResponse:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return TextResponse(url=url, body=data, encoding="utf-8", request=Request(url))


def recorded_file() -> dict:
    return json.loads((SNAPSHOT_DIR / "alibaba_cn" / "instancePrice.json").read_text("utf-8"))


@pytest.fixture(scope="module")
def parsed():
    spider = new_spider()
    offers = list(spider.parse_price_file(file_response("alibaba_cn", "instancePrice.json")))
    return offers, spider.crawler.stats.get_stats()


@pytest.fixture(scope="module")
def offers(parsed):
    return parsed[0]


def by(offers, sku, region):
    return {o["billing_period"]: o for o in offers
            if o["sku"] == sku and o["region_text"] == region}


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch):
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)


# ---- the pricing page and the version ------------------------------------------------------
def test_start_is_the_pricing_page_without_keys():
    import asyncio

    async def first():
        return [r async for r in new_spider().start()]
    [request] = asyncio.run(first())
    assert request.url == PRICING_PAGE and request.method == "GET"
    assert AlibabaCNSpider.render_js is False


def test_pricing_page_names_the_price_file():
    page = file_response("alibaba_cn", "ecs_pricing_zh.html")
    [request] = list(new_spider().parse_pricing_page(page))
    assert request.url == FILE_URL
    # the whole-ECS file may exceed the crawl-wide 16 MiB limit: lifted for this request only
    assert request.meta["download_maxsize"] == 128 * 1024 * 1024


@pytest.mark.parametrize(("html", "folder"), [
    ('<script src="https://g.alicdn.com/aliyun/ecs-price-info/2.0.375/price/x.js">',
     "https://g.alicdn.com/aliyun/ecs-price-info/2.0.375"),
    ("see https://g.alicdn.com/aliyun/ecs-price-info/2.0.8.", "https://g.alicdn.com/aliyun/ecs-price-info/2.0.8"),
    # the international twin is another file (USD): not matched
    ('"https://g.alicdn.com/aliyun/ecs-price-info-intl/2.0.9/price/download/x"', None),
    ("<html>no version here</html>", None),
])
def test_price_folder_regex(html, folder):
    assert price_folder(html) == folder


def test_a_page_without_a_version_fails_loudly():
    page = HtmlResponse(url=PRICING_PAGE, body=b"<html><body>loading...</body></html>",
                        encoding="utf-8", request=Request(PRICING_PAGE))
    with pytest.raises(ValueError, match=r"names no price-file version.*not guessing"):
        list(new_spider().parse_pricing_page(page))


# ---- the price file ------------------------------------------------------------------------
# The snapshot's price file holds the record's values: cloudpilot-ai/priceserver
# pkg/client/builtin-data/alibabacloud_price.json @ 93dab418095a (2024-10-09), onDemandPricePerHour
# (CNY) of its cn-* regions' GPU types, hourly only (the record has no monthly price).
def test_offer_count_and_skips_are_counted(offers, parsed):
    _, stats = parsed
    # 126 GPU rows the family table knows and gn5 in cn-zhangjiakou, each one hourly price
    assert len(offers) == 127
    assert stats["alibaba_cn/cpu_rows_skipped"] == 3
    assert stats["alibaba_cn/not_linux_vpc_rows_skipped"] == 2
    assert stats["alibaba_cn/unmapped_gpu_types"] == 1   # gn5
    gpu_keys = [k for k in recorded_file()["pricingInfo"]
                if GPU_TYPE_RE.match(k.split("::")[1]) and "::vpc::linux::" in k]
    assert len({(o["region_text"], o["sku"]) for o in offers}) == len(gpu_keys) == 127


def test_shenzhen_a100_80gb_price_is_the_records(offers):
    row = by(offers, "ecs.gn7e-c16g1.4xlarge", "cn-shenzhen")
    assert {p: (o["price_amount"], o["currency"], o["offer_kind"]) for p, o in row.items()} == {
        "hour": ("34.742", "CNY", "on_demand")}
    hour = row["hour"]
    assert (hour["gpu_text"], hour["gpu_count"], hour["available"]) == (
        "NVIDIA A100 80GB", "1", None)
    assert hour["vendor_data"]["price_key"] == (
        "cn-shenzhen::ecs.gn7e-c16g1.4xlarge::vpc::linux::optimized")
    assert hour["vendor_data"]["version"] == "2.0.211"
    assert hour["vendor_data"]["card_evidence"] == "weak"
    assert hour["url"] == FILE_URL
    # its entry's basis: the record's prices, dated by its commit
    assert (hour["price_basis"], hour["prices_as_of"]) == ("published", "2024-10-09")


def test_a_row_without_a_monthly_list_yields_only_its_hourly_offer(offers):
    assert {o["billing_period"] for o in offers} == {"hour"}


def test_windows_and_classic_rows_yield_nothing(offers):
    keys = {o["vendor_data"]["price_key"] for o in offers}
    assert all(k.endswith("::vpc::linux::optimized") for k in keys)
    assert not [o for o in offers if o["sku"] in ("ecs.g7.large", "ecs.c7.xlarge")]


@pytest.mark.parametrize(("sku", "region", "model", "fraction", "count", "per_gpu_hour"), [
    ("ecs.gn7e-c16g1.32xlarge", "cn-shenzhen", "A100-80GB", 1, 8, "34.741625"),  # 277.933 / 8
    ("ecs.gn7i-c8g1.2xlarge", "cn-beijing", "A10-24GB", 1, 1, "9.5326"),
    ("ecs.gn7i-c8g1.2xlarge", "cn-wulanchabu", "A10-24GB", 1, 1, "8.5794"),   # Ulanqab: 10 % off
    ("ecs.gn6v-c8g1.2xlarge", "cn-beijing", "V100-16GB", 1, 1, "26.46"),
    ("ecs.gn6e-c12g1.3xlarge", "cn-hongkong", "V100-32GB", 1, 1, "29.142"),
    ("ecs.gn6i-c4g1.xlarge", "cn-zhangjiakou", "T4-16GB", 1, 1, "10.46"),
    ("ecs.vgn7i-vws-m12.3xlarge", "cn-shenzhen", "A10-24GB", Decimal("0.5"), 1, "16.102018"),
])
def test_cards_normalize_from_the_family_table(offers, sku, region, model, fraction, count,
                                               per_gpu_hour):
    row = normalize_offer(by(offers, sku, region)["hour"])
    assert (row["gpu_model"], row["gpu_fraction"], row["gpu_count"]) == (model, fraction, count)
    assert row["price_per_gpu_hour_cny"] == Decimal(per_gpu_hour)
    assert row["region_code"] == region


def test_family_missing_from_the_table_is_quarantined_with_its_name(offers):
    gn5 = [o for o in offers if o["sku"] == "ecs.gn5-c4g1.xlarge"]
    assert len(gn5) == 1
    for offer in gn5:
        assert (offer["gpu_text"], offer["gpu_count"]) == ("ecs.gn5-c4g1.xlarge", UNMAPPED_COUNT)
        # the card stage fails first, on the instance type the spider passed on as the card
        with pytest.raises(Exception, match=r"^card: unknown GPU model .*'ecs\.gn5-c4g1\.xlarge'"):
            normalize_offer(offer)


def test_a_sixth_of_an_a10_is_quarantined_not_guessed(offers):
    offer = by(offers, "ecs.vgn7i-vws-m4.xlarge", "cn-shenzhen")["hour"]
    assert offer["gpu_text"] == "NVIDIA A10 24GB 1/6"
    with pytest.raises(Exception, match="1/6"):
        normalize_offer(offer)


def test_regions_resolve_to_the_records_provinces(offers):
    rows = []
    for offer in offers:
        with contextlib.suppress(Quarantined):   # the slices and gn5 (tested above)
            rows.append(normalize_offer(offer))
    assert {r["province_or_state"] for r in rows} == {
        "Beijing", "Zhejiang", "Guangdong", "Hebei", "Inner Mongolia", "Jiangsu", "Shandong",
        "Sichuan", "Hong Kong"}


# ---- unhappy paths of the file -------------------------------------------------------------
GOOD = {"hours": [{"price": "1.50", "period": "1"}], "months": [{"price": "700", "period": "1"}]}


@pytest.mark.parametrize(("entries", "expected"), [
    ([{"price": "1.5", "period": "1"}], ("1.5", "")),
    ([{"price": "9", "period": "3"}, {"price": "3.1", "period": "1"}], ("3.1", "")),
    ([{"price": "9", "period": 1}], ("9", "")),              # a number period is read as text
    ([{"price": "9", "period": "2"}], (None, "no_period_one")),
    ([{"price": None, "period": "1"}], (None, "null_price")),
    ([{"price": "", "period": "1"}], (None, "null_price")),
    ([], (None, "not_sold")),
    (None, (None, "not_sold")),
    ("1.5", (None, "not_sold")),
])
def test_price_of_one_period(entries, expected):
    assert price_of_one_period(entries) == expected


def test_unhappy_rows_are_skipped_and_counted():
    spider = new_spider()
    body = {"currency": "CNY", "version": "9", "pricingInfo": {
        "cn-beijing::ecs.gn7i-c8g1.2xlarge::vpc::linux::optimized": GOOD,
        "cn-beijing::ecs.gn7i-c16g1.4xlarge::vpc::linux::optimized": {
            "hours": [{"price": None, "period": "1"}], "months": [{"price": "9", "period": "6"}]},
        "cn-beijing::ecs.gn7i-c8g1.2xlarge": GOOD,                 # renamed key layout
        "cn-beijing::ecs.gn7i-c32g1.8xlarge::vpc::linux::optimized": "not an object",
    }}
    offers = list(spider.parse_price_file(price_file_response(body)))
    assert [(o["sku"], o["billing_period"]) for o in offers] == [
        ("ecs.gn7i-c8g1.2xlarge", "hour"), ("ecs.gn7i-c8g1.2xlarge", "month")]
    stats = spider.crawler.stats.get_stats()
    assert stats["alibaba_cn/null_price_skipped"] == 1
    assert stats["alibaba_cn/no_period_one_skipped"] == 1
    assert stats["alibaba_cn/malformed_keys_skipped"] == 1


@pytest.mark.parametrize("body", [
    {"currency": "CNY", "pricing_info": {}},              # renamed field
    {"currency": "CNY", "pricingInfo": []},
    {"pricingInfo": {}},                                  # no currency
    ["not", "an", "object"],
])
def test_a_changed_file_fails_loudly(body):
    with pytest.raises(ValueError, match="no pricingInfo object or currency"):
        list(new_spider().parse_price_file(price_file_response(body)))


def test_an_empty_file_yields_nothing_and_the_monitor_catches_it():
    assert list(new_spider().parse_price_file(
        price_file_response({"currency": "CNY", "pricingInfo": {}}))) == []
    assert AlibabaCNSpider.min_offers == 20


# ---- the family table ----------------------------------------------------------------------
def test_family_table_rows_name_a_card_a_count_and_evidence():
    rows = gpu_table(GPU_TABLE)
    assert {r["evidence"] for r in rows.values()} == {"doc", "weak"}
    for itype, row in rows.items():
        assert GPU_TYPE_RE.match(itype), itype
        assert itype.startswith(f"ecs.{row['family'].split('-')[0]}"), itype
        assert int(row["gpu_count"]) >= 1 and row["source"]
    weak = {r["family"] for r in rows.values() if r["evidence"] == "weak"}
    assert weak == {"gn7e", "gn7", "ebmgn8v"}   # the pages name only their memory, not the card
    assert rows["ecs.ebmgn8v.48xlarge"]["gpu_text"] == "NVIDIA H20 96GB"   # 96GB: not an H800
    assert not [t for t in rows if t.startswith("ecs.gn5")]   # P100: no cited row, quarantined


@pytest.mark.parametrize(("itype", "gpu"), [
    ("ecs.gn7i-c8g1.2xlarge", True), ("ecs.ebmgn8v.48xlarge", True),
    ("ecs.vgn7i-vws-m4.xlarge", True),
    ("ecs.sgn7i-vws-m2.xlarge", True), ("ecs.sccgn7ex.32xlarge", True), ("ecs.gn8is.2xlarge", True),
    ("ecs.g7.large", False), ("ecs.c7.xlarge", False), ("ecs.ebmg7.32xlarge", False),
    ("ecs.r8i.large", False), ("ecs.t6-c1m1.large", False),
])
def test_gpu_family_rule(itype, gpu):
    assert bool(GPU_TYPE_RE.match(itype)) is gpu


# ---- a crawl over the replay server --------------------------------------------------------
@pytest.fixture(scope="module")
def crawl(replay_server, tmp_path_factory):
    return run_crawl("alibaba_cn", replay_server.url, tmp_path_factory.mktemp("alibaba"))


def test_public_crawl_passes_its_monitor_in_two_requests(crawl):
    offers, verdict = crawl
    assert verdict["passed"], verdict["failures"]
    fetched = [f["url"] for f in verdict["fetches"] if not f["url"].endswith("/robots.txt")]
    assert fetched == [PRICING_PAGE, FILE_URL]
    assert len(offers) == 127 and {o["url"] for o in offers} == {FILE_URL}
