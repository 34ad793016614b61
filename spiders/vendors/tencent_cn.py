"""腾讯云 Tencent Cloud: CVM's DescribeZoneInstanceConfigInfos, per region and zone, on two paths.

Public path (no keys): the login-free workbench calls Tencent's own price page makes
(fuzzbuster/ec2instances.info `tencentcloud/scrape.go` @ 12c408e5896af65a4c2d314ee52fe811dbc3012a):
`POST workbench.cloud.tencent.com/cgi/area/queryCvmRegion`
lists the regions and their zones (`data.Response.RegionSet[{region, zones[{zone}]}]`), then
`POST .../cgi/api?i=cvm/DescribeZoneInstanceConfigInfos&uin=&region=<r>` per zone answers
`{code, data: {Response: <DescribeZoneInstanceConfigInfosResponse>}}`.
Keyed path (TENCENTCLOUD_SECRET_ID + TENCENTCLOUD_SECRET_KEY): the same action on the signed CVM
API (`POST https://cvm.tencentcloudapi.com/`, version 2017-03-12): the request is built with the
SDK's request model and signed by the SDK's TC3-HMAC-SHA256 signer (tencentcloud-sdk-python), sent
by Scrapy; the answer is `{Response: ...}`. Regions and zones come from the public list on both.

Both bodies are read through the SDK's `DescribeZoneInstanceConfigInfosResponse` model (the shape
check; tests fail on a member the model does not know). Per GPU instance type (Gpu/GpuCount > 0;
GpuCount < 1 is a vGPU slice, kept as a fraction of the card) and charge type:
  POSTPAID_BY_HOUR  Price.UnitPrice per ChargeUnit (HOUR): the list price (api.json: 原价);
                    UnitPriceDiscount (折扣价: an account's or a promotion's) is in vendor_data.
  SPOTPAID          Price.UnitPriceDiscount per ChargeUnit: what a spot instance is charged (its
                    UnitPrice is the on-demand list price, kept in vendor_data).
  PREPAID           Price.OriginalPrice: one month's list price (OriginalPriceOneYear is 12x it in
                    the vendor's example); DiscountPrice kept in vendor_data.
Status SELL/SOLD_OUT -> available. The item names no GPU model: InstanceFamily -> card by
FAMILY_CARDS, the GPU column headers of Tencent's 价格总览 doc; an unknown family goes on as its
family text, which normalization quarantines when it names no catalogued card.
Machine specs: vCPUs from `Cpu`, memory from `Memory` (GB); no disk (cloud disks are bought apart).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qs, urlparse

import scrapy
from scrapy.http import Response
from tencentcloud.common.credential import Credential
from tencentcloud.common.http.request import RequestInternal
from tencentcloud.cvm.v20170312 import cvm_client, models

from spiders.base import JsonApiSpider
from spiders.base.json_api import checked_json
from spiders.items import RawOffer

WORKBENCH = "https://workbench.cloud.tencent.com"
REGIONS_URL = f"{WORKBENCH}/cgi/area/queryCvmRegion"
ZONE_URL = f"{WORKBENCH}/cgi/api?i=cvm/DescribeZoneInstanceConfigInfos&uin=&region={{}}"
PRICE_PAGE = "https://buy.cloud.tencent.com/price/cvm"
CVM_HOST = "cvm.tencentcloudapi.com"
CVM_API = f"https://{CVM_HOST}/"
ACTION = "DescribeZoneInstanceConfigInfos"
CHARGE_TYPES = ("PREPAID", "POSTPAID_BY_HOUR", "SPOTPAID")
# charge type -> (offer kind, the ItemPrice member read as the price, members kept beside it)
CHARGES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "POSTPAID_BY_HOUR": ("on_demand", "UnitPrice",
                         ("UnitPriceDiscount", "UnitPriceSecondStep", "UnitPriceThirdStep")),
    "SPOTPAID": ("spot", "UnitPriceDiscount", ("UnitPrice",)),
    "PREPAID": ("on_demand", "OriginalPrice", ("DiscountPrice", "Discount")),
}
CHARGE_UNITS = {"HOUR": "hour"}          # ItemPrice.ChargeUnit of a postpaid price (api.json)
AVAILABLE = {"SELL": True, "SOLD_OUT": False}
# InstanceFamily -> the card its 价格总览 table header names (tencentyun/qcloud-documents,
# `product/计算与网络/GPU 云服务器/购买指导/价格总览.md`
# @ 8ec072968ccbe6d60a8de2a7d57b4739a6814542).
FAMILY_CARDS = {
    "GT4": "NVIDIA A100-NVLINK-40G",
    "GN10X": "Tesla V100-NVLINK-32G", "GN10Xp": "Tesla V100-NVLINK-32G",
    "GN8": "Tesla P40",
    "GI3X": "Tesla T4", "GN7": "Tesla T4",
    "GN6": "Tesla P4", "GN6S": "Tesla P4",
}
EXTRAS = ("InstanceFamily", "InstanceChargeType", "TypeName", "StatusCategory", "GpuCount")


def workbench_headers() -> dict[str, str]:
    """Headers of the price page's own calls (public clients send them), x-life (a ms timestamp)
    included: a header only, so nothing replay matches (method, URL, body) changes with it."""
    return {"Content-Type": "application/json; charset=UTF-8",
            "Origin": "https://buy.cloud.tencent.com", "Referer": PRICE_PAGE,
            "x-life": str(time.time_ns() // 1_000_000)}


def zone_filters(zone: str) -> list[dict[str, Any]]:
    return [{"Name": "instance-charge-type", "Values": list(CHARGE_TYPES)},
            {"Name": "zone", "Values": [zone]}]


def workbench_body(region: str, zone: str) -> dict[str, Any]:
    return {"serviceType": "cvm", "action": ACTION, "region": region,
            "data": {"Filters": zone_filters(zone), "Platform": "LINUX", "Version": "2017-03-12"},
            "cgiName": "api"}


def signed_request_parts(secret_id: str, secret_key: str, region: str,
                         zone: str) -> tuple[dict[str, str], str]:
    """(headers, body) of the signed DescribeZoneInstanceConfigInfos call, built by the SDK: its
    request model serializes the filters, its client's TC3-HMAC-SHA256 signer fills the headers.
    The secret key only signs; the body holds the filters alone."""
    request = models.DescribeZoneInstanceConfigInfosRequest()
    request.from_json_string(json.dumps({"Filters": zone_filters(zone)}))
    client = cvm_client.CvmClient(Credential(secret_id, secret_key), region)
    built = RequestInternal(CVM_HOST, "POST", "/")
    client._build_req_inter(ACTION, request._serialize(), built)
    return dict(built.header), built.data


def response_of(body: Any, url: str) -> dict:
    """The DescribeZoneInstanceConfigInfosResponse members of a workbench envelope
    ({code, data: {Response}}) or of a signed answer ({Response}); an error, sent with HTTP 200
    either way, is a loud error instead of "0 offers"."""
    if not isinstance(body, dict):
        raise ValueError(f"tencent_cn: not a JSON object from {url}")
    if "data" in body or "code" in body:
        if body.get("code") != 0:
            raise ValueError(f"tencent_cn: workbench error {body.get('code')!r} "
                             f"({body.get('msg') or body.get('message')}) on {url}")
        body = body.get("data") or {}
    inner = body.get("Response")
    if not isinstance(inner, dict):
        raise ValueError(f"tencent_cn: no Response in the body from {url}")
    if error := inner.get("Error"):
        raise ValueError(f"tencent_cn: API error {error.get('Code')} ({error.get('Message')}) "
                         f"on {url}")
    if not isinstance(inner.get("InstanceTypeQuotaSet"), list):
        raise ValueError(f"tencent_cn: no list at 'InstanceTypeQuotaSet' in {url}")
    return inner


def gpu_of(family: str | None, gpu_count: Any, gpu: Any) -> dict[str, Any] | None:
    """The card fields of a GPU instance type, None for one without GPUs: a vGPU slice
    (GpuCount 0.25) is one card with the fraction as served (normalization reads it,
    spiders/parsing/slices.py)."""
    count = gpu_count if gpu_count not in (None, 0) else gpu
    if not isinstance(count, int | float) or count <= 0:
        return None
    card = FAMILY_CARDS.get(family or "", family or "")
    if count < 1:
        return {"gpu_text": card, "gpu_count": 1, "gpu_fraction": count}
    return {"gpu_text": card, "gpu_count": int(count) if float(count).is_integer() else count}


def _text(number: Any, unit: str = "") -> str | None:
    """A number the API gives (JSON decodes 96 as 96, 28.64 as a float), as written, with the
    unit its member is in; None when not given."""
    if number in (None, ""):
        return None
    if isinstance(number, float) and number.is_integer():
        number = int(number)
    return f"{number!r}{unit}" if isinstance(number, float) else f"{number}{unit}"


class TencentCNSpider(JsonApiSpider):
    name = "tencent_cn"
    vendor = "腾讯云 Tencent Cloud"
    vendor_kind = "hyperscaler"
    key_envs = ("TENCENTCLOUD_SECRET_ID", "TENCENTCLOUD_SECRET_KEY")
    public_path = ("the price page's workbench calls (queryCvmRegion, then "
                   "DescribeZoneInstanceConfigInfos per zone), no login")
    keyed_path = ("the signed CVM API (DescribeZoneInstanceConfigInfos per zone), signed by "
                  "tencentcloud-sdk-python")
    start_urls = [REGIONS_URL]
    offers_path = "Response.InstanceTypeQuotaSet"
    min_offers = 20

    async def start(self):
        yield self.request(REGIONS_URL, method="POST", headers=workbench_headers(),
                           callback=self.parse_regions)

    def parse_regions(self, response: Response) -> Iterable[scrapy.Request]:
        body = checked_json(response)
        if not isinstance(body, dict) or body.get("code") != 0:
            code = body.get("code") if isinstance(body, dict) else None
            raise ValueError(f"{self.name}: region list error {code!r} on {response.url}")
        regions = self.list_at(body, "data.Response.RegionSet", response)
        for region in regions:
            zones = dict.fromkeys(z.get("zone") for z in region.get("zones") or [])
            for zone in filter(None, zones):
                yield self.zone_request(region["region"], zone)

    def zone_request(self, region: str, zone: str) -> scrapy.Request:
        context = {"region": region, "zone": zone}
        if credentials := self.credentials():
            headers, body = signed_request_parts(*credentials.values(), region, zone)
            return self.request(CVM_API, method="POST", headers=headers, body=body,
                                cb_kwargs=context)
        return self.request(ZONE_URL.format(region), method="POST", headers=workbench_headers(),
                            body=json.dumps(workbench_body(region, zone)), cb_kwargs=context)

    def parse(self, response: Response, **context: Any) -> Iterable[RawOffer]:
        inner = response_of(checked_json(response), response.url)
        model = models.DescribeZoneInstanceConfigInfosResponse()
        model._deserialize(inner)
        region = context.get("region") or parse_qs(urlparse(response.url).query)["region"][0]
        for item in model.InstanceTypeQuotaSet:
            yield from self.parse_item(item, response, region)

    def parse_item(self, item: models.InstanceTypeQuotaItem, response: Response,
                   region: str) -> Iterable[RawOffer]:
        gpu = gpu_of(item.InstanceFamily, item.GpuCount, item.Gpu)
        charge = CHARGES.get(item.InstanceChargeType)
        if gpu is None or charge is None:
            return   # not a GPU type, or a charge type the request did not ask for
        offer_kind, price_member, kept = charge
        price = item.Price or models.ItemPrice()
        amount = getattr(price, price_member)
        if amount is None:
            self.logger.warning("%s: %s %s in %s lists no %s", self.name, item.InstanceType,
                                item.InstanceChargeType, item.Zone, price_member)
            return
        if offer_kind == "on_demand" and price_member == "OriginalPrice":
            period = "month"
        else:   # a postpaid price is per its ChargeUnit; another unit is quarantined with it
            period = CHARGE_UNITS.get(price.ChargeUnit or "")
        yield self.offer(
            response, sku=item.InstanceType, **gpu,
            region_text=item.Zone or region, offer_kind=offer_kind, price_amount=_text(amount),
            currency="CNY", billing_period=period,
            available=AVAILABLE.get(item.Status or ""),
            vendor_data={"price_member": price_member, "ChargeUnit": price.ChargeUnit,
                         "region": region, "zone": item.Zone,
                         **{k: getattr(item, k) for k in EXTRAS},
                         **{k: getattr(price, k) for k in kept}},
            **({} if item.Cpu is None else {"vcpus": item.Cpu}),
            **({} if item.Memory is None else {"memory": item.Memory, "memory_unit": "GB"}),
        )

