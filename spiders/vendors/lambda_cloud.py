"""Lambda (lambda.ai): the public GPU instances price table, or the keyed instance-types API.

Without LAMBDA_API_KEY the spider reads the public page https://lambda.ai/instances. Its texts
and prices are grounded in a dated third-party transcription of that page
(api-evangelist/lambda-labs plans/lambda-labs-plans-pricing.yml @ 1929382e, 2026-09-20: "every
price_text was found verbatim in the fetched page text"): plans named "8x NVIDIA H100 SXM" with
a bare "$3.99" whose unit is "per GPU per hour" ("GPU instance hourly pricing per GPU"). So every
page price is one GPU's, "/ GPU" written or not, and an 8x instance costs 8 times it. The page's
MARKUP is a guess (table.pricing-table with Instance type / VRAM / GPU / vCPUs / RAM / Storage /
Price headers): the transcription quotes texts, not HTML; the manifest says so. Lambda charges the
same price in every region and the page names none, so page offers carry region "us" (country
only: most Lambda regions are in the US; an assumption, not a per-region price).

With the key, the API (GET https://cloud.lambdalabs.com/api/v1/instance-types, Bearer key;
gpuhunt, SkyPilot, an SDK generated from Lambda's spec) lists the regions with capacity right now:
one offer per such region, and an instance type with no capacity anywhere keeps its price as one
"us" offer with available=False. price_cents_per_hour is the whole instance's.

Every GPU instance is yielded (A100, H100, A10, GH200, B200, V100 ...): which cards are read is
normalization's decision, from spiders/parsing/card_catalog.csv. An API instance type without GPUs
(specs.gpus == 0) is no GPU offer: skipped, counted in the stat `lambda_cloud/cpu_only_skipped`.

Machine specs: vcpus_text, memory_text and disk_text from the page's vCPUs, RAM and Storage
columns, or the API's specs.vcpus, specs.memory_gib and specs.storage_gib (the instance's).
"""

from __future__ import annotations

from collections.abc import Iterable

from scrapy.http import Response

from spiders.base import HtmlTableSpider
from spiders.base.json_api import checked_json
from spiders.items import RawOffer

PAGE_URL = "https://lambda.ai/instances"
API_URL = "https://cloud.lambdalabs.com/api/v1/instance-types"
# The page's machine columns, read when present: a layout without them still yields its prices.
MACHINE_HEADERS = {"vcpus_text": "vCPUs", "memory_text": "RAM", "disk_text": "Storage"}


class LambdaCloudSpider(HtmlTableSpider):
    name = "lambda_cloud"
    vendor = "Lambda"
    vendor_kind = "gpu_cloud"
    api_key_env = "LAMBDA_API_KEY"
    key_envs = ("LAMBDA_API_KEY",)
    public_path = ("the public instances page lambda.ai/instances (texts and per-GPU prices as "
                   "transcribed; markup a guess)")
    keyed_path = "the instance-types API (prices per instance, regions with capacity now)"
    start_urls = [PAGE_URL]
    rows = "table.pricing-table tbody tr"
    columns = {"gpu_text": "Instance type", "vram_gb": "VRAM / GPU"}
    prices = {"hour": "Price"}
    region = "us"
    min_offers = 5

    async def start(self):
        if key := self.api_key():
            yield self.request(API_URL, callback=self.parse_api,
                               headers={"Authorization": f"Bearer {key}"})
        else:
            yield self.request(PAGE_URL)

    def parse_row(self, cells: dict[str, str], response: Response) -> Iterable[RawOffer]:
        instance = cells.get("Instance type", "")
        # the whole instance's, with units as written ("30", "200 GiB", "512 GiB SSD")
        machine = {field: cells.get(header) or None for field, header in MACHINE_HEADERS.items()}
        # "8x NVIDIA H100 SXM" and "$3.99" as written: normalization reads the count and the
        # price. Every page price is one GPU's per hour, bare ("$3.99") or not ("$3.99 / GPU /
        # hr"); the API quotes the instance, so the row lists the instance's price (3.99 x 8 =
        # 31.92: price_of_machine) and page and API rows list one amount for one instance.
        yield self.offer(response, sku=instance, gpu_text=instance, vram_gb=cells.get("VRAM / GPU"),
                         region_text=self.region, offer_kind="on_demand",
                         price_text=cells.get("Price", ""), billing_period="hour",
                         price_per_card=True, price_of_machine=True, available=None,
                         vendor_data={"row": cells}, **machine)

    def parse_api(self, response: Response) -> Iterable[RawOffer]:
        data = checked_json(response).get("data")
        if not isinstance(data, dict):
            raise ValueError(f"lambda_cloud: no 'data' object in {response.url}: "
                             f"{response.text[:200]}")
        for name, entry in data.items():
            itype = entry["instance_type"]
            specs = itype.get("specs") or {}
            gpus = specs.get("gpus")
            if gpus == 0:
                self.crawler.stats.inc_value("lambda_cloud/cpu_only_skipped")
                continue
            # "8x A100 (80 GB SXM4)" as written, beside specs.gpus: normalization reads the
            # count the text writes and holds it against the served one
            cents = itype["price_cents_per_hour"]
            regions = entry.get("regions_with_capacity_available") or []
            machine = api_machine(specs)
            for region, available in [(r["name"], True) for r in regions] or [(self.region, False)]:
                yield self.offer(
                    response, sku=name, gpu_text=itype["description"], gpu_count=gpus,
                    region_text=region,
                    offer_kind="on_demand",
                    price_amount=cents, price_unit="cents", currency="USD", billing_period="hour",
                    available=available, **machine,
                    vendor_data={"description": itype["description"], "specs": itype.get("specs"),
                                 "regions": regions})


def api_machine(specs: dict) -> dict[str, object]:
    """The instance's vcpus, memory and disk from the API's specs as served, with the unit each
    field is documented in (memory_gib and storage_gib are GiB)."""
    said: dict[str, object] = {}
    for field, name, unit in (("vcpus", "vcpus", None), ("memory_gib", "memory", "GiB"),
                              ("storage_gib", "disk", "GiB")):
        if specs.get(field) not in (None, ""):
            said[name] = specs[field]
            if unit:
                said[f"{name}_unit"] = unit
    return said
