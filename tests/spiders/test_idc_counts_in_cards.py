"""Issue 12, done when: a new regional IDC page, added by configuration alone, whose card cells
carry the GPU count ("A100 80G ×8", "8卡 H800 NVLink") and whose slices are written by memory
share ("A100 80G 切分 40G") is normalized right. The page is a fixture written for this test
(tests/spiders/fixtures/idc_counts_in_cards.html), the configuration a idc_tables.toml entry.

Also here: how the HTML-table base reads counts (a count column wins, texts fill in, conflicts
are quarantined), per-card columns and struck-through prices.
"""

from decimal import Decimal
from pathlib import Path

import pytest
from scrapy.http import HtmlResponse, Request

from pipelines.normalize import Quarantined, normalize_offer
from spiders.base import HtmlTableSpider
from spiders.replay_server import CAPTURED_AT_HEADER
from spiders.vendors.idc_tables import load_table_spiders

FIXTURE = Path(__file__).parent / "fixtures" / "idc_counts_in_cards.html"
URL = "https://www.langfang-idc.example/gpu/price.html"
CONFIG = """
[html_table.idc_langfang]
note = "廊坊某IDC (Hebei): counts in the card cells, slices by memory share, per-card month."
vendor = "廊坊某IDC (Hebei)"
vendor_kind = "idc"
url_verified = false
start_urls = ["https://www.langfang-idc.example/gpu/price.html"]
rows = "table#price tbody tr"
region = "廊坊"
columns = { gpu_text = "产品", config_text = "配置", available = "库存" }
prices = { hour = "按小时", month = "包月（元/卡/月）" }
min_offers = 8
"""


def _response(body: bytes | None = None) -> HtmlResponse:
    return HtmlResponse(url=URL, body=body or FIXTURE.read_bytes(), encoding="utf-8",
                        request=Request(URL), headers={CAPTURED_AT_HEADER: "2026-11-30T09:00:00Z"})


def _spider_class(tmp_path_factory, extra: str = "") -> type[HtmlTableSpider]:
    path = tmp_path_factory.mktemp("config") / "idc_tables.toml"
    path.write_text(CONFIG + extra, encoding="utf-8")
    return load_table_spiders(path)["idc_langfang"]


def _normalized(offers) -> tuple[dict, dict]:
    ok, bad = {}, {}
    for offer in offers:
        key = (offer["gpu_text"], offer["billing_period"])
        try:
            ok[key] = normalize_offer(dict(offer))
        except Quarantined as exc:
            bad[key] = (exc.stage, exc.reason)
    return ok, bad


@pytest.fixture(scope="module")
def offers(tmp_path_factory):
    spider = _spider_class(tmp_path_factory)(crawl_id="test")
    return list(spider.parse(_response()))


def per_month(amount: str, fraction: str = "1") -> Decimal:
    return (Decimal(amount) / 730 / Decimal(fraction)).quantize(Decimal("0.000001"))


# gpu_text, period -> model, count, fraction, CNY per GPU-hour
EXPECTED = [
    ("A100 80G ×8", "hour", "A100-80GB", 8, "1", Decimal("28.75")),              # 230 / 8
    ("A100 80G ×8", "month", "A100-80GB", 8, "1", per_month("6000")),          # per card: not / 8
    ("8卡 H800 NVLink", "hour", "H800-80GB", 8, "1", Decimal("45")),            # 360 / 8
    ("8卡 H800 NVLink", "month", "H800-80GB", 8, "1", per_month("9000")),
    ("A100 80G 单卡", "hour", "A100-80GB", 1, "1", Decimal("32")),
    ("A100 80G 单卡", "month", "A100-80GB", 1, "1", per_month("9800")),
    ("A100 80G 切分 40G", "hour", "A100-80GB", 1, "0.5", Decimal("36")),        # 18 / 0.5
    ("A100 80G 切分 40G", "month", "A100-80GB", 1, "0.5", per_month("5200", "0.5")),
    ("A100 80G 切分 20G", "hour", "A100-80GB", 1, "0.25", Decimal("40")),       # 10 / 0.25
    ("A100 80G 切分 20G", "month", "A100-80GB", 1, "0.25", per_month("2900", "0.25")),
    ("RTX 4090 24G ×4", "hour", "RTX4090-24GB", 4, "1", Decimal("2.1")),         # 8.40 / 4
    ("RTX 4090 24G ×4", "month", "RTX4090-24GB", 4, "1", per_month("1000")),
    ("H800 80G SXM5 单卡", "hour", "H800-80GB", 1, "1", Decimal("46")),   # not the struck 52
    ("H800 80G SXM5 单卡", "month", "H800-80GB", 1, "1", per_month("10500")),
]


@pytest.mark.parametrize(("gpu_text", "period", "model", "count", "fraction", "cny"), EXPECTED)
def test_page_is_normalized_right_by_configuration_alone(offers, gpu_text, period, model, count,
                                                         fraction, cny):
    ok, _ = _normalized(offers)
    row = ok[(gpu_text, period)]
    card = (row["gpu_model"], row["gpu_count"], row["gpu_fraction"])
    assert card == (model, count, Decimal(fraction))
    assert row["price_per_gpu_hour_cny"] == cny
    assert (row["province_or_state"], row["city"]) == ("Hebei", "Langfang")


def test_every_offer_is_read_or_quarantined_for_a_reason(offers):
    ok, bad = _normalized(offers)
    assert len(offers) == 16 and len(ok) == len(EXPECTED)
    assert bad == {
        ("H100 80G SXM5", "hour"): ("range", "price range '¥55-65/时': the source does not declare "
                                             "which end it lists (range_end)"),
        ("H100 80G SXM5", "month"): ("price", "not a price: 面议 (negotiable)"),
    }


def test_nvlink_is_no_card_variant(offers):
    ok, _ = _normalized(offers)
    assert ok[("8卡 H800 NVLink", "hour")]["gpu_variant"] in (None, "SXM")   # never "NVL"


def test_raw_items_keep_what_the_texts_say_and_normalization_reads_them(offers):
    by_key = {(o["gpu_text"], o["billing_period"]): o for o in offers}
    # the spider reads nothing out of a text: no count, range ends or original price
    assert by_key[("A100 80G ×8", "hour")].get("gpu_count") is None
    assert normalize_offer(dict(by_key[("A100 80G ×8", "hour")]))["gpu_count"] == 8
    assert by_key[("A100 80G ×8", "month")]["price_text"] == "6,000 元/卡/月"   # header unit
    assert by_key[("A100 80G ×8", "month")]["price_per_card"] is True
    assert by_key[("A100 80G ×8", "hour")].get("price_per_card") is None
    h100 = by_key[("H100 80G SXM5", "hour")]
    assert not {"price_low", "price_high", "range_end"} & set(h100)
    with pytest.raises(Quarantined, match=r"price range .*55.*65"):
        normalize_offer(dict(h100))
    h800 = by_key[("H800 80G SXM5 单卡", "hour")]
    assert (h800["price_text"], h800.get("list_price_amount")) == (
        "原价 ¥52.00/时 现价 ¥46.00/时", None)
    assert by_key[("A100 80G 单卡", "hour")]["sku"] == "A100 80G 单卡 | 1"
    assert by_key[("RTX 4090 24G ×4", "hour")]["sku"] == "RTX 4090 24G ×4 | 4"


def test_a_declared_range_end_prices_the_range(tmp_path_factory):
    spider = _spider_class(tmp_path_factory, 'range_end = "low"\n')(crawl_id="test")
    ok, bad = _normalized(spider.parse(_response()))
    assert ok[("H100 80G SXM5", "hour")]["price_per_gpu_hour_cny"] == Decimal("55")
    assert list(bad) == [("H100 80G SXM5", "month")]


def test_an_unknown_range_end_fails_loudly(tmp_path_factory):
    with pytest.raises(ValueError, match="range_end must be one of"):
        _spider_class(tmp_path_factory, 'range_end = "middle"\n')(crawl_id="test")


# ---- counts in the HTML-table base: a count column wins, texts fill in, conflicts quarantine ----

def _table(rows: str, columns: dict, price_header: str = "价格") -> list:
    cls = type("TinySpider", (HtmlTableSpider,), {
        "name": "idc_tiny", "vendor": "Tiny IDC", "vendor_kind": "idc", "start_urls": [URL],
        "rows": "table tbody tr", "region": "北京", "columns": columns,
        "prices": {"hour": price_header}})
    headers = "".join(f"<th>{h}</th>" for h in ["型号", "卡数", price_header, "单位"])
    body = f"<table><thead><tr>{headers}</tr></thead><tbody>{rows}</tbody></table>"
    return list(cls(crawl_id="test").parse(_response(body.encode())))


def test_a_count_column_wins_and_the_card_text_fills_in():
    rows = ("<tr><td>A100 80G 8卡整机</td><td>8</td><td>¥240/时</td><td></td></tr>"
            "<tr><td>A100 80G ×8</td><td></td><td>¥240/时</td><td></td></tr>")
    offers = _table(rows, {"gpu_text": "型号", "gpu_count": "卡数"})
    assert [o["gpu_count"] for o in offers] == ["8", None]   # the column; no column: unset
    assert {normalize_offer(dict(o))["price_per_gpu_hour_cny"] for o in offers} == {Decimal(30)}


@pytest.mark.parametrize(("card", "count", "reason"), [
    ("A100 80G 8卡整机", "1", "gpu_count 1 but the card text says 8 GPUs"),
    ("A100 80G 4卡 ×8", "", "several GPU counts (4, 8)"),
])
def test_conflicting_counts_are_quarantined(card, count, reason):
    rows = f"<tr><td>{card}</td><td>{count}</td><td>¥240/时</td><td></td></tr>"
    [offer] = _table(rows, {"gpu_text": "型号", "gpu_count": "卡数"})
    with pytest.raises(Quarantined) as exc:
        normalize_offer(dict(offer))
    assert (exc.value.stage, reason in exc.value.reason) == ("count", True)


def test_a_unit_column_marks_the_price_per_card_and_it_is_divided_once():
    rows = "<tr><td>A100 80G ×8</td><td></td><td>30</td><td>元/卡/时</td></tr>"
    [offer] = _table(rows, {"gpu_text": "型号", "price_unit": "单位"})
    assert (offer["price_text"], offer["price_per_card"]) == ("30 元/卡/时", True)
    row = normalize_offer(dict(offer))
    assert (row["gpu_count"], row["price_per_gpu_hour_cny"]) == (8, Decimal(30))


@pytest.mark.parametrize(("header", "cell", "cny"), [
    ("单卡价格", "¥30/时", 30),           # the header says per card
    ("单卡价格", "¥30/卡/时", 30),        # header and cell both say so: still divided once
    ("整机价格", "¥240/时", 30),          # a machine price: divided by the 8 cards
    ("价格（元/卡/时）", "30", 30),       # the unit in the header, a bare number in the cell
])
def test_per_card_headers_divide_once(header, cell, cny):
    rows = f"<tr><td>A100 80G ×8</td><td></td><td>{cell}</td><td></td></tr>"
    [offer] = _table(rows, {"gpu_text": "型号"}, header)
    assert normalize_offer(dict(offer))["price_per_gpu_hour_cny"] == Decimal(cny)


# ---- every base spider reads the texts: the JSON-API base goes through the same offer() ---------

def test_json_api_spider_hands_its_texts_on_and_normalization_reads_them_once():
    from scrapy.http import TextResponse

    from spiders.base import JsonApiSpider

    class TinyApi(JsonApiSpider):
        name, vendor, vendor_kind, offers_path = "tiny_api", "Tiny", "gpu_cloud", "offers"
        start_urls = [URL]

        def parse_offer(self, offer, response):
            yield self.offer(response, sku=offer["id"], gpu_text=offer["name"], region_text="北京",
                             offer_kind="on_demand", price_text=offer["price"],
                             gpu_count=offer.get("n"))

    body = ('{"offers": [{"id": "a", "name": "8x A100 80GB", "price": "$10-12/hr excl. VAT"},'
            ' {"id": "b", "name": "8x A100 80GB", "price": "$2/hr", "n": 4}]}')
    response = TextResponse(url=URL, body=body.encode(), encoding="utf-8", request=Request(URL))
    ranged, stated = TinyApi(crawl_id="test").parse(response)
    # nothing read out of the texts by the spider: no count, range ends or tax flag
    assert not {"gpu_count", "price_low", "price_high", "tax_included"} & {
        k for k, v in ranged.items() if v is not None}
    assert stated["gpu_count"] == 4   # the API's count is kept; normalization sees the conflict
    with pytest.raises(Quarantined, match="range"):
        normalize_offer({**ranged, "observed_at": "2026-11-30T09:00:00Z"})
    with pytest.raises(Quarantined, match="gpu_count 4 but the card text says 8"):
        normalize_offer({**stated, "observed_at": "2026-11-30T09:00:00Z"})
