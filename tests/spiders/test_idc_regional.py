"""Regional IDCs configured in spiders/vendors/idc_tables.toml (no code): each parses its recorded
page.

The pages are modeled (see each manifest.json); the prices are illustrative. 面议 cells still
yield offers, which normalization quarantines at the price stage; 售罄 rows are kept as
available=False.
"""

import functools
from decimal import Decimal

import pytest

from pipelines.normalize import Quarantined, normalize_offer
from spiders.base import HtmlTableSpider
from spiders.registry import spider_class
from tests.helpers.responses import file_response, snapshot_entries

SLUGS = ("idc_nanjing", "idc_ulanqab", "idc_guian", "idc_northwest")


def _parse(slug: str, response=None) -> list:
    spider = spider_class(slug)(crawl_id="test")
    return list(spider.parse(response or file_response(slug, "gpu_price.html")))


@functools.cache
def parsed() -> dict[str, list]:
    """{slug: the offers of its recorded page}, parsed once (collection needs them too: one
    invariants test per offer)."""
    return {slug: _parse(slug) for slug in SLUGS}


@pytest.fixture(scope="module")
def by_slug() -> dict[str, list]:
    return parsed()


def pytest_generate_tests(metafunc):
    """The tests taking `offer` run once per recorded offer (collection needs the list)."""
    if metafunc.function.__name__ == "test_offer_invariants":
        offers = parsed()
        metafunc.parametrize("slug, offer", [(slug, o) for slug in SLUGS for o in offers[slug]],
                             ids=[f"{s}-{i}" for s in SLUGS for i in range(len(offers[s]))])


def _prices(by_slug: dict[str, list], slug: str, gpu_text: str,
            region: str | None = None) -> dict[str, str]:
    return {o["billing_period"]: o["price_text"] for o in by_slug[slug]
            if o["gpu_text"] == gpu_text and (region is None or o["region_text"] == region)}


def _normalized(by_slug: dict[str, list],
                slug: str) -> tuple[list[dict], list[Quarantined]]:
    ok, bad = [], []
    for offer in by_slug[slug]:
        try:
            ok.append(normalize_offer(dict(offer)))
        except Quarantined as exc:
            bad.append(exc)
    return ok, bad


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
def test_offers_are_unique(slug, by_slug):
    keys = [(o["sku"], o["region_text"], o["billing_period"]) for o in by_slug[slug]]
    assert len(keys) == len(set(keys))


# ---- exact fields per IDC -------------------------------------------------------------------

def test_nanjing_whole_card_slices_and_server(by_slug):
    assert _prices(by_slug, "idc_nanjing", "NVIDIA A100 80G SXM4 整卡") == {
        "hour": "¥32.00/时", "month": "¥9,800/月"}
    assert _prices(by_slug, "idc_nanjing", "NVIDIA A100 80G SXM4 MIG 2g.20gb") == {
        "hour": "¥10.80/时", "month": "¥3,200/月"}
    server = [o for o in by_slug["idc_nanjing"] if o["gpu_text"] == "NVIDIA A100 80G SXM4 整机"]
    assert {(o["gpu_count"], o["sku"]) for o in server} == {("8", "NVIDIA A100 80G SXM4 整机 | 8")}
    assert {o["region_text"] for o in by_slug["idc_nanjing"]} == {"南京"}
    assert {o["vendor"] for o in by_slug["idc_nanjing"]} == {"南京某IDC (Jiangsu)"}


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

def test_offer_invariants(slug, offer):
    assert offer["source"] == slug
    assert offer["vendor_kind"] == "idc" and offer["offer_kind"] == "on_demand"
    assert offer["url"] == spider_class(slug).start_urls[0]
    assert offer["billing_period"] in ("hour", "month")
    # The page's own spelling is kept: ¥32.00/时 and ¥9,800/月, or 44.00元/小时 and 8,400元/月.
    suffix = {"hour": "元/小时" if slug == "idc_northwest" else "/时", "month": "/月"}
    assert (offer["price_text"] == "面议"
            or offer["price_text"].endswith(suffix[offer["billing_period"]]))
    assert offer["gpu_count"] in ("1", "8")
    assert offer["sku"] == f"{offer['gpu_text']} | {offer['gpu_count']}"
    assert offer["region_text"] in ("南京", "乌兰察布", "贵安新区", "庆阳", "中卫")
    assert offer["available"] in (True, False)
    assert offer["observed_at"] == "2026-11-30T09:00:00Z"


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
