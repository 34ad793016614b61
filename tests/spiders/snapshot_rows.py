"""The normalized rows of the recorded snapshots of the spiders whose reading moved into the
shared parsing (lambda_cloud, tencent_cn_list, huaweicloud_cn): every offer's observation row, or
its quarantine reason, as canonical JSON lines. Run before and after a change and compare:

    python -m tests.spiders.snapshot_rows > before.jsonl   (then after.jsonl; diff them)

tests/spiders/test_snapshot_rows.py compares them with fixtures/normalized_rows.jsonl beside
this file, recorded before the move (regenerate only for a change meant to change them:
python -m tests.spiders.snapshot_rows --write)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

from scrapy.utils.test import get_crawler

from pipelines.normalize import Quarantined, normalize_offer
from spiders.vendors.huaweicloud_cn import HuaweiCloudCnSpider
from spiders.vendors.lambda_cloud import LambdaCloudSpider
from spiders.vendors.tencent_cn_list import TencentCNListSpider
from tests.helpers.responses import file_response

RECORD = Path(__file__).resolve().parent / "fixtures" / "normalized_rows.jsonl"
HUAWEI_REGIONS = ["cn-north-4", "cn-east-3", "cn-southwest-2", "cn-north-9"]
# Fields that change with the moment of the run or the exchange rates, not with the reading (an
# offer without a dated snapshot is observed now; the amount, currency and count stay compared).
MOMENT = {"observed_at", "observed_hour", "fx_rate_date", "prices_as_of",
          "price_per_gpu_hour_cny", "price_per_gpu_hour_usd"}


def _spider(cls):
    return cls.from_crawler(get_crawler(cls), crawl_id="snapshot-rows")


def offers() -> Iterator[dict]:
    lam = _spider(LambdaCloudSpider)
    yield from lam.parse(file_response("lambda_cloud", "instances.html"))
    yield from lam.parse_api(file_response("lambda_cloud", "instance_types.json"))
    yield from _spider(TencentCNListSpider).parse(file_response("tencent_cn_list",
                                                                "jiage_zonglan.md"))
    huawei = _spider(HuaweiCloudCnSpider)
    for region in HUAWEI_REGIONS:
        yield from huawei.parse(file_response("huaweicloud_cn",
                                              f"product_info_ecs_{region}.json"), region=region)


def rows() -> list[str]:
    """One canonical JSON line per offer: its source and sku, then its row or why it is
    quarantined."""
    lines = []
    for offer in offers():
        try:
            row = {k: str(v) for k, v in normalize_offer(dict(offer)).items() if k not in MOMENT}
        except Quarantined as why:
            row = {"quarantined": str(why)}
        lines.append(json.dumps({"source": offer["source"], "sku": offer["sku"], **row},
                                ensure_ascii=False, sort_keys=True))
    return sorted(lines)


if __name__ == "__main__":
    found = rows()
    if "--write" in sys.argv:
        RECORD.write_text("\n".join(found) + "\n", encoding="utf-8")
    else:
        print("\n".join(found))
