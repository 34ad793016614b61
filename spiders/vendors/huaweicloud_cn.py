"""华为云 Huawei Cloud: ECS GPU flavors (cards and specs) from the public price calculator, priced
by the calculator (no key) or by the official BSS price inquiry (AK/SK).

Public path, as two public clients read it (fuzzbuster/ec2instances.info huaweicloud/scrape.go and
scrape_test.go @ ff76b4f907823ce479fc6b17e97876db6fbc9690; j0taaa/huaweicalculatorAPI
lib/catalog.ts, app/page.tsx @ d0161668edc2cac85892640f50b680ba865c9265):
  * GET menuInfo?sign=common&language=zh-cn: `menuInfos[]` (nested in `subCategoryLists`), the
    one with `urlPath` "ecs" lists its regions in `regionOnline.regionList`;
  * GET productInfo?urlPath=ecs&tag=general.online.portal&region=<r>&tab=calc&sign=common per
    region, with the calculator page's Origin and Referer: `product.ec2_vm[]`, one entry per
    flavor and image (`spec` "g6.2xlarge.4", `imageSpec` "linux"|"win", `cpu`, `mem`,
    `acceleratorCard` "2 * NVIDIA T4 / 2 * 16G", `localDisk`, `planList[{billingMode, periodNum,
    amount}]`). ONDEMAND is the hourly price, MONTHLY the monthly, YEARLY (periodNum 1) the
    yearly one (j0taaa labels them "Base hourly/monthly/yearly price"); RI ("1-year RI total
    price") is a reservation's total and is skipped, as are multi-year terms.
Keyed path (HUAWEICLOUD_SDK_AK / _SK / _PROJECT_ID, the names huaweicloudsdkcore's environment
provider reads): the same calculator catalog gives the flavors, and each region's GPU flavors
(resource spec "<flavor>.linux", as the BSS docs in huaweicloudsdkbss say) are priced by
ListOnDemandResourceRatings (1 hour) and ListRateOnPeriodDetail (1 month, 1 year): request
models from huaweicloudsdkbss.v2, signed by huaweicloudsdkcore (SDK-HMAC-SHA256), sent through
Scrapy to bss.myhuaweicloud.com, answers read through the SDK's response models. Either path
yields one price per flavor, region and term: the keyed one replaces the calculator's, never adds.
Not evidenced, hence in the manifest's `unverified`: the calculator's currency (the China site
is read as CNY) and its error body.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from huaweicloudsdkbss.v2 import (
    BssClient,
    DemandProductInfo,
    ListOnDemandResourceRatingsRequest,
    ListRateOnPeriodDetailRequest,
    PeriodProductInfo,
    RateOnDemandReq,
    RateOnPeriodReq,
)
from huaweicloudsdkbss.v2.region.bss_region import BssRegion
from huaweicloudsdkcore.auth.credentials import GlobalCredentials
from huaweicloudsdkcore.sdk_request import SdkRequest
from huaweicloudsdkcore.utils import http_utils
from scrapy.http import Response

from spiders.base import JsonApiSpider
from spiders.base.json_api import checked_json
from spiders.items import RawOffer

PORTAL = "https://portal.huaweicloud.com/api/calculator/rest/cbc/portalcalculatornodeservice/v4/api"
MENU_URL = f"{PORTAL}/menuInfo?sign=common&language=zh-cn"
PORTAL_HEADERS = {"Accept": "application/json", "Origin": "https://www.huaweicloud.com",
                  "Referer": "https://www.huaweicloud.com/pricing/calculator.html"}
BSS_ENDPOINT = BssRegion.CN_NORTH_1.endpoint       # https://bss.myhuaweicloud.com
CURRENCY = "CNY"            # the China site; the calculator body names no currency (unverified)


def product_url(region: str) -> str:
    return f"{PORTAL}/productInfo?urlPath=ecs&tag=general.online.portal&region={region}" \
           "&tab=calc&sign=common"


# billingMode -> (offer_kind, billing_period, the periodNum values read as that one period).
# MONTHLY is read whatever its periodNum (fuzzbuster does), YEARLY only for one year.
PLAN_TERMS: dict[str, tuple[str, str, frozenset]] = {
    "ONDEMAND": ("on_demand", "hour", frozenset({None, 1})),
    "MONTHLY": ("on_demand", "month", frozenset({None, 1})),
    "YEARLY": ("on_demand", "year", frozenset({1})),
}
SKIPPED_MODES = {"RI": "ri_plans_skipped"}   # a reservation's total price, not a term price
# cpu "8BSSUNIT.pluralUnit.23", mem "32BSSUNIT.pluralUnit.102": a number and the key of its unit
# word in the calculator's translations; fuzzbuster reads the number as vCPUs and GiB.
_UNIT_KEY_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*"
                          r"(?:BSSUNIT\.[A-Za-z]+\.\d+|dataInfo_\d+_)\s*$")


def has_accelerator(text: Any) -> bool:
    """Whether a flavor's `acceleratorCard` names an accelerator (absent, blank or "0": a CPU
    flavor). What it names, and how many, normalization reads (spiders/parsing/counts.py)."""
    return text is not None and str(text).strip() not in ("", "0")


def unit_text(text: Any, unit: str) -> str | None:
    """"8BSSUNIT.pluralUnit.23" -> "8 vCPUs" (unit given by the field); other text as written."""
    if text in (None, ""):
        return None
    m = _UNIT_KEY_RE.match(str(text))
    return f"{m.group(1)} {unit}" if m else str(text)


def ecs_regions(menu_items: Any) -> list[str]:
    """The regions of the ECS entry of the calculator menu (searched through subcategories)."""
    for item in menu_items if isinstance(menu_items, list) else ():
        if not isinstance(item, dict):
            continue
        if item.get("urlPath") == "ecs":
            return list((item.get("regionOnline") or {}).get("regionList") or [])
        if found := ecs_regions(item.get("subCategoryLists")):
            return found
    return []


def bss_inquiries(project_id: str, region: str, specs: list[str]) -> list[tuple[str, Any]]:
    """(billing period, SDK request) of the three BSS inquiries for one region's flavors; the
    product ids are positions ("1", "2", ...), as in the BSS documentation's examples."""
    common = {"cloud_service_type": "hws.service.type.ec2", "resource_type": "hws.resource.type.vm",
              "region": region, "subscription_num": 1}
    hourly = [DemandProductInfo(id=str(i), resource_spec=f"{spec}.linux", usage_factor="Duration",
                                usage_value=1, usage_measure_id=4, **common)   # 4: hour
              for i, spec in enumerate(specs, 1)]

    def period(period_type: int) -> RateOnPeriodReq:                 # 2: month, 3: year
        return RateOnPeriodReq(project_id=project_id, product_infos=[
            PeriodProductInfo(id=str(i), resource_spec=f"{spec}.linux", period_type=period_type,
                              period_num=1, **common) for i, spec in enumerate(specs, 1)])
    return [
        ("hour", ListOnDemandResourceRatingsRequest(
            body=RateOnDemandReq(project_id=project_id, product_infos=hourly))),
        ("month", ListRateOnPeriodDetailRequest(body=period(2))),
        ("year", ListRateOnPeriodDetailRequest(body=period(3))),
    ]


def http_info(request: Any) -> dict:
    """The SDK's own description of a request model's call (method, path, body, response type)."""
    name = {ListOnDemandResourceRatingsRequest: "_list_on_demand_resource_ratings_http_info",
            ListRateOnPeriodDetailRequest: "_list_rate_on_period_detail_http_info"}[type(request)]
    return getattr(BssClient, name)(request)


def signed(info: dict, credentials: dict[str, str]) -> tuple[str, dict[str, str], str]:
    """(URL, headers, JSON body) of one BSS call, signed by huaweicloudsdkcore's signer. The body
    is canonical JSON (sorted keys): the replay key; the signature lives in the headers only."""
    body = json.dumps(http_utils.sanitize_for_serialization(info["body"]), sort_keys=True,
                      separators=(",", ":"))
    host = BSS_ENDPOINT.removeprefix("https://")
    sdk_request = SdkRequest(method=info["method"], schema="https", host=host,
                             resource_path=info["resource_path"], query_params=[],
                             header_params=dict(info["header_params"]), body=body)
    domain_id = os.environ.get("HUAWEICLOUD_SDK_DOMAIN_ID") or None   # optional
    GlobalCredentials(credentials["HUAWEICLOUD_SDK_AK"], credentials["HUAWEICLOUD_SDK_SK"],
                      domain_id).sign_request(sdk_request)
    headers = {k: str(v) for k, v in sdk_request.header_params.items()}
    return f"{BSS_ENDPOINT}{sdk_request.uri}", headers, body


def bss_results(data: Any, response_type: str) -> tuple[list, str]:
    """(product rating results, currency) of a BSS answer read through the SDK's response model;
    an error body, or one without results, is a loud error."""
    if not isinstance(data, dict) or "error_code" in data:
        raise ValueError(f"BSS price inquiry failed: {data!r:.300}")
    model = BssClient()._deserialize(data, response_type)
    rated = model.official_website_rating_result if response_type.startswith("ListRate") \
        else model
    results = getattr(rated, "product_rating_results", None)
    if not isinstance(results, list):
        raise ValueError(f"BSS answer without product_rating_results: {data!r:.300}")
    if getattr(rated, "measure_id", 1) not in (None, 1):   # 1: yuan (the SDK's docs)
        raise ValueError(f"BSS answer in an unknown measure {rated.measure_id!r}")
    return results, model.currency or CURRENCY   # empty currency means CNY (the SDK's docs)


class HuaweiCloudCnSpider(JsonApiSpider):
    name = "huaweicloud_cn"
    vendor = "华为云 Huawei Cloud"
    vendor_kind = "hyperscaler"
    start_urls = [MENU_URL]
    offers_path = "product.ec2_vm"
    key_envs = ("HUAWEICLOUD_SDK_AK", "HUAWEICLOUD_SDK_SK", "HUAWEICLOUD_SDK_PROJECT_ID")
    public_path = "the public price calculator's ECS catalog and plan prices, per region"
    keyed_path = ("the calculator's ECS catalog priced by the signed BSS price inquiry "
                  "(huaweicloudsdkbss)")
    min_offers = 20

    async def start(self):
        yield self.request(MENU_URL, callback=self.parse_menu, headers=PORTAL_HEADERS)

    def parse_menu(self, response: Response) -> Iterable[Any]:
        body = checked_json(response)
        regions = ecs_regions(body.get("menuInfos") if isinstance(body, dict) else None)
        if not regions:
            raise ValueError(f"{self.name}: no ECS regions in the calculator menu {response.url}")
        for region in regions:
            yield self.request(product_url(region), headers=PORTAL_HEADERS,
                               cb_kwargs={"region": region})

    def offers(self, body: Any, response: Response) -> list:
        if not isinstance(body, dict) or not isinstance(body.get("product"), dict):
            keys = sorted(body) if isinstance(body, dict) else type(body).__name__
            raise ValueError(f"{self.name}: no product catalog in {response.url} ({keys})")
        vms = self.list_at(body, self.offers_path, response)
        if vms and not any(isinstance(vm, dict) and "acceleratorCard" in vm for vm in vms):
            raise ValueError(f"{self.name}: no flavor has an acceleratorCard in {response.url}")
        return vms

    def parse(self, response: Response, region: str = "", **_: Any) -> Iterable[Any]:
        body = checked_json(response)
        if isinstance(body, dict) and body.get("region") not in (None, "", region):
            raise ValueError(f"{self.name}: asked for {region}, got {body['region']!r}")
        gpu_flavors = [vm for vm in self.offers(body, response) if self.is_gpu_linux(vm)]
        if (credentials := self.credentials()) is None:
            for vm in gpu_flavors:
                yield from self.plan_offers(vm, response, region)
            return
        if not gpu_flavors:
            return
        specs = [vm["spec"] for vm in gpu_flavors]
        for period, sdk_request in bss_inquiries(credentials["HUAWEICLOUD_SDK_PROJECT_ID"],
                                                 region, specs):
            info = http_info(sdk_request)
            url, headers, body_text = signed(info, credentials)
            yield self.request(url, callback=self.parse_bss, method=info["method"],
                               headers=headers, body=body_text,
                               cb_kwargs={"region": region, "period": period,
                                          "response_type": info["response_type"],
                                          "flavors": gpu_flavors})

    def is_gpu_linux(self, vm: dict) -> bool:
        """A Linux flavor with an accelerator card; what is not is counted (never an offer)."""
        if vm["imageSpec"] != "linux":
            self.crawler.stats.inc_value(f"{self.name}/non_linux_images_skipped")
            return False
        if not has_accelerator(vm.get("acceleratorCard")):
            self.crawler.stats.inc_value(f"{self.name}/cpu_flavors_skipped")
            return False
        return True

    def plan_offers(self, vm: dict, response: Response, region: str) -> Iterable[RawOffer]:
        if not vm["planList"]:   # listed without a price: nothing is for sale there
            self.crawler.stats.inc_value(f"{self.name}/flavors_without_plans")
        for plan in vm["planList"]:
            mode, period_num, amount = plan["billingMode"], plan.get("periodNum"), plan["amount"]
            if mode in SKIPPED_MODES:
                self.crawler.stats.inc_value(f"{self.name}/{SKIPPED_MODES[mode]}")
                continue
            if mode not in PLAN_TERMS:
                self.crawler.stats.inc_value(f"{self.name}/unknown_billing_modes")
                self.logger.warning("%s: billing mode %r of %s is not read", self.name, mode,
                                    vm["spec"])
                continue
            kind, period, one_period = PLAN_TERMS[mode]
            if period_num not in one_period:
                self.crawler.stats.inc_value(f"{self.name}/multi_period_plans_skipped")
                continue
            if amount is None or Decimal(str(amount)) <= 0:
                self.crawler.stats.inc_value(f"{self.name}/plans_without_price")
                continue
            yield self.flavor_offer(vm, response, region, kind, period, Decimal(str(amount)),
                                    CURRENCY, {"billingMode": mode, "periodNum": period_num,
                                               "price_from": "calculator"})

    def parse_bss(self, response: Response, region: str, period: str, response_type: str,
                  flavors: list[dict]) -> Iterable[RawOffer]:
        checked_json(response)   # refuses a pathological body before the models read it
        results, currency = bss_results(json.loads(response.text, parse_float=Decimal),
                                        response_type)
        by_id = {r.id: r for r in results}
        for position, vm in enumerate(flavors, 1):
            rated = by_id.get(str(position))
            if rated is None or rated.official_website_amount is None:
                self.crawler.stats.inc_value(f"{self.name}/bss_unrated_flavors")
                continue
            yield self.flavor_offer(vm, response, region, "on_demand", period,
                                    Decimal(str(rated.official_website_amount)), currency,
                                    {"price_from": "bss", "bss_product_id": rated.product_id})

    def flavor_offer(self, vm: dict, response: Response, region: str, kind: str, period: str,
                     amount: Decimal, currency: str, extra: dict) -> RawOffer:
        disk = vm.get("localDisk")
        return self.offer(
            # "2 * NVIDIA T4 / 2 * 16G" as written: normalization reads the card and the count
            response, sku=vm["spec"], gpu_text=str(vm["acceleratorCard"]),
            accelerator_text=str(vm["acceleratorCard"]), region_text=region,
            offer_kind=kind, price_amount=str(amount), currency=currency, billing_period=period,
            available=None,     # a calculator price does not say there is capacity (fuzzbuster)
            vcpus_text=unit_text(vm.get("cpu"), "vCPUs"),
            memory_text=unit_text(vm.get("mem"), "GiB"),
            disk_text=disk if disk not in (None, "", "0") else None,
            vendor_data={"resourceSpecCode": vm.get("resourceSpecCode"),
                         "acceleratorCard": vm["acceleratorCard"], **extra},
        )
