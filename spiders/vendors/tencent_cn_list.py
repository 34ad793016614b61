"""腾讯云 Tencent Cloud 标准刊例价: the price tables of Tencent's own GPU 价格总览 document.

A second path to tencent_cn's offers (`second_path_of`): the same instance types, at the list
prices Tencent publishes, for China mainland as a whole ("本页参考价格主要以中国大陆地区为主",
"以上价格为标准刊例价"). Read from the document's source in Tencent's documentation repository,
tencentyun/qcloud-documents `product/计算与网络/GPU 云服务器/购买指导/价格总览.md` (48 versions: a
dated list-price history; read at 8ec072968ccbe6d60a8de2a7d57b4739a6814542 and
02785b13caa52f79e260bbf03a1760b11d8a7a07). Its published page, https://cloud.tencent.com/document/product/560/8025,
was rewritten as "计费说明" without tables (a copy of it updated 2025-12-19), so the repository
file is where the tables are still served.

The file is Markdown holding one HTML `<table>` per family inside `<dx-accordion>` `:::` sections.
Headers: 实例规格 | GPU（<card>） | GPU 显存（GB） | vCPU（核） | 内存（GB） | 包年包月（元/月） |
按量计费（元/小时）. The card is the GPU header's parenthesis (it differs per table); the GPU cell
is the count ("8颗") or a vGPU share ("1/4颗"), handed as written (gpu_count_text) for
normalization to read (spiders/parsing/counts.py count_cell). A price cell is a number or a range
("4671 - 5190": the price differs by zone), kept whole: range_end stays None, so normalization
quarantines a range with its reason instead of taking one end.
"""

from __future__ import annotations

from collections.abc import Iterable

from scrapy.http import Response

from spiders.base import HtmlTableSpider
from spiders.base.html_table import header_unit
from spiders.items import RawOffer

DOC_URL = ("https://raw.githubusercontent.com/tencentyun/qcloud-documents/master/product/"
           "%E8%AE%A1%E7%AE%97%E4%B8%8E%E7%BD%91%E7%BB%9C/GPU%20%E4%BA%91%E6%9C%8D%E5%8A%A1%E5%99%A8/"
           "%E8%B4%AD%E4%B9%B0%E6%8C%87%E5%AF%BC/%E4%BB%B7%E6%A0%BC%E6%80%BB%E8%A7%88.md")


class TencentCNListSpider(HtmlTableSpider):
    name = "tencent_cn_list"
    vendor = "腾讯云 Tencent Cloud"
    vendor_kind = "hyperscaler"
    second_path_of = "tencent_cn"        # the same offers as tencent_cn: counted once
    public_path = "the 标准刊例价 tables of Tencent's GPU 价格总览 document (its source file)"
    start_urls = [DOC_URL]
    tables = "table"
    rows = "tbody tr"
    columns = {"config_text": "实例规格", "vcpus_text": "vCPU （核）",
               "memory_text": "内存 （GB）"}
    prices = {"month": "包年包月 （元/月）", "hour": "按量计费 （元/小时）"}
    region = "中国大陆"
    min_offers = 20

    def parse_row(self, cells: dict[str, str], response: Response) -> Iterable[RawOffer]:
        gpu_header = next((h for h in cells if h.startswith(("GPU（", "GPU("))), None)
        if gpu_header is None:
            raise ValueError(f"{self.name}: a price table without a GPU（card） column on "
                             f"{response.url} (found {list(cells)})")
        sku = cells["实例规格"]
        for kind, period, header, text in self.price_cells(cells):
            unit = header_unit(header)
            price_text = text if unit in text else f"{text} {unit}"   # "4671 - 5190 元/月"
            yield self.offer(
                response, sku=sku, gpu_text=header_unit(gpu_header),
                gpu_count_text=cells[gpu_header], config_text=sku,
                region_text=self.region, offer_kind=kind, billing_period=period, currency="CNY",
                price_text=price_text, available=None, **self.machine_cells(cells),
                vendor_data={"row": cells, "price_header": header})
