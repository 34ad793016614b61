"""火山引擎 Volcano Engine: the anonymous price API its ECS pricing page calls, GPU instances only.

Two requests, as fuzzbuster/ec2instances.info `volcengine/scrape.go` makes them (no key, headers
Origin/Referer of https://www.volcengine.com/pricing?product=ECS&tab=2):

1. `GET https://www.volcengine.com/anonymous-api/trade/price?Action=ListTemplate&Version=2020-01-01
   &TemplateCode=CLT7310571628986405164` (the ECS calculator template). Its `Result.List[]` holds
   `Template`, a JSON *string*: a nested specification tree whose ECS objects carry
   `ConfigurationCode`, `Region`, `AvailableZone` and `AbilityAttrs[{Ability, Value}]` (vcpu,
   memory, processor, ssd/hdd). An empty list, or a template with no ECS instance, fails the crawl.
2. `POST https://www.volcengine.com/anonymous-api/trade/price?Action=GetTable&Version=2020-01-01`
   with `{"TemplateCode": "CLT7310571628986405164"}`: `Result.TableList[].Rows[]` of
   `{Product, ConfigurationCode, ChargeItemCode, PriceInfoList[{Period, Times, Price}]}`
   (octopuszy-zhangyu/multi-cloud-docs-search `src/adapters/volcengine.ts`).

Both answers are Volcano Engine OpenAPI envelopes, `{ResponseMetadata: {RequestId, Action, Version,
..., Error?: {Code, Message}}, Result}` (volcengine.com/docs/6662/1288487): an `Error` sent with
HTTP 200, a missing `ResponseMetadata` or a missing list is a loud error, never "no offers".

* `ConfigurationCode` is the instance type, with `.month` appended for the prepaid row
  (`ecs.g3i.large.month`); `ChargeItemCode` ends in `_<region id>` (`ecs.g3i_large_cn-beijing`).
* `Period` "hourly" with `Times` 1 is 元/小时; "monthly" with `Times` 1 is 元/月. `Times` > 1 is
  the total for that many months (ec2instances.info reads Times 12 as one year): not an hourly or
  monthly price, skipped and counted (`volcengine_cn/multi_month_terms_skipped`). Another period
  goes on as written and is quarantined. `Price` is a decimal string or number, in CNY.
* The card of an instance family comes from GPU_FAMILIES below; its evidence is thin (see the
  table and data/snapshots/volcengine_cn/manifest.json `unverified`). A family the table lacks and
  the CPU naming rule does not match goes on with its name as the card text, so normalization
  quarantines it with a reason; a size the table lacks goes on with an unreadable GPU count.
  CPU families (`volcengine_cn/cpu_configurations_skipped`) and rows that are not instances
  (disks, images: `volcengine_cn/non_instance_rows_skipped`) are not GPU offers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from scrapy.http import Response

from spiders.base import JsonApiSpider
from spiders.base.json_api import checked_json, json_shape_problem
from spiders.items import RawOffer

PRICE_API = "https://www.volcengine.com/anonymous-api/trade/price"
TEMPLATE_CODE = "CLT7310571628986405164"
LIST_TEMPLATE_URL = (f"{PRICE_API}?Action=ListTemplate&Version=2020-01-01"
                     f"&TemplateCode={TEMPLATE_CODE}")
GET_TABLE_URL = f"{PRICE_API}?Action=GetTable&Version=2020-01-01"
HEADERS = {"Accept": "application/json", "Origin": "https://www.volcengine.com",
           "Referer": "https://www.volcengine.com/pricing?product=ECS&tab=2"}

# ECS family -> (card text, GPUs per size). Volcano Engine's own ECS MCP server names the GPU
# families (volcengine/mcp-server server/mcp_server_ecs/src/mcp_server_ecs/tools/instance.py:
# "GPU计算型: ecs.pni2(A100/A800)/g1v(V100)/g1ie(T4)", "高性能计算GPU型(hpc): ecs.hpcpni2/hpcg3ib");
# the memory and the GPUs per size are read from third-party veMLP job notes of the same family
# names (ml.pni2.3xlarge/7xlarge/14xlarge/28xlarge = 1/2/4/8 GPUs, ml.hpcpni2.28xlarge =
# "8 × Tesla-A100-80G"; ml.pni2l is the A800 family) and a third-party README (ecs.gni2.3xlarge
# "GPU: A10 x 1"). Volcano Engine's ECS instance-family pages (docs/6396/...) were not readable.
GPU_FAMILIES: dict[str, tuple[str, dict[str, int]]] = {
    "pni2": ("NVIDIA A100 80GB", {"3xlarge": 1, "7xlarge": 2, "14xlarge": 4, "28xlarge": 8}),
    "hpcpni2": ("NVIDIA A100 80GB", {"28xlarge": 8}),
    "gni2": ("NVIDIA A10 24GB", {"3xlarge": 1}),
    "g1ve": ("NVIDIA V100", {}),
    "g1ie": ("NVIDIA T4 16GB", {}),
}
# CPU families by the naming rule the same MCP server documents (ecs.<type><generation>[suffix]:
# g, c, r, i, d, hfg/hfc/hfr, s, t, ebmg/ebmc/ebmr, hpcc; "g2i-lm" variants). GPU_FAMILIES wins.
CPU_FAMILY = re.compile(r"(?:g|c|r|i|d|s|t|hf[gcr]|ebm[gcr]|hpcc)\d+[a-z]*(?:-[a-z]+)?")
# The gpu_count of a size GPU_FAMILIES does not list: normalization cannot read it and
# quarantines the offer with this text (the size is seen and added to the table, never guessed).
UNMAPPED_COUNT = "unknown: size not in GPU_FAMILIES (spiders/vendors/volcengine_cn.py)"
PERIODS = {"hourly": "hour", "monthly": "month"}
_INSTANCE = re.compile(r"ecs\.(?P<family>[a-z0-9-]+)\.(?P<size>[a-z0-9-]+)")


class VolcanoApiError(ValueError):
    """The API answered with an error envelope, or without the envelope or list it documents."""


def envelope_result(body: Any, action: str, url: str) -> dict:
    """`Result` of an OpenAPI envelope; an `Error` (even with HTTP 200) or no envelope is loud."""
    meta = body.get("ResponseMetadata") if isinstance(body, dict) else None
    if not isinstance(meta, dict):
        raise VolcanoApiError(f"volcengine_cn: {action} answer has no ResponseMetadata ({url})")
    if error := meta.get("Error"):
        code, message = (error.get("Code"), error.get("Message")) if isinstance(error, dict) \
            else (error, "")
        raise VolcanoApiError(f"volcengine_cn: {action} error {code}: {message} ({url})")
    result = body.get("Result")
    if not isinstance(result, dict):
        raise VolcanoApiError(f"volcengine_cn: {action} answer has no Result object ({url})")
    return result


def required_list(parent: dict, key: str, where: str) -> list:
    found = parent.get(key)
    if not isinstance(found, list):
        raise VolcanoApiError(f"volcengine_cn: no list {key!r} in {where}")
    return found


def walk_objects(value: Any) -> Iterable[dict]:
    """Every JSON object in `value`, depth first (the template's nesting is not documented)."""
    if isinstance(value, dict):
        yield value
        for child in value.values():
            yield from walk_objects(child)
    elif isinstance(value, list):
        for child in value:
            yield from walk_objects(child)


def instance_type(configuration_code: str) -> str:
    """"ecs.g3i.large.month" -> "ecs.g3i.large" (the prepaid row's code carries ".month")."""
    return configuration_code.removesuffix(".month")


def decoded_template(text: str, url: str) -> Any:
    """The Template string decoded, with the same refusal of pathological JSON as a body."""
    if (problem := json_shape_problem(text.encode("utf-8"))) is not None:
        raise VolcanoApiError(f"volcengine_cn: refused the ListTemplate Template ({url}): "
                              f"{problem}")
    try:
        return json.loads(text)
    except ValueError as exc:
        raise VolcanoApiError(f"volcengine_cn: the ListTemplate Template is not JSON ({url}): "
                              f"{exc}") from exc


def template_specs(result: dict, url: str) -> dict[str, dict]:
    """Instance type -> {abilities, regions, zones} from every template of a ListTemplate result."""
    templates = required_list(result, "List", f"ListTemplate Result ({url})")
    if not templates:
        raise VolcanoApiError(f"volcengine_cn: ListTemplate returned no template ({url})")
    specs: dict[str, dict] = {}
    for entry in templates:
        text = entry.get("Template") if isinstance(entry, dict) else None
        if not isinstance(text, str):
            raise VolcanoApiError(f"volcengine_cn: a ListTemplate entry has no Template ({url})")
        for obj in walk_objects(decoded_template(text, url)):
            code = obj.get("ConfigurationCode")
            if obj.get("Product") != "ECS" or not isinstance(code, str) \
                    or not _INSTANCE.fullmatch(instance_type(code)):
                continue
            spec = specs.setdefault(instance_type(code), {"abilities": {}, "regions": []})
            for ability in obj.get("AbilityAttrs") or []:
                if isinstance(ability, dict) and ability.get("Ability"):
                    spec["abilities"][ability["Ability"]] = ability.get("Value")
            if (region := obj.get("Region")) and region not in spec["regions"]:
                spec["regions"].append(region)
    if not specs:
        raise VolcanoApiError(f"volcengine_cn: the ECS template lists no instance type ({url})")
    return specs


def is_one(times: Any) -> bool:
    """`Times` is 1 (sent as 1, 1.0 or "1"): the price is for one hour or one month."""
    try:
        return not isinstance(times, bool) and float(times) == 1
    except (TypeError, ValueError):
        return False


def region_of(charge_item_code: str) -> str:
    """"ecs.g3i_large_cn-beijing" -> "cn-beijing"; a code without "_" is passed whole (it then
    matches no region and is quarantined with its text)."""
    return charge_item_code.rpartition("_")[2]


def gpu_card(family: str, size: str) -> tuple[str, int | str] | None:
    """(card text, GPUs) of a GPU family, None for a CPU family; an unknown family keeps its name
    as the card text (quarantined as no known card), an unknown size an unreadable count."""
    if family in GPU_FAMILIES:
        card, sizes = GPU_FAMILIES[family]
        return card, sizes.get(size, UNMAPPED_COUNT)
    if CPU_FAMILY.fullmatch(family):
        return None
    return f"ecs.{family} (family not in GPU_FAMILIES)", UNMAPPED_COUNT


class VolcengineCNSpider(JsonApiSpider):
    name = "volcengine_cn"
    vendor = "火山引擎 Volcano Engine"
    vendor_kind = "hyperscaler"
    start_urls = [LIST_TEMPLATE_URL]
    public_path = ("the anonymous price API of the ECS pricing page: ListTemplate, then GetTable "
                   "of template CLT7310571628986405164")
    min_offers = 10

    async def start(self):
        yield self.api_request(LIST_TEMPLATE_URL, headers=HEADERS, callback=self.parse_template)

    def parse_template(self, response: Response) -> Iterable[Any]:
        result = envelope_result(checked_json(response), "ListTemplate", response.url)
        specs = template_specs(result, response.url)
        yield self.api_request(GET_TABLE_URL, {"TemplateCode": TEMPLATE_CODE}, headers=HEADERS,
                               cb_kwargs={"specs": specs})

    def offers(self, body: Any, response: Response) -> list:
        result = envelope_result(body, "GetTable", response.url)
        tables = required_list(result, "TableList", f"GetTable Result ({response.url})")
        if not tables:
            raise VolcanoApiError(f"volcengine_cn: GetTable returned no table ({response.url})")
        rows = []
        for table in tables:
            if not isinstance(table, dict):
                raise VolcanoApiError(f"volcengine_cn: a TableList entry is not an object "
                                      f"({response.url})")
            rows.extend(required_list(table, "Rows", f"a GetTable table ({response.url})"))
        return rows

    def parse_offer(self, row: dict, response: Response,
                    specs: dict[str, dict] | None = None) -> Iterable[RawOffer]:
        stats = self.crawler.stats
        code, charge = row.get("ConfigurationCode"), row.get("ChargeItemCode")
        if not isinstance(code, str) or not isinstance(charge, str):
            raise VolcanoApiError(f"volcengine_cn: a GetTable row lacks ConfigurationCode or "
                                  f"ChargeItemCode: {row!r}")
        matched = _INSTANCE.fullmatch(instance_type(code))
        if not matched:     # disks, images, bandwidth: "system-EBS_ESSD_PL0.month", "SUSE.month"
            stats.inc_value("volcengine_cn/non_instance_rows_skipped")
            return
        card = gpu_card(matched["family"], matched["size"])
        if card is None:
            stats.inc_value("volcengine_cn/cpu_configurations_skipped")
            return
        gpu_text, gpu_count = card
        if gpu_count == UNMAPPED_COUNT:
            stats.inc_value("volcengine_cn/unmapped_gpu_configurations")
            self.logger.warning("volcengine_cn: %s is not in GPU_FAMILIES: its offers go to "
                                "quarantine", instance_type(code))
        prices = row.get("PriceInfoList")
        if not isinstance(prices, list):
            raise VolcanoApiError(f"volcengine_cn: row {code} has no PriceInfoList list")
        spec = (specs or {}).get(instance_type(code), {})
        for price in prices:
            if not isinstance(price, dict):
                raise VolcanoApiError(f"volcengine_cn: row {code} has a price that is not an "
                                      f"object: {price!r}")
            period, times = price.get("Period"), price.get("Times")
            if period in PERIODS and not is_one(times):
                stats.inc_value("volcengine_cn/multi_month_terms_skipped")
                continue
            amount = price.get("Price")
            yield self.offer(
                response, sku=instance_type(code), gpu_text=gpu_text, gpu_count=gpu_count,
                region_text=region_of(charge), offer_kind="on_demand",
                price_amount=None if amount in (None, "") else str(amount), currency="CNY",
                billing_period=PERIODS.get(period, period),
                available=None,
                vendor_data={"ConfigurationCode": code, "ChargeItemCode": charge,
                             "Product": row.get("Product"), "Period": period, "Times": times,
                             "abilities": spec.get("abilities", {}),
                             "template_regions": spec.get("regions", [])})
