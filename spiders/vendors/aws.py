"""Amazon Web Services: A100 (p4d/p4de) and H100 (p5) instances, on-demand and spot, no key.

On-demand comes from the public bulk price list, one CSV per region. The real files are hundreds
of MB (every instance, OS, tenancy and term), hence the long timeout; the rows are filtered here.
Spot comes from spot.js, the JSONP file behind AWS's Spot pricing page (its shape is unverified).

Neither source is a JSON body or an HTML table, so this spider builds on GpuPriceSpider, not on
JsonApiSpider or HtmlTableSpider: a CSV whose header follows metadata lines, and a JavaScript
callback wrapping JSON whose offers sit three levels deep (region, instance family, size).

Machine specs: vcpus_text, memory_text and disk_text from the CSV's vCPU, Memory and Storage
columns (on-demand offers only; spot.js lists prices, no specs).
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable

from scrapy.http import Response

from spiders.base import GpuPriceSpider
from spiders.items import RawOffer

ON_DEMAND_URL = ("https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/"
                 "{}/index.csv")
SPOT_URL = "https://spot-price.s3.amazonaws.com/spot.js"
# The reference catalog's regions with these instances; 8 of its 15, to keep the snapshot small
# (spot.js covers every region in one file anyway).
REGIONS = ["us-east-1", "us-east-2", "us-west-2", "eu-central-1", "eu-west-2",
           "ap-northeast-1", "ap-northeast-2", "ap-south-1"]
# Instance type -> (card as AWS documents it, cards per instance)
INSTANCES: dict[str, tuple[str, int]] = {
    "p4d.24xlarge": ("A100 40GB SXM4", 8),
    "p4de.24xlarge": ("A100 80GB SXM4", 8),
    "p5.48xlarge": ("H100 80GB SXM5", 8),
    "p5.4xlarge": ("H100 80GB SXM5", 1),
}
# A plain Linux box on shared hardware, billed per hour: no Windows/SQL licence, no Dedicated or
# Host tenancy, no capacity-reservation rows, no Reserved terms or Capacity Blocks.
ON_DEMAND_ROW = {"TermType": "OnDemand", "Operating System": "Linux", "Tenancy": "Shared",
                 "Pre Installed S/W": "NA", "CapacityStatus": "Used", "MarketOption": "OnDemand",
                 "Unit": "Hrs"}
# Storage is "8 x 1000 SSD": drives times a size the price list writes without its unit, GB (the
# instance-store figures AWS's instance type pages give in GB); "EBS only" is no local disk.
STORAGE_RE = re.compile(r"\s*(\d+\s*x\s*\d+(?:\.\d+)?)\s*(.*)")


def storage_text(storage: str | None) -> str | None:
    """The local disk with its unit: "8 x 1000 SSD" -> "8 x 1000 GB SSD"; "EBS only" -> None."""
    match = STORAGE_RE.fullmatch(storage or "")
    if match is None:
        return None
    if re.match(r"[GT]i?B\b", match[2]):   # a unit already written: keep the text
        return storage.strip()
    return f"{match[1]} GB {match[2]}".strip()


class AwsSpider(GpuPriceSpider):
    name = "aws"
    vendor = "Amazon Web Services"
    vendor_kind = "hyperscaler"
    min_offers = 30
    custom_settings = {"DOWNLOAD_TIMEOUT": 300, "DOWNLOAD_WARNSIZE": 0, "DOWNLOAD_MAXSIZE": 2**31}

    async def start(self):
        for region in REGIONS:
            yield self.request(ON_DEMAND_URL.format(region), callback=self.parse_on_demand)
        yield self.request(SPOT_URL, callback=self.parse_spot)

    def parse_on_demand(self, response: Response) -> Iterable[RawOffer]:
        # Decoded from bytes: the file may come as binary/octet-stream (not a TextResponse).
        lines = response.body.decode("utf-8-sig").splitlines()
        # A few '"FormatVersion","v1.0"'-style metadata lines precede the header.
        start = next((i for i, line in enumerate(lines) if line.startswith('"SKU",')), None)
        if start is None:
            raise ValueError(f"aws: no CSV header starting with SKU in {response.url}")
        for row in csv.DictReader(lines[start:]):
            card = INSTANCES.get(row["Instance Type"])
            if card is None or any(row.get(k) != v for k, v in ON_DEMAND_ROW.items()):
                continue
            yield self._offer(response, row["Instance Type"], row["Region Code"], "on_demand",
                              row["PricePerUnit"], row["Currency"],
                              {k: row[k] for k in ("SKU", "Location", "GPU", "GPU Memory")},
                              # vCPU is a count; Memory carries its unit ("1152 GiB")
                              vcpus_text=row.get("vCPU") or None,
                              memory_text=row.get("Memory") or None,
                              disk_text=storage_text(row.get("Storage")))

    def parse_spot(self, response: Response) -> Iterable[RawOffer]:
        # JSONP: callback({...}); -> the JSON inside the outermost parentheses.
        match = re.search(r"\((.*)\)\s*;?\s*$", response.text, re.S)
        if match is None:
            raise ValueError(f"aws: spot.js is not a callback(...) wrapper at {response.url}")
        for region in json.loads(match.group(1))["config"]["regions"]:
            for group in region["instanceTypes"]:
                for size in group["sizes"]:
                    prices = {c["name"]: c["prices"]["USD"] for c in size["valueColumns"]}
                    # "N/A*": no spot market for this type here (the recorded file also says so
                    # where every AZ's spot price equalled on-demand, i.e. no real spot price).
                    linux = prices.get("linux", "")
                    if size["size"] in INSTANCES and re.fullmatch(r"\d+(\.\d+)?", linux):
                        yield self._offer(response, size["size"], region["region"], "spot",
                                          linux, "USD", {"type": group["type"]})

    def _offer(self, response: Response, instance: str, region: str, kind: str, price: str,
               currency: str, extra: dict, **machine: str | None) -> RawOffer:
        gpu_text, gpu_count = INSTANCES[instance]
        return self.offer(response, sku=instance, gpu_text=gpu_text, gpu_count=gpu_count,
                          region_text=region, offer_kind=kind, price_amount=price,
                          currency=currency, billing_period="hour",
                          price_text=f"{price} {currency}/hour", available=None,
                          vendor_data=extra, **machine)
