"""chenggroup/ikkem-hpc-manual's `docs/introduction/partition.md`: the computing centre of
嘉庚创新实验室 IKKEM (Xiamen University, Xiamen, Fujian). Its fee table has one row per account
type (类别: 内部账户 internal, 外部账户 external) and a column per resource, the GPU one in 元 per
card-hour (`GPU (元/卡时)`). The external tariff is the offer, as for every centre the project
reads (spiders/vendors/idc_tables.toml): the internal one stays in vendor_data. Pure.

The table does not name the card ("8张GPU卡" per node). IKKEM_CARD is the one place that says
which it is, from the evidence in docs/sources.md (Computing centres, idc_ikkem_xm): a
third-party note (public file id 65991155371, measured 2026-09-03) reports 6 GPU nodes of 8x
A100 80GB SXM, with a MIG partition gpu-mig-2g-20gb beside them.

* A version whose table has no GPU column, or no external row, lists no offer (counted).
* A price cell that is not a number is no offer (counted).
"""

from __future__ import annotations

import re

from pipelines.backfill.markdown_tables import NUMBER_CELL_RE, table_with
from pipelines.backfill.offers import ArchiveOffer, Parsed

IKKEM_CARD = "A100 80GB SXM"     # the evidence: the module's docstring
CLOUD, PLACE = "idc_ikkem_xm", "厦门"
ACCOUNT_HEADER, EXTERNAL, INTERNAL = "类别", "外部账户", "内部账户"
GPU_COLUMN_RE = re.compile(r"^GPU\s*[（(]\s*(元\s*/\s*卡时)\s*[）)]$")


def parse_ikkem(text: str) -> Parsed:
    """The GPU offer of one version of partition.md."""
    table = table_with(text, ACCOUNT_HEADER)
    gpu = next((h for h in table.headers if GPU_COLUMN_RE.match(h)), None) if table else None
    if table is None or gpu is None:
        return Parsed([], {"no GPU price column": 1})
    unit = GPU_COLUMN_RE.match(gpu)[1].replace(" ", "")  # type: ignore[index]
    rows = {row.get(ACCOUNT_HEADER, ""): (line, row) for line, row in table.rows}
    if EXTERNAL not in rows:
        return Parsed([], {"no external tariff row": 1})
    line, row = rows[EXTERNAL]
    cell = row.get(gpu, "")
    if not NUMBER_CELL_RE.match(cell):
        return Parsed([], {"a price cell that is not a number": 1})
    internal = rows.get(INTERNAL, (0, {}))[1].get(gpu, "")
    has_internal = bool(NUMBER_CELL_RE.match(internal))
    return Parsed([ArchiveOffer(CLOUD, line, {
        "sku": "gpu", "gpu_text": IKKEM_CARD, "gpu_count": "1", "region_text": PLACE,
        "offer_kind": "on_demand", "price_text": f"{cell} {unit}", "billing_period": "hour",
        "price_per_card": True,
        "vendor_data": {"internal_price_text": f"{internal} {unit}"} if has_internal else {}})],
        {} if has_internal else {"no internal tariff": 1})
