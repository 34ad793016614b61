"""The documentation archives, one version at a time: Featurize's price table (featurize-doc),
USTC SAIDS's billing and node tables (ustc-saids) and IKKEM's fee table (ikkem), all Markdown
pipe tables. Inputs are written here in the pages' shapes (their headers, made-up rows and
prices); one test per archive reads a real version when its clone is here."""

from __future__ import annotations

import pytest

from pipelines.backfill.featurize_doc import parse_featurize_doc
from pipelines.backfill.ikkem import IKKEM_CARD, parse_ikkem
from pipelines.backfill.load import backfill, connect
from pipelines.backfill.markdown_tables import markdown_tables
from pipelines.backfill.ustc_saids import parse_ustc_saids
from tests.backfill.archive_clones import clone_file
from tests.backfill.archive_repos import build_repo, utc

FEATURIZE = """# 计费

## 价格表

|   实例配置        | 每小时单价   | 日租（1天） | 周租（7天） |  月租（30天） |
|:-------------:  |:----------:|:------:|:------: |:------: |
|    9999 常规机型   |  1.5 元  |  20 元 | 100 元   | 400 元 |
|    8888 常规机型   |  2 元  |  - | 面议   | 500 元 |
|    9999 常规机型   |  1.6 元  |  21 元 | 101 元   | 401 元 |

|   每周用量（小时）  | 折扣    |
|:-------------:  |:-------:|
|  0 至 40 小时部分   |  无折扣 |
"""

USTC = """# 计算集群概况

| 节点类别 | 节点名 | 主要规格 | 节点数 |
|-----|-----|-----|-----|
| GPU 节点（X800）    | gpu[1-2]     | 2 * CPU @ 2.60GHz, 1TB, NVIDIA X800 SXM4 8-GPU 80GB | 2   |
| 登录节点           | login        | 2 * CPU @ 2.90GHz, 384GB                       | 1   |

## 计费标准 {#billing-standards}

| 分区        | 单价（元） | 状态  |
|-----------|-------|-----|
| X800      | 3.00  | 执行中 |
| X800-7    | 2.50  | 执行中 |
| Y40       | 1.25  | 执行中 |
| Z10       | 待定  | 执行中 |
"""

IKKEM = """# 分区

|   类别   | CPU (元/核时) | GPU (元/卡时) | FAT (元/核时) |
| :--------: | :-------------: | :-------------: | :-------------: |
| 内部账户  | 0.05          | 7.00          | 0.10          |
| 外部账户  | 0.07          | 10.00         | 0.20          |
"""


def _rows(parsed):
    return [(o.line, o.fields["sku"], o.fields["gpu_text"], o.fields["price_text"],
             o.fields["billing_period"]) for o in parsed.offers]


def test_markdown_tables_keep_their_lines_and_cells():
    tables = markdown_tables(FEATURIZE)
    assert [(t.line, len(t.rows)) for t in tables] == [(5, 3), (11, 1)]
    line, row = tables[0].rows[0]
    assert (line, row["实例配置"], row["月租（30天）"]) == (7, "9999 常规机型", "400 元")
    assert markdown_tables("| a | b |\n| not | a separator |\n") == []


def test_featurize_cells_are_offers_by_period_the_first_row_of_a_card_wins():
    parsed = parse_featurize_doc(FEATURIZE)
    assert _rows(parsed) == [
        (7, "9999 常规机型", "9999 常规机型", "1.5 元", "hour"),
        (7, "9999 常规机型", "9999 常规机型", "20 元", "day"),
        (7, "9999 常规机型", "9999 常规机型", "100 元", "week"),
        (7, "9999 常规机型", "9999 常规机型", "400 元", "month"),
        (8, "8888 常规机型", "8888 常规机型", "2 元", "hour"),
        (8, "8888 常规机型", "8888 常规机型", "500 元", "month"),
    ]
    assert {(o.fields["region_text"], o.fields["offer_kind"], o.fields["gpu_count"])
            for o in parsed.offers} == {("中国", "on_demand", "1")}
    assert parsed.left_out == {"a price cell that is not a number of 元": 1,
                               "a row repeating an earlier row's card": 1}


@pytest.mark.parametrize(("text", "offers", "left_out"), [
    # a version whose table lacks a column: the others are read
    (FEATURIZE.replace(" 周租（7天） |", " 周租 |"), 5,
     {"no 周租（7天） column": 1, "a row repeating an earlier row's card": 1}),
    ("# 计费\n\n没有价格表\n", 0, {"no price table": 1}),
])
def test_featurize_unhappy_versions(text, offers, left_out):
    parsed = parse_featurize_doc(text)
    assert (len(parsed.offers), parsed.left_out) == (offers, left_out)


def test_ustc_partitions_are_card_hours_with_the_card_their_nodes_name():
    parsed = parse_ustc_saids(USTC)
    assert _rows(parsed) == [
        (12, "X800", "NVIDIA X800 SXM4 80GB", "3.00 元", "hour"),
        (13, "X800-7", "NVIDIA X800 SXM4 80GB", "2.50 元", "hour"),
        (14, "Y40", "Y40", "1.25 元", "hour"),   # no node row: the partition's name
    ]
    assert {(o.fields["price_per_card"], o.fields["gpu_count"], o.fields["region_text"])
            for o in parsed.offers} == {(True, "1", "合肥")}
    assert parsed.left_out == {"a price cell that is not a number": 1}


@pytest.mark.parametrize(("text", "left_out"), [
    (USTC.split("## 计费标准")[0] + "## 计费标准\n\n暂未发布计费标准。\n",
     {"no billing table (prices not yet published)": 1}),
    (USTC.replace("| 分区        |", "| 队列        |"),
     {"no billing table (prices not yet published)": 1}),
])
def test_ustc_versions_without_a_billing_table_list_no_offer(text, left_out):
    parsed = parse_ustc_saids(text)
    assert (parsed.offers, parsed.left_out) == ([], left_out)


def test_ikkem_external_tariff_is_the_offer_the_internal_one_rides_along():
    parsed = parse_ikkem(IKKEM)
    assert _rows(parsed) == [(6, "gpu", IKKEM_CARD, "10.00 元/卡时", "hour")]
    fields = parsed.offers[0].fields
    assert (fields["price_per_card"], fields["region_text"], fields["vendor_data"]) == \
        (True, "厦门", {"internal_price_text": "7.00 元/卡时"})
    assert parsed.left_out == {}


@pytest.mark.parametrize(("text", "left_out"), [
    (IKKEM.replace("GPU (元/卡时)", "DCU (元/卡时)"), {"no GPU price column": 1}),
    (IKKEM.replace("10.00", "面议"), {"a price cell that is not a number": 1}),
    (IKKEM.replace("外部账户", "合作账户"), {"no external tariff row": 1}),
    ("# 分区\n", {"no GPU price column": 1}),
])
def test_ikkem_unhappy_versions(text, left_out):
    parsed = parse_ikkem(text)
    assert (parsed.offers, parsed.left_out) == ([], left_out)


def test_ikkem_without_an_internal_tariff_still_offers_the_external_one():
    parsed = parse_ikkem(IKKEM.replace("| 7.00 ", "| -- "))
    assert len(parsed.offers) == 1
    assert parsed.left_out == {"no internal tariff": 1}


def test_a_real_featurize_version_2021_06_15():
    parsed = parse_featurize_doc(clone_file(
        "louis-she/featurize-doc", "ae41f19639f8", "docs/prices.md"))
    cells = {(o.fields["sku"], o.fields["billing_period"]): o.fields["price_text"]
             for o in parsed.offers}
    assert cells[("3090 常规机型", "hour")] == "3.6 元"
    assert len(parsed.offers) == 32 and parsed.left_out == {}


def test_a_real_ustc_version_2025_12_26_and_one_before_its_prices():
    parsed = parse_ustc_saids(clone_file(
        "yliu7949/SAIKS-HPC-docs", "ced3032152b9", "docs/cluster.md"))
    assert ("A100", "NVIDIA A100 SXM4 80GB", "2.00 元") in [
        (o.fields["sku"], o.fields["gpu_text"], o.fields["price_text"]) for o in parsed.offers]
    early = parse_ustc_saids(clone_file("yliu7949/SAIKS-HPC-docs", "9e5ab93", "docs/cluster.md"))
    assert early.offers == []


def test_a_real_ikkem_version_2024_12_05():
    parsed = parse_ikkem(clone_file(
        "chenggroup/ikkem-hpc-manual", "cd2711e", "docs/introduction/partition.md"))
    assert [o.fields["price_text"] for o in parsed.offers] == ["12.00 元/卡时"]
    assert parsed.offers[0].fields["vendor_data"] == {"internal_price_text": "9.00 元/卡时"}


def test_a_version_that_lists_no_offer_is_read_and_leaves_no_crawl(tmp_path):
    repo = build_repo(tmp_path / "saids", [
        (utc(2025, 8, 19, 8), {"docs/cluster.md": USTC.split("## 计费标准")[0]})])
    published = []
    stats = backfill("ustc-saids", repo, lambda: published.append(1) or (True, ""),
                     root=tmp_path / "data")
    assert (stats.read, stats.crawls, stats.unreadable, published) == (1, 0, 0, [])
    assert stats.left_out == {"no billing table (prices not yet published)": 1}
    con = connect(tmp_path / "data")
    try:
        assert con.execute("select count(*) from raw.crawls").fetchone() == (0,)
    finally:
        con.close()
