"""Regional sources configured in spiders/vendors/idc_tables.toml (no code): each parses its
recorded page.

Two kinds. The templates (idc_nanjing, idc_ulanqab, idc_guian, idc_northwest, and idc_sinnet_bj
in test_idc_tables.py) are modeled pages with illustrative prices and no real operator behind
them (`template = true`): they stay as HTML-table fixtures and are marked so that signals leave
them out. 面议 cells still yield offers, which normalization quarantines at the price stage; 售罄
rows are kept as available=False. The real operators (university and research computing centres
with a public price table, at the end of this file) are published prices: each test below names
the row of the page it checks.
"""

import functools
import json
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from scrapy.http import HtmlResponse, Request

from pipelines.normalize import Quarantined, normalize_offer
from spiders.base import HtmlTableSpider
from spiders.layout import SNAPSHOT_DIR
from spiders.registry import spider_class
from tests.helpers.normalized import normalized
from tests.helpers.responses import file_response, snapshot_entries
from tests.helpers.spider_contract import check_contract

SLUGS = ("idc_nanjing", "idc_ulanqab", "idc_guian", "idc_northwest")


def _parse(slug: str, response=None) -> list:
    spider = spider_class(slug)(crawl_id="test")
    return list(spider.parse(response or file_response(slug, "gpu_price.html")))


@pytest.fixture(scope="module")
def by_slug() -> dict[str, list]:
    """{slug: the offers of its recorded page}."""
    return {slug: _parse(slug) for slug in SLUGS}


def _prices(by_slug: dict[str, list], slug: str, gpu_text: str,
            region: str | None = None) -> dict[str, str]:
    return {o["billing_period"]: o["price_text"] for o in by_slug[slug]
            if o["gpu_text"] == gpu_text and (region is None or o["region_text"] == region)}


def _normalized(by_slug: dict[str, list],
                slug: str) -> tuple[list[dict], list[Quarantined]]:
    ok, bad = normalized(by_slug[slug])
    return ok, [why for _, why in bad]


# ---- counts ---------------------------------------------------------------------------------

@pytest.mark.parametrize("slug, offers, negotiable, sold_out", [
    ("idc_nanjing", 20, 1, 2),     # 10 rows x 2 periods; H800 整机 monthly 面议; H100 售罄
    ("idc_ulanqab", 22, 2, 2),     # 11 rows; H100 整卡 面议 twice; H800 整机 售罄
    ("idc_guian", 22, 2, 2),       # 11 rows (2 H20); H800 整机 面议 twice; RTX 4090 整机 售罄
    ("idc_northwest", 22, 2, 4),   # 12 rows, two MIG rows hourly only; 0/16 and 售罄 unavailable
])
def test_offer_counts(slug, offers, negotiable, sold_out, by_slug):
    assert len(by_slug[slug]) == offers
    assert sum(o["price_text"] == "面议" for o in by_slug[slug]) == negotiable
    assert sum(o["available"] is False for o in by_slug[slug]) == sold_out


@pytest.mark.parametrize("slug", SLUGS)
def test_offers_meet_the_spider_contract(slug, by_slug):
    check_contract(slug, by_slug[slug])   # 面议 their one quarantine; observed at the capture


# ---- exact fields per IDC -------------------------------------------------------------------

def test_nanjing_whole_card_slices_and_server(by_slug):
    assert _prices(by_slug, "idc_nanjing", "NVIDIA A100 80G SXM4 整卡") == {
        "hour": "¥32.00/时", "month": "¥9,800/月"}
    assert _prices(by_slug, "idc_nanjing", "NVIDIA A100 80G SXM4 MIG 2g.20gb") == {
        "hour": "¥10.80/时", "month": "¥3,200/月"}
    server = [o for o in by_slug["idc_nanjing"] if o["gpu_text"] == "NVIDIA A100 80G SXM4 整机"]
    assert {(o["gpu_count"], o["sku"]) for o in server} == {("8", "NVIDIA A100 80G SXM4 整机 | 8")}
    assert {o["region_text"] for o in by_slug["idc_nanjing"]} == {"南京"}
    assert {o["vendor"] for o in by_slug["idc_nanjing"]} == {
        "template (no public price page found): 南京某IDC (Jiangsu)"}


def test_nanjing_negotiable_monthly_price_next_to_an_hourly_one(by_slug):
    assert _prices(by_slug, "idc_nanjing", "NVIDIA H800 80G SXM5 整机") == {
        "hour": "¥340.00/时", "month": "面议"}


def test_ulanqab_vgpu_slice_row(by_slug):
    vgpu = [o for o in by_slug["idc_ulanqab"] if "切分" in o["gpu_text"]]
    assert [(o["gpu_text"], o["billing_period"], o["price_text"]) for o in vgpu] == [
        ("NVIDIA A100 20G切分 (vGPU)", "hour", "¥12.80/时"),
        ("NVIDIA A100 20G切分 (vGPU)", "month", "¥2,500/月")]


def test_ulanqab_sold_out_server_and_region(by_slug):
    server = [o for o in by_slug["idc_ulanqab"] if o["gpu_text"] == "NVIDIA H800 80G SXM5 整机"]
    assert [(o["price_text"], o["available"]) for o in server] == [
        ("¥400.00/时", False), ("¥79,000/月", False)]
    assert {o["region_text"] for o in by_slug["idc_ulanqab"]} == {"乌兰察布"}


def test_guian_own_header_texts_map_to_the_same_fields(by_slug):
    mig = [o for o in by_slug["idc_guian"] if o["gpu_text"] == "NVIDIA A100 80G SXM4 MIG 3g.40gb"]
    assert [(o["billing_period"], o["price_text"], o["gpu_count"], o["available"])
            for o in mig] == [("hour", "¥30.80/时", "1", True), ("month", "¥5,600/月", "1", True)]
    assert {o["region_text"] for o in by_slug["idc_guian"]} == {"贵安新区"}


def test_guian_stock_column(by_slug):
    by_text = {o["gpu_text"]: o["available"] for o in by_slug["idc_guian"]}
    assert by_text["GeForce RTX 4090 24G 整机"] is False   # 售罄
    assert by_text["NVIDIA A100 40G PCIe 整卡"] is True     # 紧张: scarce, still rentable
    assert by_text["NVIDIA A100 80G SXM4 整卡"] is True     # 可租


# ---- the different layout: two cities in one table, header row inside tbody ------------------

@pytest.fixture(scope="module")
def northwest(by_slug) -> list:
    return by_slug["idc_northwest"]


def test_northwest_region_comes_from_each_row(northwest, by_slug):
    assert sum(o["region_text"] == "庆阳" for o in northwest) == 11
    assert sum(o["region_text"] == "中卫" for o in northwest) == 11
    assert _prices(by_slug, "idc_northwest", "A100 80G SXM4 单卡", "庆阳") == {
        "hour": "44.00元/小时", "month": "8,400元/月"}
    assert _prices(by_slug, "idc_northwest", "A100 80G SXM4 单卡", "中卫") == {
        "hour": "45.50元/小时", "month": "8,600元/月"}


def test_northwest_card_names_with_line_breaks_are_joined(northwest):
    assert {o["gpu_text"] for o in northwest} == {
        "A100 80G SXM4 单卡", "A100 80G SXM4 MIG 2g.20gb", "A100 80G SXM4 8卡整机",
        "A100 40G PCIe 单卡", "H800 80G SXM5 单卡", "H100 80G SXM5 单卡", "H800 80G SXM5 8卡整机",
        "A100 80G SXM4 MIG 3g.40gb", "RTX 4090 24G 单卡", "RTX 4090 24G 8卡整机"}


def test_northwest_slices_without_a_monthly_price_yield_only_hourly_offers(by_slug):
    assert _prices(by_slug, "idc_northwest", "A100 80G SXM4 MIG 2g.20gb") == {
        "hour": "16.00元/小时"}
    assert _prices(by_slug, "idc_northwest", "A100 80G SXM4 MIG 3g.40gb") == {
        "hour": "22.00元/小时"}


def test_northwest_idle_of_total_stock(northwest):
    stock = {(o["gpu_text"], o["region_text"]): o["available"] for o in northwest}
    assert stock[("H800 80G SXM5 单卡", "庆阳")] is False    # 0/16
    assert stock[("H100 80G SXM5 单卡", "庆阳")] is False    # 售罄
    assert stock[("A100 80G SXM4 8卡整机", "庆阳")] is True  # 空闲 2/4
    assert {o["gpu_count"] for o in northwest if "8卡整机" in o["gpu_text"]} == {"8"}


def test_northwest_header_row_and_note_row_yield_no_offer(northwest):
    # 14 body rows: the th-only header row and the colspan note row give nothing, 12 rows do.
    rows = file_response("idc_northwest", "gpu_price.html").css("table.gpu-zone tbody tr")
    assert len(rows) == 14
    assert len({(o["gpu_text"], o["region_text"]) for o in northwest}) == 12
    assert not any("注" in o["region_text"] or "地区" in o["region_text"] for o in northwest)


def test_northwest_needs_its_header_selector():
    # Without `header` the base class looks for `thead th`, which this page does not have.
    cls = spider_class("idc_northwest")
    no_header = type("NoHeader", (cls,), {"header": None})(crawl_id="test")
    with pytest.raises(ValueError, match=r"idc_northwest: table headers .* not found"):
        list(no_header.parse(file_response("idc_northwest", "gpu_price.html")))


def test_northwest_changed_layout_fails_loudly():
    response = file_response("idc_northwest", "gpu_price.html")
    changed = response.replace(body=response.body.replace("地区".encode(), "节点".encode()))
    with pytest.raises(ValueError, match=r"idc_northwest: table headers \['地区'\] not found"):
        _parse("idc_northwest", changed)


# ---- configuration only ---------------------------------------------------------------------

@pytest.mark.parametrize("slug", SLUGS)
def test_idc_is_configuration_only(slug):
    cls = spider_class(slug)
    assert cls.__module__ == "spiders.vendors.idc_tables"
    assert cls.__bases__ == (HtmlTableSpider,)
    # No behaviour of its own: every method comes from the base class.
    assert not [name for name, value in vars(cls).items() if callable(value)]
    assert cls.name == slug and cls.vendor_kind == "idc"


@pytest.mark.parametrize("slug", SLUGS)
def test_start_url_is_the_recorded_url(slug):
    assert spider_class(slug).start_urls == [e["url"] for e in snapshot_entries(slug)]


# ---- invariants over every offer ------------------------------------------------------------

@pytest.mark.parametrize("slug", SLUGS)
def test_every_offer_keeps_the_pages_spelling(slug, by_slug):
    # The page's own spelling is kept: ¥32.00/时 and ¥9,800/月, or 44.00元/小时 and 8,400元/月.
    suffix = {"hour": "元/小时" if slug == "idc_northwest" else "/时", "month": "/月"}
    for offer in by_slug[slug]:
        assert offer["offer_kind"] == "on_demand"
        assert offer["billing_period"] in ("hour", "month")
        assert (offer["price_text"] == "面议"
                or offer["price_text"].endswith(suffix[offer["billing_period"]]))
        assert offer["gpu_count"] in ("1", "8")
        assert offer["sku"] == f"{offer['gpu_text']} | {offer['gpu_count']}"
        assert offer["region_text"] in ("南京", "乌兰察布", "贵安新区", "庆阳", "中卫")
        assert offer["available"] in (True, False)


# ---- normalization: only 面议 is quarantined ------------------------------------------------

@pytest.mark.parametrize("slug, provinces", [
    ("idc_nanjing", {"Jiangsu"}), ("idc_ulanqab", {"Inner Mongolia"}), ("idc_guian", {"Guizhou"}),
    ("idc_northwest", {"Gansu", "Ningxia"}),
])
def test_everything_but_negotiable_prices_normalizes(slug, provinces, by_slug):
    ok, bad = _normalized(by_slug, slug)
    negotiable = ("price", "not a price: 面议 (negotiable)")
    assert [(q.stage, q.reason) for q in bad] == [negotiable] * len(bad)
    assert len(ok) + len(bad) == len(by_slug[slug]) and len(bad) >= 1
    assert {r["province_or_state"] for r in ok} == provinces
    assert not any(r["is_tier1_city"] for r in ok)


@pytest.mark.parametrize("slug, gpu_text, period, fraction, per_gpu_hour_cny", [
    # 230/8, 12.80/0.25, 30.80/0.5
    ("idc_nanjing", "NVIDIA A100 80G SXM4 整机", "hour", Decimal("1"), Decimal("28.75")),
    ("idc_ulanqab", "NVIDIA A100 20G切分 (vGPU)", "hour", Decimal("0.25"), Decimal("51.2")),
    ("idc_guian", "NVIDIA A100 80G SXM4 MIG 3g.40gb", "hour", Decimal("0.5"), Decimal("61.6")),
    ("idc_northwest", "RTX 4090 24G 8卡整机", "month", Decimal("1"), Decimal("7600") / 730 / 8),
])
def test_normalized_per_gpu_hour(slug, gpu_text, period, fraction, per_gpu_hour_cny, by_slug):
    ok, _ = _normalized(by_slug, slug)
    [row] = [r for r in ok
             if r["sku"].startswith(gpu_text + " |") and r["billing_period"] == period]
    assert row["gpu_fraction"] == fraction
    assert row["price_per_gpu_hour_cny"] == per_gpu_hour_cny.quantize(Decimal("0.000001"))


# ---- templates are marked; real operators are not ------------------------------------------

TEMPLATES = ("idc_sinnet_bj", "idc_nanjing", "idc_ulanqab", "idc_guian", "idc_northwest")
REAL = ("idc_pku_bj", "idc_cibr_bj", "idc_cuhksz_sz", "idc_srils_sz", "idc_hkustgz_gz",
        "idc_ustc_hf", "idc_ikkem_xm", "compshare_cn", "featurize_cn")


def test_templates_are_marked_and_named_as_templates():
    from spiders.vendors.idc_tables import template_sources
    assert template_sources() == sorted(TEMPLATES)
    for slug in TEMPLATES:
        cls = spider_class(slug)
        assert cls.is_template is True
        assert cls.vendor.startswith("template (no public price page found): ")
        meta = json.loads((SNAPSHOT_DIR / slug / "manifest.json").read_text(encoding="utf-8"))
        assert meta["price_basis"] == "illustrative" and meta["prices_as_of"] is None


@pytest.mark.parametrize("slug", REAL)
def test_real_operators_are_not_templates_and_read_real_hosts(slug):
    cls = spider_class(slug)
    assert cls.is_template is False
    assert not any(".example" in url for url in cls.start_urls)
    meta = json.loads((SNAPSHOT_DIR / slug / "manifest.json").read_text(encoding="utf-8"))
    assert meta["price_basis"] == "published" and meta["prices_as_of"]
    assert cls.start_urls == [e["url"] for e in snapshot_entries(slug)]


def test_template_key_must_be_a_boolean(tmp_path):
    from spiders.vendors.idc_tables import load_table_spiders
    config = tmp_path / "t.toml"
    config.write_text('[html_table.x]\nvendor = "x"\nvendor_kind = "idc"\nrows = "tr"\n'
                      'template = "yes"\n', encoding="utf-8")
    with pytest.raises(ValueError, match="template must be true or false"):
        load_table_spiders(config)


# ---- real operators: each configured table parses its recorded page -------------------------

REAL_FILES = {"idc_pku_bj": "guide_6.html", "idc_cibr_bj": "hpc_info.html",
              "idc_cuhksz_sz": "page_263.html", "idc_srils_sz": "pricing.html",
              "idc_hkustgz_gz": "prices_phase3.html", "idc_ustc_hf": "cluster.html",
              "idc_ikkem_xm": "partition.html"}


@functools.cache
def real_offers(slug: str) -> tuple:
    return tuple(_parse(slug, file_response(slug, REAL_FILES[slug])))


def _outcome(offer) -> tuple:
    try:
        row = normalize_offer(dict(offer))
    except Quarantined as exc:
        return ("quarantined", exc.stage, exc.reason)
    return ("ok", row["gpu_model"], row["price_per_gpu_hour_cny"], row["province_or_state"],
            row["city"], row["is_tier1_city"])


@pytest.mark.parametrize("slug, count", [
    ("idc_pku_bj", 11), ("idc_cibr_bj", 1), ("idc_cuhksz_sz", 5), ("idc_srils_sz", 2),
    ("idc_hkustgz_gz", 2), ("idc_ustc_hf", 4), ("idc_ikkem_xm", 1),
])
def test_real_operator_offer_counts(slug, count):
    offers = real_offers(slug)
    assert len(offers) == count >= spider_class(slug).min_offers
    assert len({(o["sku"], o["billing_period"]) for o in offers}) == count


@pytest.mark.parametrize("slug", REAL_FILES)
def test_real_operator_offers_meet_the_spider_contract(slug):
    check_contract(slug, list(real_offers(slug)))


def test_pku_reads_gpu_rows_only_with_merged_cells_filled_in():
    offers = real_offers("idc_pku_bj")
    # keep_rows: the CPU rows (核心小时) are not read; rowspan: GPU410 takes the merged
    # 费用名称, 单位 and 分区名 of GPU400's row
    assert [o["sku"] for o in offers[3:6]] == ["GPU40G | 1 | GPU400", "GPU40G | 1 | GPU410",
                                               "GPU40G | 1 | GPU420"]
    row = offers[4]["vendor_data"]["row"]
    assert (row["费用名称"], row["单位"], row["单价/元"], row["QOS"], row["GPU数"]) == (
        "GPU节点机时费", "卡小时", "5.00", "normal", "4")
    assert offers[4]["price_text"] == "5.00 元 卡小时" and offers[4]["price_per_card"] is True
    # the node's GPU数 is not the offer's count: a price is one card-hour
    assert {o["gpu_count"] for o in offers} == {None}
    assert [o["price_text"].split()[0] for o in offers[:3]] == ["4.00", "6.00", "8.00"]


NO_EVIDENCE = (" (a partition, queue or class of cards) names no card; no public evidence maps "
               "it to one")


def test_pku_partitions_name_no_card_so_every_offer_is_quarantined():
    assert {_outcome(o) for o in real_offers("idc_pku_bj")} == {
        ("quarantined", "card", f"'{p}'{NO_EVIDENCE}") for p in ("GPU80G", "GPU40G", "GPU", "LIFE")}


@pytest.mark.parametrize("slug, gpu_text, outcome", [
    # CUHK-Shenzhen: one card per rate; two cards under one rate are an offer each (A100 and
    # A800 below); "others" under one rate is not guessed
    ("idc_cuhksz_sz", "V100", ("ok", "V100-16GB", Decimal("1.500000"), "Guangdong", "Shenzhen",
                               True)),
    ("idc_cuhksz_sz", "A100", ("ok", "A100-40GB", Decimal("2.000000"), "Guangdong", "Shenzhen",
                               True)),
    ("idc_cuhksz_sz", "A800", ("ok", "A800-80GB", Decimal("2.000000"), "Guangdong", "Shenzhen",
                               True)),
    ("idc_cuhksz_sz", "GPUs other than 2080Ti, V100, A100 and A800", (
        "quarantined", "card", f"'GPUs other than 2080Ti, V100, A100 and A800'{NO_EVIDENCE}")),
    ("idc_cuhksz_sz", "2080Ti", ("ok", "RTX2080TI-11GB", Decimal("0.500000"), "Guangdong",
                                 "Shenzhen", True)),
    # SRILS: the external standard price (标准价 (院外)) per 卡·时
    ("idc_srils_sz", "GPU (4090)", ("ok", "RTX4090-24GB", Decimal("5.000000"), "Guangdong",
                                    "Shenzhen", True)),
    ("idc_srils_sz", "GPU (高性能)", ("quarantined", "card", f"'GPU (高性能)'{NO_EVIDENCE}")),
    # CIBR: the node type names no card, the price's unit does (RMB/V100·HOUR)
    ("idc_cibr_bj", "GPU node", ("ok", "V100-16GB", Decimal("1.000000"), "Beijing", "Beijing",
                                 True)),
    # HKUST(GZ): no public text names the ACD platform's card
    ("idc_hkustgz_gz", "GPU(ACD)", ("quarantined", "card", f"'GPU(ACD)'{NO_EVIDENCE}")),
    ("idc_hkustgz_gz", "GPU Server (ACD)", ("quarantined", "card",
                                            f"'GPU Server (ACD)'{NO_EVIDENCE}")),
    # USTC's and IKKEM's mapped partitions: tests/spiders/test_idc_centres.py
])
def test_real_operator_rows_normalize_as_the_page_allows(slug, gpu_text, outcome):
    [offer] = [o for o in real_offers(slug) if o["gpu_text"] == gpu_text]
    assert _outcome(offer) == outcome


@pytest.mark.parametrize("slug, gpu_text, tariff_cells, offered", [
    # the comparable list price is the offer; the other tariffs stay in the row as written
    ("idc_srils_sz", "GPU (4090)", {"院内价 (6折)": "¥ 3.00", "合作价 (8折)": "¥ 4.00"},
     "¥ 5.00"),
    ("idc_srils_sz", "GPU (高性能)", {"院内价 (6折)": "¥ 15.00", "合作价 (8折)": "¥ 20.00"},
     "¥ 25.00"),
    ("idc_hkustgz_gz", "GPU(ACD)", {"Exclusive (Official)": "3.75 CNY/Card/Hour",
                                    "Emergency (Official)": "6.00 CNY/Card/Hour"},
     "2.40 CNY/Card/Hour"),
    ("idc_cibr_bj", "GPU node", {"Receivable price(RMB)": "Price×tiered rate"},
     "1.00 RMB/V100·HOUR"),
])
def test_tariffs_are_kept_as_the_page_writes_them(slug, gpu_text, tariff_cells, offered):
    [offer] = [o for o in real_offers(slug) if o["gpu_text"] == gpu_text]
    assert offer["price_text"] == offered and offer["billing_period"] == "hour"
    assert tariff_cells.items() <= offer["vendor_data"]["row"].items()


def test_srils_and_cuhk_read_only_per_card_rows():
    assert {o["vendor_data"]["row"]["计费单位"] for o in real_offers("idc_srils_sz")} == {"卡·时"}
    assert all("per Card" in o["price_text"] for o in real_offers("idc_cuhksz_sz"))


def test_hkust_node_rental_is_a_daily_price():
    [node] = [o for o in real_offers("idc_hkustgz_gz") if o["billing_period"] == "day"]
    assert node["price_text"] == "720.00 CNY/Machine/Day"


# ---- effective dates land as the observation date -------------------------------------------

def test_hkust_offers_carry_the_pages_effective_date():
    offers = real_offers("idc_hkustgz_gz")
    assert {o["effective_at"] for o in offers} == {"2025-09-01"}
    assert {o["observed_at"] for o in offers} == {"2026-11-30T09:00:00Z"}   # the crawl's, kept


def test_other_sources_carry_no_effective_date():
    for slug in ("idc_pku_bj", "idc_srils_sz", "idc_cuhksz_sz", "idc_ustc_hf", "idc_ikkem_xm"):
        assert not any(o.get("effective_at") for o in real_offers(slug))


def _a_priced_offer(**changes) -> dict:
    [offer] = [o for o in real_offers("idc_srils_sz") if o["gpu_text"] == "GPU (4090)"]
    return {**dict(offer), **changes}


@pytest.mark.parametrize("effective_at, observed", [
    (None, datetime(2026, 11, 30, 9, tzinfo=UTC)),                        # the crawl's time
    ("", datetime(2026, 11, 30, 9, tzinfo=UTC)),
    ("2025-09-01", datetime(2025, 9, 1, tzinfo=UTC)),                     # a date: midnight UTC
    ("2025-11-11T00:00:00+08:00", datetime(2025, 11, 10, 16, tzinfo=UTC)),
    ("2025-12-31T08:00:00Z", datetime(2025, 12, 31, 8, tzinfo=UTC)),
])
def test_effective_date_is_the_observation_date(effective_at, observed):
    row = normalize_offer(_a_priced_offer(effective_at=effective_at))
    assert row["observed_at"] == observed
    assert row["observed_hour"] == observed.replace(minute=0, second=0, microsecond=0)


@pytest.mark.parametrize("bad", ["September 1, 2025", "2025-13-01", "soon"])
def test_an_effective_date_that_is_not_a_date_is_quarantined(bad):
    with pytest.raises(Quarantined) as caught:
        normalize_offer(_a_priced_offer(effective_at=bad))
    assert caught.value.stage == "effective_at"


def test_a_configured_effective_date_reaches_every_offer(tmp_path):
    from spiders.vendors.idc_tables import load_table_spiders
    config = tmp_path / "t.toml"
    config.write_text(
        '[html_table.dated]\nvendor = "d"\nvendor_kind = "idc"\nrows = "table tbody tr"\n'
        'columns = { gpu_text = "卡型" }\nprices = { hour = "按量" }\nregion = "北京"\n'
        'page_unit = "元"\neffective_at = "2025-11-11"\n', encoding="utf-8")
    cls = load_table_spiders(config)["dated"]
    page = ("<table><thead><tr><th>卡型</th><th>按量</th></tr></thead><tbody>"
            "<tr><td>A100 80G</td><td>10.75</td></tr></tbody></table>").encode()
    response = HtmlResponse(url="https://d.test/p", body=page, encoding="utf-8",
                            request=Request("https://d.test/p"))
    [offer] = cls(crawl_id="t").parse(response)
    assert offer["effective_at"] == "2025-11-11" and offer["price_text"] == "10.75 元"
    assert normalize_offer(dict(offer))["observed_at"] == datetime(2025, 11, 11, tzinfo=UTC)
