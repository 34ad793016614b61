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
