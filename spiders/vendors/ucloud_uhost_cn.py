"""UCloud 优刻得 UHost: the per-card GPU prices of the UHost price document (主机价格).

Reads https://docs.ucloud.cn/uhost/price, the page built from UCloudDoc-Team/uhost `price.md`
(the docs' own sidebar links it as /uhost/price.md, and its pages link one another as
https://docs.ucloud.cn/uhost/<path>). Its section "## 5. GPU" states one card's price per model in
a sentence, "GPU-V100型（Tesla V100）每台GPU云主机支持创建1-4颗GPU，每颗GPU售价5000元/月。", for
华北（北京2）可用区E ("文档中的价格以华北（北京2）可用区E为例"). From 2019-07-08 to 2025-12-30 the
document listed K80, P40 and V100 at these prices; on 2026-01-29 the section became
"GPU对应价格请参考GPU文档或参考控制台" (no price): a page without the sentences fails loudly.

The price is the GPU's own line on the bill: a UHost's price is the sum of its items (CPU+内存,
disks, GPU, ...; "各单项价格叠加总和"), and the CPU+memory of a GPU host is priced in the
page's table beside the standard types. Like GCP's GPU prices it is the card alone, per month;
the hourly and yearly prices the page derives by rule (×1.5/720, ×10) are not offered.
The signed GetUHostInstancePrice API (ucloud-sdk-python3) is not read: it needs keys, and a
keyed path's prices could not be recorded here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from scrapy.http import Response

from spiders.base import GpuPriceSpider
from spiders.items import RawOffer

PRICE_URL = "https://docs.ucloud.cn/uhost/price"
# "GPU-K80型（Tesla K80）每台GPU云主机支持创建1-2颗GPU，每颗GPU售价1700元/月。": the type, the
# card, how many cards a host takes, one card's price (texts as written; normalization reads them)
_GPU_PRICE = re.compile(
    r"GPU-(?P<type>[^\s型]+)型\s*[（(](?P<card>[^）)]+)[）)]\s*每台GPU云主机支持创建"
    r"(?P<cards>[^颗]+)颗GPU\s*[，,]\s*每颗GPU售价\s*(?P<price>[^。；;\s]+)")
# "> 文档中的价格以华北（北京2）可用区E为例。": the region and zone the document's prices are for
_EXAMPLE_ZONE = re.compile(r"文档中的价格以(?P<region>.+?)(?P<zone>可用区\w)为例")


class UcloudUhostCnSpider(GpuPriceSpider):
    name = "ucloud_uhost_cn"
    vendor = "UCloud 优刻得"
    vendor_kind = "hyperscaler"
    start_urls = [PRICE_URL]
    fetch_style = "HTML text"
    public_path = ("the UHost price document's GPU section (one card's monthly price per model; "
                   "the signed GetUHostInstancePrice API is not read)")
    price_per_card = True
    min_offers = 3

    def parse(self, response: Response) -> Iterable[RawOffer]:
        text = " ".join(" ".join(response.css("body ::text").getall()).split())
        zone = _EXAMPLE_ZONE.search(text)
        if zone is None:
            raise ValueError(f"{self.name}: no 文档中的价格以…为例 region on {response.url}")
        matches = list(_GPU_PRICE.finditer(text))
        if not matches:
            raise ValueError(f"{self.name}: no 每颗GPU售价 sentence on {response.url}")
        for match in matches:
            card = match["card"]
            yield self.offer(
                response, sku=f"GPU-{match['type']} | 1", gpu_text=card, gpu_count=1,
                region_text=zone["region"], offer_kind="on_demand", billing_period="month",
                price_text=match["price"], currency="CNY", available=None,
                vendor_data={"sentence": match.group(0), "gpu_type": f"GPU-{match['type']}",
                             "cards_per_host": match["cards"], "zone": zone["zone"],
                             "priced_item": "GPU only (CPU+内存 billed on top)"})
