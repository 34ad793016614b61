"""Configured IDC price tables: the spider built from idc_tables.toml parses its recorded page."""

import pytest
from scrapy.http import HtmlResponse, Request

from spiders.base.html_table import availability
from spiders.parsing.machine import machine_specs
from spiders.registry import spider_class
from spiders.vendors.idc_tables import load_table_spiders
from tests.helpers.responses import file_response

spider = spider_class("idc_sinnet_bj")(crawl_id="test")


@pytest.fixture(scope="module")
def offers() -> list[dict]:
    return list(spider.parse(file_response("idc_sinnet_bj", "gpu_price.html")))


def test_one_offer_per_row_and_billing_period(offers):
    # 10 rows x (hourly, monthly); the 面议 row still yields offers: normalization quarantines them.
    assert len(offers) == 20
    assert {o["billing_period"] for o in offers} == {"hour", "month"}


def test_whole_card_row(offers):
    a100 = [o for o in offers if o["gpu_text"] == "NVIDIA A100 80G SXM4 整卡"]
    assert [(o["billing_period"], o["price_text"]) for o in a100] == [
        ("hour", "¥62.00/时"), ("month", "¥11,800/月")]
    assert all(o["region_text"] == "北京" and o["gpu_count"] == "1" for o in a100)


def test_mig_slice_rows_keep_the_profile_in_the_card_text(offers):
    slices = {o["gpu_text"] for o in offers if "MIG" in o["gpu_text"]}
    assert slices == {"NVIDIA A100 80G SXM4 MIG 3g.40gb", "NVIDIA A100 80G SXM4 MIG 2g.20gb"}


def test_eight_gpu_server_row(offers):
    server = [o for o in offers if o["gpu_text"] == "NVIDIA A100 80G SXM4 整机"]
    assert {o["gpu_count"] for o in server} == {"8"}


def test_stock_column(offers):
    by_text = {o["gpu_text"]: o["available"] for o in offers}
    assert by_text["NVIDIA H100 80G SXM5 整卡"] is False      # 售罄
    assert by_text["NVIDIA A100 80G SXM4 MIG 2g.20gb"] is True  # 紧张 = scarce, still available


def test_changed_layout_fails_loudly():
    response = file_response("idc_sinnet_bj", "gpu_price.html")
    changed = response.replace(body=response.body.replace("按小时".encode(), "小时价".encode()))
    with pytest.raises(ValueError, match=r"idc_sinnet_bj: table headers \['按小时'\] not found"):
        list(spider.parse(changed))


@pytest.mark.parametrize("text, expected", [
    ("有货", True), ("紧张", True), ("售罄", False), ("无货", False), ("12/400", True),
    ("0/180", False), ("", None), ("咨询", None),
])
def test_availability(text, expected):
    assert availability(text) is expected


MACHINE_URL = "https://www.machine-idc.example/gpu.html"
MACHINE_CONFIG = """
[html_table.idc_machine]
vendor = "某IDC"
vendor_kind = "idc"
start_urls = ["https://www.machine-idc.example/gpu.html"]
rows = "table#price tbody tr"
region = "北京"
columns = { gpu_text = "型号", vcpus_text = "CPU", memory_text = "内存(GB)", disk_text = "硬盘" }
prices = { month = "包月" }
"""
MACHINE_PAGE = """<table id="price"><thead><tr><th>型号</th><th>CPU</th><th>内存(GB)</th>
<th>硬盘</th><th>包月</th></tr></thead><tbody>
<tr><td>A100 80G ×8</td><td>128核</td><td>1024</td><td>2×3.84T NVMe</td><td>¥98,000/月</td></tr>
<tr><td>RTX 4090 ×1</td><td>16</td><td>64G</td><td></td><td>¥1,500/月</td></tr>
</tbody></table>"""


def test_configured_machine_columns_read_back_through_machine_specs(tmp_path):
    # a bare memory cell takes its header's unit ("1024" under "内存(GB)" -> "1024 GB"); a cell
    # with its own unit is kept; an empty disk cell states no disk
    path = tmp_path / "idc_tables.toml"
    path.write_text(MACHINE_CONFIG, encoding="utf-8")
    spider_cls = load_table_spiders(path)["idc_machine"]
    response = HtmlResponse(url=MACHINE_URL, body=MACHINE_PAGE.encode(), encoding="utf-8",
                            request=Request(MACHINE_URL))
    offers = {o["gpu_text"]: o for o in spider_cls(crawl_id="t").parse(response)}
    server, card = offers["A100 80G ×8"], offers["RTX 4090 ×1"]
    assert (server["vcpus_text"], server["memory_text"], server["disk_text"]) == (
        "128核", "1024 GB", "2×3.84T NVMe")
    assert machine_specs(server) == {"vcpus": 128, "memory_gib": 1024, "disk_gb": 7680}
    assert card["memory_text"] == "64G"
    assert machine_specs(card) == {"vcpus": 16, "memory_gib": 64, "disk_gb": None}


# ---- merged cells, kept rows, a page's unit, the vendor's row id ---------------------------

FEE_URL = "https://fees.test/gpu.html"


def _configured(tmp_path, extra: str, page: str) -> list:
    path = tmp_path / "idc_tables.toml"
    path.write_text('[html_table.fees]\nvendor = "v"\nvendor_kind = "idc"\n'
                    'start_urls = ["https://fees.test/gpu.html"]\nregion = "北京"\n' + extra,
                    encoding="utf-8")
    response = HtmlResponse(url=FEE_URL, body=page.encode(), encoding="utf-8",
                            request=Request(FEE_URL))
    return list(load_table_spiders(path)["fees"](crawl_id="t").parse(response))


FEE_CONFIG = """rows = "table tbody tr"
columns = { gpu_text = "分区", sku_text = "代码", price_unit = "单位" }
prices = { hour = "单价/元" }
page_unit = "元"
"""
FEE_HEAD = ("<table><thead><tr><th>代码</th><th>名称</th><th>单位</th><th>单价/元</th>"
            "<th>QOS</th><th>分区</th></tr></thead><tbody>")


def test_rowspan_cells_fill_every_row_they_cover(tmp_path):
    page = FEE_HEAD + """
<tr><td>G1</td><td rowspan="3">GPU机时费</td><td rowspan="3">卡小时</td><td>4.00</td>
    <td>low</td><td rowspan="2">A100 80G</td></tr>
<tr><td>G2</td><td>6.00</td><td>normal</td></tr>
<tr><td>G3</td><td>8.00</td><td>high</td><td>H800</td></tr>
</tbody></table>"""
    offers = _configured(tmp_path, FEE_CONFIG, page)
    assert [(o["sku"], o["price_text"], o["vendor_data"]["row"]["QOS"]) for o in offers] == [
        ("A100 80G | 1 | G1", "4.00 元 卡小时", "low"),
        ("A100 80G | 1 | G2", "6.00 元 卡小时", "normal"),
        ("H800 | 1 | G3", "8.00 元 卡小时", "high")]
    assert all(o["vendor_data"]["row"]["名称"] == "GPU机时费" for o in offers)


def test_colspan_cell_fills_its_columns_and_a_full_width_note_is_no_row(tmp_path):
    page = FEE_HEAD + """
<tr><td>G1</td><td colspan="2">GPU机时费 卡小时</td><td>4.00</td><td>low</td><td>A100 80G</td></tr>
<tr><td colspan="6">注：价格以控制台为准</td></tr>
</tbody></table>"""
    offers = _configured(tmp_path, FEE_CONFIG, page)
    assert len(offers) == 1
    assert offers[0]["vendor_data"]["row"]["单位"] == "GPU机时费 卡小时"
    assert offers[0]["vendor_data"]["row"]["单价/元"] == "4.00"


@pytest.mark.parametrize("span", ['rowspan="x"', 'rowspan="0"', 'rowspan="99999"', 'rowspan=""'])
def test_a_malformed_span_counts_as_one(span, tmp_path):
    page = FEE_HEAD + f"""
<tr><td>G1</td><td {span}>GPU机时费</td><td>卡小时</td><td>4.00</td><td>low</td>
<td>A100 80G</td></tr>
<tr><td>G2</td><td>GPU机时费</td><td>卡小时</td><td>6.00</td><td>normal</td><td>A100 80G</td></tr>
</tbody></table>"""
    assert [o["price_text"] for o in _configured(tmp_path, FEE_CONFIG, page)] == [
        "4.00 元 卡小时", "6.00 元 卡小时"]


def test_keep_rows_reads_only_matching_rows(tmp_path):
    page = FEE_HEAD + """
<tr><td>C1</td><td>CPU机时费</td><td>核心小时</td><td>0.04</td><td>low</td><td>C064</td></tr>
<tr><td>G1</td><td>GPU机时费</td><td>卡小时</td><td>4.00</td><td>low</td><td>A100 80G</td></tr>
</tbody></table>"""
    assert len(_configured(tmp_path, FEE_CONFIG, page)) == 2
    kept = _configured(tmp_path, FEE_CONFIG + 'keep_rows = { "名称" = "GPU" }\n', page)
    assert [o["sku"] for o in kept] == ["A100 80G | 1 | G1"]


@pytest.mark.parametrize("page_unit, unit_cell, cell, read_as, per_gpu_hour", [
    # the page's unit first, then the unit cell (or header): a bare number gets both
    ("元", "卡小时", "4.00", "4.00 元 卡小时", "4.000000"),
    ("元", "元/卡时", "4.00", "4.00 元 元/卡时", "4.000000"),   # 元 said twice: still one price
    ("元", "卡小时", "面议", "面议", None),                 # not a number: quarantined
    ("", "元/卡时", "4.00", "4.00 元/卡时", "4.000000"),
    ("RMB", "per Card per Hour", "2.00", "2.00 RMB per Card per Hour", "2.000000"),
    ("元", "卡小时", "¥ 5.00", "¥ 5.00", "5.000000"),      # a cell with its own unit is kept
    ("元", "", "36.73", "36.73 元", "36.730000"),
    # markup inside a price cell reads as the browser shows it (issue 25 item 5)
    ("", "元/卡时", "<b>4</b>.<small>00</small>", "4.00 元/卡时", "4.000000"),
    ("", "", "¥<em>12</em>.5/<small>小时</small>", "¥12.5/小时", "12.500000"),
    ("", "", "&yen;3.20<br>/时", "¥3.20 /时", "3.200000"),
    ("", "", "<span>272</span>分/时", "272分/时", "2.720000"),
])
def test_page_unit_and_unit_cell_tables(page_unit, unit_cell, cell, read_as, per_gpu_hour,
                                        tmp_path):
    from pipelines.normalize import Quarantined, normalize_offer
    config = FEE_CONFIG.replace('page_unit = "元"\n', f'page_unit = "{page_unit}"\n' if page_unit
                                else "")
    page = FEE_HEAD + (f"<tr><td>G1</td><td>GPU</td><td>{unit_cell}</td><td>{cell}</td>"
                       "<td>low</td><td>A100 80G</td></tr></tbody></table>")
    [offer] = _configured(tmp_path, config, page)
    assert offer["price_text"] == read_as
    if per_gpu_hour is None:
        with pytest.raises(Quarantined):
            normalize_offer(dict(offer))
    else:
        assert str(normalize_offer(dict(offer))["price_per_gpu_hour_cny"]) == per_gpu_hour


# ---- slices: a memory column is read one way on every row (issue 25 item 4) -------------------

SLICE_URL = "https://slices.test/gpu.html"


def _slice_offers(tmp_path, config: str, page: str) -> list:
    path = tmp_path / "idc_tables.toml"
    path.write_text('[html_table.slices]\nvendor = "v"\nvendor_kind = "idc"\n'
                    'start_urls = ["https://slices.test/gpu.html"]\nregion = "北京"\n' + config,
                    encoding="utf-8")
    response = HtmlResponse(url=SLICE_URL, body=page.encode(), encoding="utf-8",
                            request=Request(SLICE_URL))
    return list(load_table_spiders(path)["slices"](crawl_id="t").parse(response))


def _cards(offers) -> list[tuple]:
    """(card text, model, fraction, VRAM) of each offer that lands, then (card text, "card: " +
    why) of each quarantined one, in the offers' order."""
    from tests.helpers.normalized import normalized
    rows, quarantined = normalized(offers)
    by_sku = {o["sku"]: o["gpu_text"] for o in offers}
    return ([(by_sku[r["sku"]], r["gpu_model"], str(r["gpu_fraction"]), str(r["vram_gb"]))
             for r in rows] + [(o["gpu_text"], str(why)) for o, why in quarantined])


MEMORY_COLUMN_CONFIG = """rows = "table tbody tr"
columns = { gpu_text = ["型号", "规格"], vram_gb = "显存" }
prices = { hour = "按小时" }
"""
MEMORY_COLUMN_HEAD = ("<table><thead><tr><th>型号</th><th>规格</th><th>显存</th><th>按小时</th>"
                      "</tr></thead><tbody>")


def test_a_memory_column_is_the_slice_memory_on_every_slice_row(tmp_path):
    # the page: the 40 GB of the 1/2 row and the 20 GB of the 1/4 row are both the slice's
    # memory, so both rows are slices of the same A100-80GB (the 1/2 row was an A100-40GB)
    page = MEMORY_COLUMN_HEAD + """
<tr><td>NVIDIA A100 SXM4</td><td>1/2 MIG</td><td>40GB</td><td>¥30.00/时</td></tr>
<tr><td>NVIDIA A100 SXM4</td><td>1/4 MIG</td><td>20GB</td><td>¥16.00/时</td></tr>
<tr><td>NVIDIA A100 SXM4</td><td>整卡</td><td>80GB</td><td>¥58.00/时</td></tr>
<tr><td>NVIDIA A100 PCIe</td><td>整卡</td><td>40GB</td><td>¥40.00/时</td></tr>
</tbody></table>"""
    assert _cards(_slice_offers(tmp_path, MEMORY_COLUMN_CONFIG, page)) == [
        ("NVIDIA A100 SXM4 1/2 MIG", "A100-80GB", "0.5", "40"),
        ("NVIDIA A100 SXM4 1/4 MIG", "A100-80GB", "0.25", "20"),
        ("NVIDIA A100 SXM4 整卡", "A100-80GB", "1", "80"),
        ("NVIDIA A100 PCIe 整卡", "A100-40GB", "1", "40")]


# Where a table gives the memory: config, page; each page has the same rows (1/2 at 40 GB, 1/4 at
# 20 GB, a whole card at 80 GB) and two that are refused, with the reasons: 30 GB on a 1/2 row of
# a card written as 80 GB, and 80 GB as a 1/2 slice of an A100 whose size nothing else names.
NEITHER = "VRAM hint 30 GB is neither the slice's 40 GB nor the A100-80GB's 80 GB"   # column
NOT_HALF = "30 GB is not 1/2 of A100-80GB"   # the card cell
NO_160_GB = "80 GB as a 1/2 slice means a 160 GB card; A100 comes in 40, 80 GB"
SLICE_ROWS = [("1/2 MIG", "40"), ("1/4 MIG", "20"), ("整卡", "80")]
WHERE_MEMORY_IS = {
    "a memory column with its unit in the header (MiB)": (
        """rows = "table tbody tr"
columns = { gpu_text = ["型号", "规格"], vram_gb = "显存(MiB)" }
prices = { hour = "按小时" }
""", "<table><thead><tr><th>型号</th><th>规格</th><th>显存(MiB)</th><th>按小时</th></tr>"
        "</thead><tbody>" + "".join(
            f"<tr><td>A100</td><td>{spec}</td><td>{int(gb) * 1024}</td><td>¥9/时</td></tr>"
            for spec, gb in SLICE_ROWS)
        + "<tr><td>A100 80G</td><td>1/2 MIG</td><td>30720</td><td>¥9/时</td></tr>"
        "<tr><td>A100</td><td>1/2 MIG</td><td>81920</td><td>¥9/时</td></tr></tbody></table>",
        (NEITHER, NO_160_GB)),
    "the memory in the card cell (型号 and 显存 joined)": (
        """rows = "table tbody tr"
columns = { gpu_text = ["型号", "显存"] }
prices = { hour = "按小时" }
""", "<table><thead><tr><th>型号</th><th>显存</th><th>按小时</th></tr></thead><tbody>" + "".join(
            f"<tr><td>A100 {spec}</td><td>{gb}GB</td><td>¥9/时</td></tr>"
            for spec, gb in SLICE_ROWS)
        + "<tr><td>A100 80G 1/2 MIG</td><td>30GB</td><td>¥9/时</td></tr>"
        "<tr><td>A100 1/2 MIG</td><td>80GB</td><td>¥9/时</td></tr></tbody></table>",
        (NOT_HALF, NO_160_GB)),
    "a section header naming the card, over a memory column": (
        """tables = "section table"
rows = "tbody tr"
extra_cells = { "卡" = "ancestor::section[1]/h3" }
columns = { gpu_text = ["卡", "规格"], vram_gb = "显存（GB）" }
prices = { hour = "按小时" }
""", "<section><h3>A100</h3><table><thead><tr><th>规格</th><th>显存（GB）</th><th>按小时</th>"
        "</tr></thead><tbody>" + "".join(
            f"<tr><td>{spec}</td><td>{gb}</td><td>¥9/时</td></tr>" for spec, gb in SLICE_ROWS)
        + "<tr><td>1/2 MIG</td><td>80</td><td>¥9/时</td></tr></tbody></table></section>"
        "<section><h3>A100 80G</h3><table><thead><tr><th>规格</th><th>显存（GB）</th>"
        "<th>按小时</th></tr></thead><tbody><tr><td>1/2 MIG</td><td>30</td><td>¥9/时</td></tr>"
        "</tbody></table></section>", (NO_160_GB, NEITHER)),
    "a header row naming the card above the column headers, the memory in the cell": (
        """tables = "table"
rows = "tbody tr"
header = "thead tr:last-child th"
extra_cells = { "卡" = "ancestor::table[1]/thead/tr[1]/th" }
columns = { gpu_text = ["卡", "规格"] }
prices = { hour = "按小时" }
""", "<table><thead><tr><th colspan='2'>A100</th></tr><tr><th>规格</th><th>按小时</th></tr>"
        "</thead><tbody>" + "".join(
            f"<tr><td>{spec} {gb}G</td><td>¥9/时</td></tr>" for spec, gb in SLICE_ROWS)
        + "<tr><td>1/2 MIG 80G</td><td>¥9/时</td></tr></tbody></table>"
        "<table><thead><tr><th colspan='2'>A100 80G</th></tr><tr><th>规格</th><th>按小时</th>"
        "</tr></thead><tbody><tr><td>1/2 MIG 30G</td><td>¥9/时</td></tr></tbody></table>",
        (NO_160_GB, NOT_HALF)),
}


@pytest.mark.parametrize("where", WHERE_MEMORY_IS)
def test_slice_memory_is_read_one_way_wherever_the_table_gives_it(where, tmp_path):
    config, page, reasons = WHERE_MEMORY_IS[where]
    offers = _slice_offers(tmp_path, config, page)
    landed = [row[1:] for row in _cards(offers) if len(row) == 4]
    refused = [row[1] for row in _cards(offers) if len(row) == 2]
    assert landed == [("A100-80GB", "0.5", "40"), ("A100-80GB", "0.25", "20"),
                      ("A100-80GB", "1", "80")]
    assert len(refused) == len(reasons)
    for why, reason in zip(refused, reasons, strict=True):
        assert why.startswith("card: ") and reason in why
