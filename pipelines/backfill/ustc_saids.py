"""yliu7949/SAIKS-HPC-docs's `docs/cluster.md`: the GPU cluster of USTC's School of AI and Data
Science (Hefei, Anhui). Its billing table (计费标准: 分区 | 单价（元） | ...) prices each Slurm
partition per card-hour (the formula under it: usageHours x max(gpusUsed, ...) x unitPrice),
and its node table (节点配置: 节点类别 'GPU 节点（A800）' | ... | 主要规格 '..., NVIDIA A800 SXM4
8-GPU 80GB') names the card of each partition. Each billing row is an offer of one card-hour.
Pure.

* Versions before the prices were published (to 2025-09-02: "暂未发布计费标准") have no billing
  table: no offer (counted).
* A partition is matched to its node row by name ('RTX4090-7', a partition of one RTX4090 node,
  by 'RTX4090'); the card is that row's GPU, its per-node count dropped. A partition no node row
  names keeps its own name as the card.
* A price cell that is not a number is no offer (counted).
"""

from __future__ import annotations

import re

from pipelines.backfill.markdown_tables import NUMBER_CELL_RE, table_with
from pipelines.backfill.offers import ArchiveOffer, Parsed, count_left_out

CLOUD = "idc_ustc_hf"
PLACE = "合肥"
PRICE_HEADER = "单价（元）"
PARTITION_HEADER = "分区"
NODE_CLASS_HEADER, NODE_SPEC_HEADER = "节点类别", "主要规格"
NODE_CLASS_RE = re.compile(r"[（(]\s*([^）)]+?)\s*[）)]")
PER_NODE_COUNT_RE = re.compile(r"\b\d+-GPU\s*")
PARTITION_SUFFIX_RE = re.compile(r"-\d+$")


def node_cards(text: str) -> dict[str, str]:
    """{node class ('A800'): its card ('NVIDIA A800 SXM4 80GB')} from the node table."""
    table = table_with(text, NODE_SPEC_HEADER)
    cards: dict[str, str] = {}
    for _, row in table.rows if table else ():
        m = NODE_CLASS_RE.search(row.get(NODE_CLASS_HEADER, ""))
        gpu = [part for part in row.get(NODE_SPEC_HEADER, "").split(",") if "GPU" in part]
        if m and gpu:
            cards[m[1]] = PER_NODE_COUNT_RE.sub("", gpu[-1]).strip()
    return cards


def parse_ustc_saids(text: str) -> Parsed:
    """The offers of one version of cluster.md."""
    table = table_with(text, PRICE_HEADER)
    if table is None or PARTITION_HEADER not in table.headers:
        return Parsed([], {"no billing table (prices not yet published)": 1})
    cards = node_cards(text)
    price_header = next(h for h in table.headers if PRICE_HEADER in h)
    offers: list[ArchiveOffer] = []
    left_out: dict[str, int] = {}
    for line, row in table.rows:
        partition, cell = row.get(PARTITION_HEADER, ""), row.get(price_header, "")
        if not partition:
            count_left_out(left_out, "a row without a partition")
            continue
        if not NUMBER_CELL_RE.match(cell):
            count_left_out(left_out, "a price cell that is not a number")
            continue
        card = cards.get(partition) or cards.get(PARTITION_SUFFIX_RE.sub("", partition)) \
            or partition
        offers.append(ArchiveOffer(CLOUD, line, {
            "sku": partition, "gpu_text": card, "gpu_count": "1", "region_text": PLACE,
            "offer_kind": "on_demand", "price_text": f"{cell} 元", "billing_period": "hour",
            "price_per_card": True}))
    return Parsed(offers, left_out)
