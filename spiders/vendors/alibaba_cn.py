"""阿里云 Alibaba Cloud: ECS GPU instance prices (CNY), from the public CDN price file, or, with
keys, from the signed ECS OpenAPI. No browser.

Public path (no keys), as public clients read it:
  1. GET the public pricing page https://www.aliyun.com/price/ecs/ecs-pricing/zh and take the first
     match of `https://g.alicdn.com/aliyun/ecs-price-info/[0-9.]+` (the price file's versioned
     folder); a page without one fails loudly, a version is never guessed.
  2. GET <that folder>/price/download/instancePrice.json: `{currency, version, publicationDate,
     pricingInfo: {"<region>::<instanceType>::<network>::<os>::<io>": {hours: [{price, period}],
     months: [...], years: [...]}}}`, prices as strings. Only Linux, VPC, I/O-optimized rows of
     NVIDIA GPU families (gn, vgn, sgn, with ebm/scc prefixes) are read; the rest is skipped and
     counted. hours[] is pay-as-you-go per hour, months[] the monthly subscription: the entry
     whose `period` is "1" is read (one hour, one month; clients read [0], whose period is "1").
  Evidence: cloudpilot-ai/priceserver pkg/client/alibabacloud.go @ d06a27ff3a53 (page URL, regex,
  path, key split, os == "linux", hours[0].price); banzaicloud/cloudinfo
  pkg/cloudinfo/alibaba/cloudinfo.go and cloudinfo_test.go @ 0376f08679af (every top-level field,
  hours/months/years of {price, period}, key `region::type::vpc::linux::optimized`, period "1");
  apache/libcloud contrib/update_ecs_prices.py @ ed63f66e0332 (hours[0] = pay-as-you-go,
  months[0] = prepaid). The file names no GPU: each instance type is resolved to its card and
  count through alibaba_cn_gpus.csv, read from Alibaba's instance-family pages (GPU计算型实例规格族,
  https://www.alibabacloud.com/help/en/ecs/user-guide/gpu-accelerated-compute-optimized-and-vgpu-accelerated-instance-families-1,
  and the bare-metal page .../elastic-bare-metal-server-overview#ebmgn8v; rows whose page names
  only the GPU memory, not the card, are marked weak); a type the table
  lacks goes on with the gpu_count `UNMAPPED_COUNT`, which normalization quarantines with that
  text, and is counted in `alibaba_cn/unmapped_gpu_types`.

Keyed path (ALIBABA_CLOUD_ACCESS_KEY_ID + ALIBABA_CLOUD_ACCESS_KEY_SECRET): DescribeInstanceTypes
(MinimumGPUAmount=1, paged by NextToken) for the GPU types and their GPUSpec/GPUAmount, then
DescribePrice (ResourceType=instance, PriceUnit Hour and Month) per region and type, built and
signed by the SDK (alibaba_cn_openapi.py), sent by Scrapy, read through the SDK's response models.

No second path from a documentation price table: Alibaba's GPU billing page
(https://help.aliyun.com/document_detail/163808.html) refers instance prices to the ECS pricing
page, and the one documentation price table found (PAI's) is another product's single row.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy.http import Response

from spiders.base.json_api import checked_json
from spiders.base.spider import GpuPriceSpider
from spiders.items import RawOffer

# The Alibaba Cloud SDK (and alibaba_cn_openapi, built on it) is imported by the keyed path's
# methods only: a run without keys reads the public price file and never needs it, and importing
# it costs the shared crawl process about 0.6 s of CPU at start-up.
if TYPE_CHECKING:
    from alibabacloud_ecs20140526 import models as ecs

PRICING_PAGE = "https://www.aliyun.com/price/ecs/ecs-pricing/zh"
PRICE_FOLDER_RE = re.compile(r"https://g\.alicdn\.com/aliyun/ecs-price-info/[0-9.]+")
PRICE_FILE = "/price/download/instancePrice.json"
# NVIDIA GPU families by Alibaba's naming (gn GPU compute, vgn vGPU, sgn shared vGPU), bare
# metal (ebm) and super-computing cluster (scc) variants included: ecs.gn7i-…, ecs.ebmgn8v.…
GPU_TYPE_RE = re.compile(r"^ecs\.(?:ebm|scc)?[vs]?gn\d")
TERMS = (("hours", "hour"), ("months", "month"))    # price-file list -> billing period
REGIONS = ("cn-beijing", "cn-shanghai", "cn-hangzhou", "cn-zhangjiakou", "cn-wulanchabu",
           "cn-shenzhen")                            # the keyed path asks these
PRICE_UNITS = (("Hour", "hour"), ("Month", "month"))
PAGE_SIZE = 100
# The file prices every ECS type in every region, OS and network (its size was not seen): the
# crawl-wide 16 MiB DOWNLOAD_MAXSIZE is lifted for this one request only.
PRICE_FILE_MAXSIZE = 128 * 1024 * 1024
UNMAPPED_COUNT = "unknown: Alibaba instance type not in alibaba_cn_gpus.csv (spiders/vendors/)"
GPU_TABLE = Path(__file__).with_name("alibaba_cn_gpus.csv")


def gpu_table(path: Path = GPU_TABLE) -> dict[str, dict[str, str]]:
    """instance type -> {family, gpu_text, gpu_count, evidence, source}."""
    with path.open(encoding="utf-8", newline="") as f:
        return {row["instance_type"]: row for row in csv.DictReader(f)}


GPU_TYPES = gpu_table()


def price_folder(page_html: str) -> str | None:
    """The price file's versioned folder the pricing page names, or None."""
    found = PRICE_FOLDER_RE.search(page_html)
    return found.group(0).rstrip(".") if found else None


def price_of_one_period(entries: Any) -> tuple[str | None, str]:
    """(price, why not) of the entry whose period is "1" in one of a row's lists."""
    if not isinstance(entries, list) or not entries:
        return None, "not_sold"
    one = next((e for e in entries if isinstance(e, dict) and str(e.get("period")) == "1"), None)
    if one is None:
        return None, "no_period_one"
    price = one.get("price")
    return (None, "null_price") if price in (None, "") else (str(price), "")


class AlibabaCNSpider(GpuPriceSpider):
    name = "alibaba_cn"
    vendor = "阿里云 Alibaba Cloud"
    vendor_kind = "hyperscaler"
    fetch_style = "JSON API"
    start_urls = [PRICING_PAGE]
    key_envs = ("ALIBABA_CLOUD_ACCESS_KEY_ID", "ALIBABA_CLOUD_ACCESS_KEY_SECRET")
    public_path = ("the public ECS pricing page (for the price file's version), then the CDN "
                   "instancePrice.json; cards from Alibaba's instance-family docs")
    keyed_path = ("the signed ECS OpenAPI (DescribeInstanceTypes, DescribePrice) through "
                  "alibabacloud-ecs20140526")
    min_offers = 20
    # injectable for tests: the signature's nonce and date (None: the SDK's own)
    signing_nonce: str | None = None
    signing_date: str | None = None

    async def start(self):
        if self.keyed():
            yield self.api_call("DescribeInstanceTypes", self.instance_types_request(None),
                                REGIONS[0], self.parse_instance_types)
            return
        yield self.request(PRICING_PAGE, callback=self.parse_pricing_page)

    # ---- public path ---------------------------------------------------------------------
    def parse_pricing_page(self, response: Response) -> Iterable[Any]:
        folder = price_folder(response.text)
        if folder is None:
            raise ValueError(f"{self.name}: the pricing page {response.url} names no price-file "
                             f"version (no match for {PRICE_FOLDER_RE.pattern}); not guessing one")
        yield self.request(folder + PRICE_FILE, callback=self.parse_price_file,
                           meta={"download_maxsize": PRICE_FILE_MAXSIZE})

    def parse_price_file(self, response: Response) -> Iterable[RawOffer]:
        body = checked_json(response)
        rows = body.get("pricingInfo") if isinstance(body, dict) else None
        if not isinstance(rows, dict) or not body.get("currency"):
            raise ValueError(f"{self.name}: no pricingInfo object or currency in {response.url}")
        stats = self.crawler.stats
        for key, row in rows.items():
            parts = key.split("::")
            if len(parts) != 5:
                stats.inc_value("alibaba_cn/malformed_keys_skipped")
                self.logger.warning("alibaba_cn: price key %r is not region::type::network::os::io",
                                    key)
                continue
            region, itype, network, os_name, io = parts
            if not GPU_TYPE_RE.match(itype):
                stats.inc_value("alibaba_cn/cpu_rows_skipped")
            elif (network, os_name, io) != ("vpc", "linux", "optimized"):
                stats.inc_value("alibaba_cn/not_linux_vpc_rows_skipped")
            else:
                yield from self.file_offers(response, body, key, region, itype, row)

    def file_offers(self, response: Response, body: dict, key: str, region: str, itype: str,
                    row: Any) -> Iterable[RawOffer]:
        gpu_text, gpu_count, card = self.card(itype)
        for field, period in TERMS:
            price, why_not = price_of_one_period(row.get(field) if isinstance(row, dict) else None)
            if price is None:
                if why_not != "not_sold":
                    self.crawler.stats.inc_value(f"alibaba_cn/{why_not}_skipped")
                continue
            yield self.offer(
                response, sku=itype, gpu_text=gpu_text, gpu_count=gpu_count, region_text=region,
                offer_kind="on_demand", price_amount=price, currency=body["currency"],
                billing_period=period,
                available=None,   # the file says nothing of stock
                vendor_data={"price_key": key, "price_list": field, "version": body.get("version"),
                             "publicationDate": body.get("publicationDate"),
                             "card_evidence": card.get("evidence") if card else None},
            )

    def card(self, itype: str) -> tuple[str, Any, dict | None]:
        card = GPU_TYPES.get(itype)
        if card is None:
            self.crawler.stats.inc_value("alibaba_cn/unmapped_gpu_types")
            self.logger.warning("alibaba_cn: instance type %s is not in alibaba_cn_gpus.csv: its "
                                "offers go to quarantine (stage card)", itype)
            return itype, UNMAPPED_COUNT, None
        return card["gpu_text"], card["gpu_count"], card

    # ---- keyed path ----------------------------------------------------------------------
    @staticmethod
    def instance_types_request(next_token: str | None) -> ecs.DescribeInstanceTypesRequest:
        from alibabacloud_ecs20140526 import models as ecs

        return ecs.DescribeInstanceTypesRequest(minimum_gpuamount=1, max_results=PAGE_SIZE,
                                                next_token=next_token or None)

    @staticmethod
    def price_request(region: str, itype: str, unit: str) -> ecs.DescribePriceRequest:
        from alibabacloud_ecs20140526 import models as ecs

        return ecs.DescribePriceRequest(region_id=region, resource_type="instance",
                                        instance_type=itype, price_unit=unit,
                                        period=1 if unit == "Month" else None)

    def api_call(self, action: str, request, api_region: str, callback, /, **cb_kwargs):
        from spiders.vendors.alibaba_cn_openapi import signed_request

        keys = self.credentials() or {}
        signed = signed_request(action, request, api_region, keys.get(self.key_envs[0], ""),
                                keys.get(self.key_envs[1], ""), nonce=self.signing_nonce,
                                date=self.signing_date)
        # error envelopes come with 4xx: read them instead of dropping them
        return self.request(signed.url, callback=callback, method="POST", headers=signed.headers,
                            body=b"", cb_kwargs={"action": action, **cb_kwargs},
                            meta={"handle_httpstatus_list": [400, 403, 404, 500]},
                            dont_filter=True)

    def api_body(self, response: Response, action: str) -> dict:
        from spiders.vendors.alibaba_cn_openapi import error_of

        body = checked_json(response)
        if (error := error_of(action, body, response.url)) is not None:
            raise error
        return body

    def parse_instance_types(self, response: Response, action: str,
                             found: dict | None = None) -> Iterable[Any]:
        from alibabacloud_ecs20140526 import models as ecs

        from spiders.vendors.alibaba_cn_openapi import model_from

        page = model_from(ecs.DescribeInstanceTypesResponseBody(), self.api_body(response, action))
        found = dict(found or {})
        for t in (page.instance_types.instance_type if page.instance_types else None) or []:
            if (t.gpuamount or 0) > 0:
                found[t.instance_type_id] = t
        if page.next_token:
            yield self.api_call(action, self.instance_types_request(page.next_token), REGIONS[0],
                                self.parse_instance_types, found=found)
            return
        for region in REGIONS:
            for itype in sorted(found):
                for unit, period in PRICE_UNITS:
                    yield self.api_call("DescribePrice", self.price_request(region, itype, unit),
                                        region, self.parse_price, region=region,
                                        itype=found[itype], period=period)

    def parse_price(self, response: Response, action: str, region: str,
                    itype: ecs.DescribeInstanceTypesResponseBodyInstanceTypesInstanceType,
                    period: str) -> Iterable[RawOffer]:
        from alibabacloud_ecs20140526 import models as ecs

        from spiders.vendors.alibaba_cn_openapi import OpenApiError, model_from

        try:
            body = self.api_body(response, action)
        except OpenApiError as error:   # e.g. a type not sold in that region: one price less
            self.crawler.stats.inc_value("alibaba_cn/describe_price_errors")
            self.logger.warning("%s", error)
            return
        price = model_from(ecs.DescribePriceResponseBody(), body).price_info
        price = price.price if price else None
        if price is None or price.trade_price is None or not price.currency:
            raise ValueError(f"{self.name}: DescribePrice without PriceInfo.Price.TradePrice/"
                             f"Currency on {response.url}")
        known = GPU_TYPES.get(itype.instance_type_id)
        # the family table's card names the memory; the API's GPUSpec alone ("NVIDIA A100")
        # does not, and GPUMemorySize's unit/scope (per card or total) is not documented here
        gpu_text = known["gpu_text"] if known else (itype.gpuspec or itype.instance_type_id)
        amount = f"{price.trade_price}"
        yield self.offer(
            response, sku=itype.instance_type_id, gpu_text=gpu_text,
            gpu_count=str(itype.gpuamount), region_text=region, offer_kind="on_demand",
            price_amount=amount, currency=price.currency, billing_period=period,
            available=None,
            list_price_amount=None if price.original_price is None else f"{price.original_price}",
            vendor_data={"GPUSpec": itype.gpuspec, "GPUMemorySize": itype.gpumemory_size,
                         "InstanceTypeFamily": itype.instance_type_family,
                         "card_evidence": known["evidence"] if known else "DescribeInstanceTypes"},
            vcpus_text=None if itype.cpu_core_count is None else str(itype.cpu_core_count),
            memory_text=None if itype.memory_size is None else f"{itype.memory_size:g} GiB",
        )
